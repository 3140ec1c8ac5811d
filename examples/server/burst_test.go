//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// scale returns short, or long under WEBHOOKS_TEST_LONG=1.
func scale[T any](short, long T) T {
	if os.Getenv("WEBHOOKS_TEST_LONG") == "1" {
		return long
	}
	return short
}

// TestPostgresBurstOfLargeBodies sends the example server on PostgreSQL a
// burst of concurrent deliveries of 1 MiB bodies, with group commit and
// with grouping off (-enqueue-batch 1): 64 of them with
// -max-in-flight-bytes at 32 MiB, so that some are shed, or, under
// WEBHOOKS_TEST_LONG=1, 200 at the default bounds. Every delivery is
// answered 202, or 503 with Retry-After; every one answered 202 is in the
// database, whole; the server's peak resident memory stays bounded. The
// counts are logged, not asserted: how many the database takes within
// the 2-second store deadline depends on the machine.
func TestPostgresBurstOfLargeBodies(t *testing.T) {
	dsn := pgtest.DSN(t)
	senders := scale(64, 200)
	bounds := scale([]string{"-max-in-flight-bytes", strconv.Itoa(32 << 20)}, []string{})
	for _, mode := range []struct {
		name  string
		batch int
	}{{"grouped", 128}, {"ungrouped", 1}} {
		t.Run(mode.name, func(t *testing.T) {
			schema := pgtest.NewSchemaAt(t, dsn)
			const secret = "demo-secret"
			p := startProcess(t, map[string]string{"DEMO_WEBHOOK_SECRET": secret},
				append([]string{"-dsn", dsn, "-schema", schema, "-enqueue-batch", strconv.Itoa(mode.batch)}, bounds...)...)
			url := p.url + "/webhooks/demo"
			// Each delivery announces its body and waits for 100 Continue,
			// as curl does for large bodies: a shed one is answered before
			// it is sent, so every answer is read whole.
			tr := &http.Transport{MaxIdleConnsPerHost: senders, ExpectContinueTimeout: time.Minute,
				DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext}
			t.Cleanup(tr.CloseIdleConnections)
			client := &http.Client{Transport: tr, Timeout: time.Minute} // a bound on a broken test
			send := func(id string, body []byte) (int, string, error) {
				req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				if err != nil {
					return 0, "", err
				}
				for k, v := range demoHeaders(secret, id, "order.created", string(body), time.Now()) {
					req.Header.Set(k, v)
				}
				req.Header.Set("Expect", "100-continue")
				resp, err := client.Do(req)
				if err != nil {
					return 0, "", err
				}
				defer resp.Body.Close()
				_, _ = io.Copy(io.Discard, resp.Body)
				return resp.StatusCode, resp.Header.Get("Retry-After"), nil
			}
			for i := range 4 { // warm up: pools, buffers, the runtime's heap
				code, _, err := send(fmt.Sprint("warm-", i), []byte(`{}`))
				require.NoError(t, err)
				require.Equal(t, http.StatusAccepted, code)
			}

			body := bytes.Repeat([]byte("a"), 1<<20) // the default body limit
			copy(body, `{"pad":"`)
			copy(body[len(body)-2:], `"}`)
			var (
				mu       sync.Mutex
				accepted []string
				shed     int
				wg       sync.WaitGroup
				start    = make(chan struct{})
			)
			for i := range senders {
				wg.Go(func() {
					id := fmt.Sprintf("big-%03d", i)
					<-start
					code, retryAfter, err := send(id, body)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err != nil:
						t.Errorf("delivery %s: %v", id, err)
					case code == http.StatusAccepted:
						accepted = append(accepted, id)
					case code == http.StatusServiceUnavailable:
						shed++
						assert.Equal(t, "5", retryAfter, "delivery %s: a 503 says when to retry", id)
					default:
						t.Errorf("delivery %s: answered %d", id, code)
					}
				})
			}
			close(start)
			wg.Wait()
			peak := p.memory(t).hwm
			t.Logf("%s (-enqueue-batch %d%s): %d concurrent deliveries of 1 MiB: %d accepted (202), %d answered 503 (%d shed at once, %d not stored within the store deadline); peak resident memory (VmHWM) %d MiB",
				mode.name, mode.batch, strings.TrimRight(" "+strings.Join(bounds, " "), " "), senders, len(accepted), shed,
				len(p.stderr.matching("webhook shed")), len(p.stderr.matching("webhook not stored")), peak>>20)
			assert.NotEmpty(t, accepted, "some deliveries were taken")
			assert.Less(t, peak, int64(maxBurstRSS), "peak resident memory %d MiB", peak>>20)

			// Nothing acknowledged is lost: every delivery answered 202 is
			// in the inbox, whole.
			conn, err := pgx.Connect(t.Context(), dsn)
			require.NoError(t, err)
			defer conn.Close(context.Background())
			rows, err := conn.Query(t.Context(), "SELECT event_id, octet_length(payload) FROM "+
				pgx.Identifier{schema, "inbox_events"}.Sanitize()+" WHERE provider = 'demo' AND event_id = ANY($1)", accepted)
			require.NoError(t, err)
			stored := map[string]int{}
			for rows.Next() {
				var id string
				var n int
				require.NoError(t, rows.Scan(&id, &n))
				stored[id] = n
			}
			require.NoError(t, rows.Err())
			for _, id := range accepted {
				assert.Equal(t, len(body), stored[id], "delivery %s was acknowledged: it is stored, whole", id)
			}
			p.stop(t)
		})
	}
}
