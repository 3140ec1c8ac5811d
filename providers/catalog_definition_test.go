package providers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestCatalogFollowsDefinition changes one fact of an entry's definition
// in a test's copy of the entry, and checks that the catalog page's row,
// the test signer and the verifier all follow it: the row names the new
// fact and not the old, the signer's delivery carries it, the copy's
// verifier accepts that delivery, and the catalog's own entry, which
// still has the old fact, refuses it.
func TestCatalogFollowsDefinition(t *testing.T) {
	t.Parallel()
	sns := newSNSServer(t)
	cases := []struct {
		name    string
		entry   providers.Entry
		changed providers.Entry
		// in the row of the copy and not in the entry's, and the reverse
		newText, oldText []string
		header           string // the header the copy's delivery carries
		oldHeader        string // the header the entry reads instead
		refused          webhooks.Reason
	}{
		{
			name:  "stripe's signature header and window",
			entry: mustLookup(t, "stripe"),
			changed: providers.WithHMACOptions(mustLookup(t, "stripe"), func(o *webhooks.HMACOptions) {
				o.SignatureHeader = "X-Test-Signature"
				o.Timestamp.Tolerance = 2 * time.Minute
			}),
			newText:   []string{"| `X-Test-Signature: t=…,v1=<hex>", "| ±2 min |"},
			oldText:   []string{"| `Stripe-Signature: t=…,v1=<hex>", "| ±5 min |"},
			header:    "X-Test-Signature",
			oldHeader: "Stripe-Signature",
			refused:   webhooks.ReasonMissingSignature,
		},
		{
			name:  "discord's timestamp header",
			entry: mustLookup(t, "discord"),
			changed: providers.WithEd25519Options(mustLookup(t, "discord"), func(o *providers.Ed25519Options) {
				o.Timestamp.Header = "X-Test-Timestamp"
			}),
			newText:   []string{", `X-Test-Timestamp` |"},
			oldText:   []string{", `X-Signature-Timestamp` |"},
			header:    "X-Test-Timestamp",
			oldHeader: "X-Signature-Timestamp",
			refused:   webhooks.ReasonMissingTimestamp,
		},
		{
			name:  "gitlab's event ID header",
			entry: mustLookup(t, "gitlab"),
			changed: providers.WithTokenOptions(mustLookup(t, "gitlab"), func(o *providers.TokenOptions) {
				o.Event.IDHeader = "X-Test-Delivery"
			}),
			newText:   []string{", `X-Test-Delivery`, ", "| `X-Test-Delivery`, **not signed** |"},
			oldText:   []string{", `Idempotency-Key`, ", "| `Idempotency-Key`, **not signed** |"},
			header:    "X-Test-Delivery",
			oldHeader: "Idempotency-Key",
			refused:   webhooks.ReasonMissingEventID,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row, was := catalogRow(t, c.changed, sns), catalogRow(t, c.entry, sns)
			for _, s := range c.newText {
				assert.Contains(t, row, s, "the copy's row")
				assert.NotContains(t, was, s, "the entry's row")
			}
			for _, s := range c.oldText {
				assert.Contains(t, was, s, "the entry's row")
				assert.NotContains(t, row, s, "the copy's row")
			}

			f := newEntryFixture(t, c.changed, sns, acknowledge)
			d := f.sign(t, webhookstest.Message{})
			assert.NotEmpty(t, d.Header.Get(c.header), "the signer writes the copy's header")
			assert.Empty(t, d.Header.Get(c.oldHeader), "the signer does not write the entry's header")
			rec := f.send(t, d)
			assert.Equal(t, http.StatusAccepted, rec.Code, "the copy's verifier accepts the copy's delivery: %s", rec.Body)

			v, err := c.entry.New(providers.Config{Secrets: webhooks.StaticSecrets(f.signer.Credential())})
			require.NoError(t, err)
			req := &webhooks.Request{Method: d.Method, Header: d.Header.Clone(), Body: d.Body}
			_, err = v.Verify(t.Context(), webhooks.Route{Provider: c.entry.Name}, req)
			assert.ErrorIs(t, err, c.refused, "the catalog's entry looks for %s", c.oldHeader)

			if strings.Contains(c.name, "window") {
				// Signed three minutes ago: within the entry's five, past
				// the copy's two.
				f := fixtureFor(t, f.signer, sns, acknowledge)
				stale := f.sign(t, webhookstest.Message{Timestamp: time.Now().Add(-3 * time.Minute)})
				f.wantRejected(t, f.send(t, stale), webhooks.ReasonTimestampExpired, "past the copy's window")
				orig := newEntryFixture(t, c.entry, sns, acknowledge)
				rec := orig.send(t, orig.sign(t, webhookstest.Message{Timestamp: time.Now().Add(-3 * time.Minute)}))
				assert.Equal(t, http.StatusAccepted, rec.Code, "within the entry's window: %s", rec.Body)
			}
		})
	}
}

// TestCatalogWindow checks each entry's Window text against its verifier:
// a delivery signed a second inside the window, in the past or the future,
// is accepted, and one a second outside it is refused as expired, on a
// fixed clock. Entries that sign no time say "none".
func TestCatalogWindow(t *testing.T) {
	t.Parallel()
	now := time.Unix(1767225600, 0) // 2026-01-01T00:00:00Z
	for _, e := range providers.Entries() {
		if strings.HasPrefix(e.Window(), "none") {
			continue
		}
		tol := parseWindow(t, e)
		signer, err := webhookstest.NewEntryKeySigner(e)
		require.NoError(t, err, e.Name)
		v, err := e.New(providers.Config{Secrets: webhooks.StaticSecrets(signer.Credential()), PublicURL: hookBase, Clock: webhookstest.NewClock(now)})
		require.NoError(t, err, e.Name)
		for _, c := range []struct {
			skew time.Duration
			ok   bool
		}{{tol - time.Second, true}, {-tol + time.Second, true}, {tol + time.Second, false}, {-tol - time.Second, false}} {
			d, err := signer.Sign(hookBase+"/webhooks/"+e.Name, webhookstest.Message{Timestamp: now.Add(c.skew)})
			require.NoError(t, err, e.Name)
			req, err := d.Request(t.Context())
			require.NoError(t, err)
			_, err = webhooks.VerifyHTTPRequest(t.Context(), v, webhooks.Route{Provider: e.Name}, req, 0)
			if c.ok {
				assert.NoError(t, err, "%s: signed %v from the clock, inside %s", e.Name, c.skew, e.Window())
			} else {
				assert.ErrorIs(t, err, webhooks.ReasonTimestampExpired, "%s: signed %v from the clock, outside %s", e.Name, c.skew, e.Window())
			}
		}
	}
}

// parseWindow reads a Window text, "±5 min" or "±5 s".
func parseWindow(t *testing.T, e providers.Entry) time.Duration {
	t.Helper()
	var n int
	var unit string
	_, err := fmt.Sscanf(e.Window(), "±%d %s", &n, &unit)
	require.NoError(t, err, "%s: window %q", e.Name, e.Window())
	switch unit {
	case "min":
		return time.Duration(n) * time.Minute
	case "s":
		return time.Duration(n) * time.Second
	}
	t.Fatalf("%s: window %q has an unknown unit", e.Name, e.Window())
	return 0
}
