//go:build unix

package faulttest

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// slowReader hands out its bytes a chunk at a time, pausing before each,
// as a slow or hostile sender does.
type slowReader struct {
	r     *bytes.Reader
	chunk int
	pause time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.pause)
	return s.r.Read(p[:min(len(p), s.chunk)])
}

// TestFloodOfLargeSlowBodies sends a node many concurrent deliveries of
// bodies near the 1 MiB limit, each trickling in. Past WithMaxInFlight the
// node answers 503 with Retry-After at once, without reading the body, so
// its resident memory grows by what its in-flight requests hold, not by
// what the flood sends; the deliveries it took are stored.
func TestFloodOfLargeSlowBodies(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	in := newInbox(t, dsn)
	var senders = scale(100, 400)
	const (
		maxInFlight = 8
		bodySize    = 1<<20 - 1<<10
		// A request in flight costs the node some 17 MiB at its peak
		// under the race detector (the body, its copies on the way to
		// PostgreSQL and back to a handler, and their shadow memory), so 8
		// of them about 130 MiB; the 100 of the short flood, unshed, took
		// 1.5 GiB.
		maxGrowth = 400 << 20
	)
	n := startNode(t, nodeConfig{DSN: dsn, Schema: in.schema, Name: "flooded", MaxInFlight: maxInFlight})
	p := newProvider(t)
	for i := range 4 { // warm up: pools, buffers, the runtime's heap
		require.Equal(t, http.StatusAccepted, p.send(n.url, newDelivery(fmt.Sprint("warm-", i), "order.created")).Code)
	}
	base := n.rss(t)

	body := bytes.Repeat([]byte("a"), bodySize)
	copy(body, `{"pad":"`)
	copy(body[len(body)-2:], `"}`)
	var (
		peak         atomic.Int64
		shed, stored atomic.Int64
		mu           sync.Mutex
		storedIDs    []string
		wg           sync.WaitGroup
		done         = make(chan struct{})
		sampled      = make(chan struct{})
		sampleErr    error // the sampler's; read once sampled is closed
	)
	go func() {
		// Not n.rss: t.Fatal and t.Skip belong to the test's goroutine.
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			r, err := n.readRSS()
			if err != nil {
				sampleErr = err
				return
			}
			if r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	for i := range senders {
		wg.Go(func() {
			d := delivery{ID: fmt.Sprintf("big-%04d", i), Type: "order.created", Body: body}
			a := p.sendBody(n.url, d, &slowReader{r: bytes.NewReader(body), chunk: 64 << 10, pause: 20 * time.Millisecond})
			switch {
			case a.Code == http.StatusServiceUnavailable:
				assert.Equal(t, "5", a.RetryAfter)
				assert.Less(t, a.Took, 5*time.Second, "a shed request is answered at once")
				shed.Add(1)
			case a.Err != nil:
				// Shed while still sending: the node closed the
				// connection without reading the rest.
				shed.Add(1)
			case a.Code == http.StatusAccepted:
				stored.Add(1)
				mu.Lock()
				storedIDs = append(storedIDs, d.ID)
				mu.Unlock()
			default:
				t.Errorf("delivery %s: answer %d", d.ID, a.Code)
			}
		})
	}
	wg.Wait()
	close(done)
	<-sampled
	require.NoError(t, sampleErr, "sampling the node's resident memory")
	growth := peak.Load() - base
	t.Logf("%d senders of %d KiB bodies in %v: %d stored, %d shed; node resident memory %d MiB, peak %d MiB (+%d MiB)",
		senders, bodySize>>10, time.Since(start).Round(time.Millisecond), stored.Load(), shed.Load(), base>>20, peak.Load()>>20, growth>>20)
	assert.Positive(t, stored.Load(), "some deliveries were taken")
	assert.Greater(t, shed.Load(), int64(senders/2), "most of the flood was shed")
	assert.Less(t, growth, int64(maxGrowth), "the node's resident memory grew by %d MiB under the flood", growth>>20)
	in.awaitSettled(t, time.Minute)
	n.stop(t)
	for _, id := range storedIDs {
		it := in.get(t, id)
		assert.Equal(t, webhooks.StateSucceeded, it.State, "event %s", id)
		assert.Len(t, it.Payload, bodySize, "event %s", id)
	}
}
