package webhooks

import "context"

// WakeSource tells a Processor that new work may be due, so idle workers do
// not wait for the next poll. pgstore's LISTEN/NOTIFY listener is one.
//
// Listen blocks until ctx is done, calling wake whenever work may be due; it
// must not block inside wake's caller for long and should reconnect by itself
// after connection failures. Wake-ups are hints: a missed one only delays work
// until the next poll, so correctness never depends on them. If Listen returns
// before ctx is done the Processor logs the error and keeps polling.
type WakeSource interface {
	Listen(ctx context.Context, wake func()) error
}

// Waker is told when a webhook was enqueued in-process. *Processor implements
// it; pass it to the Gateway with WithWaker.
type Waker interface {
	Wake()
}
