package webhooks

import (
	"cmp"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Fan-out and ordering: an event is stored once and run once per job, a
// job being the event's work for one named handler. A host with one
// handler has one job per event, of the default handler "", and writes
// nothing about jobs (see Handlers for several).

// JobKey identifies a job: an event (its InboxKey) and the handler it is
// run for ("" is the default handler).
type JobKey struct {
	InboxKey
	Handler string
}

// String returns "provider/tenant/eventID" for the default handler's job
// and "provider/tenant/eventID@handler" for another's, for logs.
func (k JobKey) String() string {
	if k.Handler == "" {
		return k.InboxKey.String()
	}
	return k.InboxKey.String() + "@" + k.Handler
}

// Compare orders job keys by their InboxKey (see InboxKey.Compare), then
// by handler, byte-wise; it returns -1, 0 or +1.
func (k JobKey) Compare(o JobKey) int {
	return cmp.Or(k.InboxKey.Compare(o.InboxKey), cmp.Compare(k.Handler, o.Handler))
}

// Job is one job an event is stored with: the handler it is for, whether
// that handler runs the jobs of one ordering key one at a time, in order
// (see Ordering), and the job's priority among the handler's due jobs
// (see Handler.TypePriorities), kept with the job when it is stored.
type Job struct {
	Handler  string
	Ordered  bool
	Priority int
}

// Ordering is where an event stands among the events of one object: Key
// names the object (a Stripe customer, a GitHub pull request), and Version
// is the provider's occurrence order within it, in microseconds of the
// provider's time or a counter the provider increments, 0 when the event
// carries none. Ordered handlers run the jobs of one key one at a time, in
// (Version, arrival) order; a Key of "" puts the event in no key, and its
// jobs run in parallel with everything. Keys and versions are read from
// the signed content only: an unsigned input never decides the order
// (see EventSource.Order).
type Ordering struct {
	Key     string
	Version int64
}

// Bounds of an Envelope's jobs.
const (
	// MaxHandlers is the most jobs one event may have, and the most
	// handlers a Processor may run.
	MaxHandlers = 32
	// MaxOrderingKeyBytes is the longest ordering key, in bytes.
	MaxOrderingKeyBytes = 512
	maxHandlerNameBytes = 63
)

// CheckHandlerName reports a handler name that is neither "" (the default
// handler) nor 1 to 63 bytes of lower-case ASCII letters, digits, '.', '_'
// and '-', starting with a letter or a digit. Names are stored with every
// job and shown to operators, so they are short and plain.
func CheckHandlerName(name string) error {
	if name == "" {
		return nil
	}
	if len(name) > maxHandlerNameBytes {
		return fmt.Errorf("webhooks: handler name %.70q is longer than %d bytes", name, maxHandlerNameBytes)
	}
	for i := range len(name) {
		c := name[i]
		lowerOrDigit := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !lowerOrDigit && (i == 0 || c != '.' && c != '_' && c != '-') {
			return fmt.Errorf("webhooks: handler name %q: use lower-case letters, digits, '.', '_' and '-', starting with a letter or a digit", name)
		}
	}
	return nil
}

// CheckOrdering reports an ordering key that is not valid UTF-8, holds a
// NUL byte or is longer than MaxOrderingKeyBytes, or a negative version,
// so that every store can keep it as it is.
func CheckOrdering(o Ordering) error {
	switch {
	case len(o.Key) > MaxOrderingKeyBytes:
		return fmt.Errorf("webhooks: ordering key of %d bytes; at most %d (webhooks.MaxOrderingKeyBytes)", len(o.Key), MaxOrderingKeyBytes)
	case !utf8.ValidString(o.Key):
		return errors.New("webhooks: ordering key is not valid UTF-8")
	case containsNUL(o.Key):
		return errors.New("webhooks: ordering key holds a NUL byte")
	case o.Version < 0:
		return fmt.Errorf("webhooks: ordering version %d is negative; give 0 for none", o.Version)
	}
	return nil
}

func containsNUL(s string) bool {
	for i := range len(s) {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

// CheckJobs reports what makes env's jobs and ordering invalid, for a
// store to refuse the envelope before storing anything: a handler name
// CheckHandlerName refuses, a handler named twice, more than MaxHandlers
// jobs, a priority outside [0, MaxTypePriority], a non-nil empty Jobs
// (an event with no job would be stored for nothing: the Receiver stores
// no such event), or an Ordering
// CheckOrdering refuses. Nil Jobs is the default handler's one unordered
// job.
func (env *Envelope) CheckJobs() error {
	if env.Jobs != nil && len(env.Jobs) == 0 {
		return fmt.Errorf("webhooks: envelope %s has an empty, non-nil Jobs; give nil for the default handler's job", env.Key)
	}
	if len(env.Jobs) > MaxHandlers {
		return fmt.Errorf("webhooks: envelope %s has %d jobs; at most %d (webhooks.MaxHandlers)", env.Key, len(env.Jobs), MaxHandlers)
	}
	for i, j := range env.Jobs {
		if err := CheckHandlerName(j.Handler); err != nil {
			return fmt.Errorf("envelope %s: %w", env.Key, err)
		}
		if j.Priority < 0 || j.Priority > MaxTypePriority {
			return fmt.Errorf("webhooks: envelope %s: the job of handler %q has priority %d; it must be from 0 to %d (webhooks.MaxTypePriority)",
				env.Key, j.Handler, j.Priority, MaxTypePriority)
		}
		for _, k := range env.Jobs[:i] {
			if k.Handler == j.Handler {
				return fmt.Errorf("webhooks: envelope %s names handler %q twice", env.Key, j.Handler)
			}
		}
	}
	if err := CheckOrdering(env.Ordering); err != nil {
		return fmt.Errorf("envelope %s: %w", env.Key, err)
	}
	return nil
}

// EnvelopeJobs returns env's jobs: env.Jobs, or the default handler's one
// unordered job when it is nil.
func EnvelopeJobs(env *Envelope) []Job {
	if env.Jobs == nil {
		return []Job{{}}
	}
	return env.Jobs
}

// FanOutStore is an optional InboxStore capability: a store that keeps
// one job per handler of an event, and may run the jobs of ordered
// handlers in key order. NewProcessor and NewReceiver refuse, when they
// are built, a configuration the store does not support, so nothing is
// ever run out of order or dropped for want of a capability. A store
// without it keeps one job per event, of the default handler.
type FanOutStore interface {
	FanOut() FanOutSupport
}

// FanOutSupport says what a FanOutStore does.
type FanOutSupport struct {
	// Handlers: the store keeps one job per entry of Envelope.Jobs, each
	// with its own state, attempts, history, dead letter and audit; an
	// acquisition leases only the jobs of AcquireRequest.Handler; a
	// settlement, an extension and a start are fenced by the lease's job
	// (key and handler) and token. A duplicate delivery adds no job.
	Handlers bool
	// OrderingKeys: of the ordered jobs (Job.Ordered) of one handler,
	// provider, tenant and Ordering.Key, at most one is pending or leased
	// at a time (the key's head); the others are StateWaiting and become
	// pending one at a time, in (Ordering.Version, arrival) order, when
	// the head succeeds or is dead-lettered. A retried, abandoned or
	// crashed head keeps its key. A job that becomes the head while an
	// earlier dead letter of its key is neither replayed nor closed has
	// Item.Overtook set. Lease.Applied is the newest version that
	// succeeded, not skipped (FailureSkipped), for the key.
	OrderingKeys bool
}

// FanOutOf returns what store supports: its FanOut, or nothing when it
// is not a FanOutStore.
func FanOutOf(store any) FanOutSupport {
	if f, ok := store.(FanOutStore); ok {
		return f.FanOut()
	}
	return FanOutSupport{}
}

// ErrSkipped is wrapped by the error Skip returns.
var ErrSkipped = errors.New("webhooks: event skipped as stale")

// Skip is a handler's answer to an event it does not apply because a newer
// one of its ordering key was applied already (Event.Applied is at least
// its Ordering.Version). The Processor settles the job as succeeded, its
// attempt noted FailureSkipped with reason, and the key's applied version
// stays as it was.
func Skip(reason string) error {
	if reason == "" {
		return ErrSkipped
	}
	return fmt.Errorf("%w: %s", ErrSkipped, reason)
}
