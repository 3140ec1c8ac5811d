package providers_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
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

// semanticDigestEntries are the entries whose idempotency digest is not
// the SHA-256 of the stored payload, by design (a field the provider
// changes on each redelivery is left out of it).
var semanticDigestEntries = map[string]bool{"docusign": true, "line": true}

// TestCatalogStoresNoCredentials sends a signed delivery of every catalog
// entry through a Receiver on memstore and checks that nothing stored with
// the item, or with a conflicting delivery quarantined beside it, holds a
// signature or a credential: not in a header, not in the payload. The
// values looked for are those webhookstest computed from the credential
// (Delivery.Credentials), and the shared secret itself. The payload keeps
// its shape: it is the body with each credential in it replaced by
// providers.RedactedValue, and its digest is the stored PayloadSHA256.
func TestCatalogStoresNoCredentials(t *testing.T) {
	t.Parallel()
	sns := newSNSServer(t)
	conflicts := 0
	for _, name := range providers.Names() {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, name, sns, nil)
			at := time.Now()
			d := f.sign(t, webhookstest.Message{Timestamp: at})
			require.NotEmpty(t, d.Credentials, "%s: webhookstest names the delivery's credentials", name)
			needles := credentialNeedles(f, d)

			rec := f.send(t, d)
			require.Equal(t, wantStatus(f.entry, http.StatusAccepted), rec.Code, "%s: %s", name, rec.Body)
			got, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: name, EventID: d.EventID})
			require.NoError(t, err, "%s: stored under %q", name, d.EventID)
			checkStored(t, name, "the item", needles, got.Item.Headers, got.Item.Payload, got.Item.PayloadSHA256, d)

			// A conflicting delivery (the same event ID, another payload)
			// is kept for the operator under the same rules.
			d2 := f.sign(t, webhookstest.Message{ID: d.EventID, Timestamp: at.Add(2 * time.Second)})
			if d2.EventID != d.EventID || string(d2.Body) == string(d.Body) {
				return // the ID is the body's, or the body signs no time: no conflict to make
			}
			rec = f.send(t, d2)
			if rec.Code != http.StatusConflict {
				// An unsigned ID: the delivery is stored too, under a key
				// of its own (webhooks.UnsignedFields), by the same rules.
				require.Equal(t, wantStatus(f.entry, http.StatusAccepted), rec.Code, "%s: %s", name, rec.Body)
				require.True(t, f.verification(t, d2).Unsigned.EventID, "%s: a conflict under a signed ID is refused", name)
				var answer struct {
					EventID string `json:"event_id"`
				}
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &answer), name)
				alt, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: name, EventID: answer.EventID})
				require.NoError(t, err, "%s: stored under %q", name, answer.EventID)
				checkStored(t, name, "the conflicting delivery", credentialNeedles(f, d2), alt.Item.Headers, alt.Item.Payload, alt.Item.PayloadSHA256, d2)
			}
			got, err = f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: name, EventID: d.EventID})
			require.NoError(t, err)
			require.Len(t, got.Quarantine, 1, name)
			q := got.Quarantine[0]
			checkStored(t, name, "the quarantined delivery", credentialNeedles(f, d2), q.Headers, q.Payload, q.PayloadSHA256, d2)
			conflicts++
		})
	}
	assert.GreaterOrEqual(t, conflicts, 20, "most entries had a conflicting delivery quarantined")
}

// credentialNeedles are the strings no stored row may contain for d.
func credentialNeedles(f *catalogFixture, d *webhookstest.Delivery) []string {
	needles := append([]string{}, d.Credentials...)
	switch f.entry.Scheme {
	case providers.SchemeEd25519, providers.SchemeECDSA, providers.SchemeCertificate:
		// The credential is a public key or a topic ARN: no secret.
	default:
		needles = append(needles, f.signer.Credential())
	}
	return needles
}

func checkStored(t *testing.T, name, what string, needles []string, headers http.Header, payload []byte, digest [sha256.Size]byte, d *webhookstest.Delivery) {
	t.Helper()
	for _, n := range needles {
		require.NotEmpty(t, n, "%s: an empty credential value", name)
		for k, vs := range headers {
			for _, v := range vs {
				assert.NotContains(t, v, n, "%s: %s keeps a credential in header %s", name, what, k)
			}
		}
		assert.NotContains(t, string(payload), n, "%s: %s keeps a credential in its payload", name, what)
	}
	for k := range d.Header {
		if v := d.Header.Get(k); containsAny(v, needles) {
			assert.Empty(t, headers.Values(k), "%s: %s keeps header %s, which carries a credential", name, what, k)
		}
	}
	want := string(d.Body)
	for _, n := range needles {
		want = strings.ReplaceAll(want, n, providers.RedactedValue)
	}
	assert.Equal(t, want, string(payload), "%s: %s is the body with its credentials redacted, nothing else changed", name, what)
	if json.Valid(d.Body) {
		assert.True(t, json.Valid(payload), "%s: %s is still JSON", name, what)
	}
	if !semanticDigestEntries[name] {
		assert.Equal(t, sha256.Sum256(payload), digest, "%s: the digest of %s is of what is stored", name, what)
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestSeveralSignatureHeadersStoreNone: Box signs with a primary and a
// secondary key, DocuSign with one numbered header per configured key
// (their documentation's names, not the verifiers'); a delivery that
// carries all of them is stored with none.
func TestSeveralSignatureHeadersStoreNone(t *testing.T) {
	t.Parallel()
	for name, headers := range map[string][]string{
		"box":      {"Box-Signature-Primary", "Box-Signature-Secondary"},
		"docusign": {"X-DocuSign-Signature-1", "X-DocuSign-Signature-2", "X-DocuSign-Signature-3", "X-DocuSign-Signature-4", "X-DocuSign-Signature-5"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, name, nil, nil)
			d := f.sign(t, webhookstest.Message{Timestamp: time.Now()})
			for i, h := range headers {
				if d.Header.Get(h) == "" {
					d.Header.Set(h, fmt.Sprintf("c2lnbmF0dXJlLW9mLWFub3RoZXIta2V5LSVk%d", i)) // a signature under a key not configured here
				}
			}
			rec := f.send(t, d)
			require.Equal(t, wantStatus(f.entry, http.StatusAccepted), rec.Code, "%s: %s", name, rec.Body)
			got, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: name, EventID: d.EventID})
			require.NoError(t, err)
			for _, h := range headers {
				assert.Empty(t, got.Item.Headers.Values(h), "%s: the stored item keeps %s", name, h)
			}
		})
	}
}
