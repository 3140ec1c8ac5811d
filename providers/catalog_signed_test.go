package providers_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// signedness is what an entry's signature covers, found by sending
// altered copies of a genuine delivery, not by reading the entry: the
// body is signed when a tampered copy is refused, an event ID or type
// header when a copy that changes it is refused as a bad signature. An ID
// or type read from the body is signed with it.
type signedness struct {
	body, id, typ        bool
	idHeader, typeHeader string
}

// describe writes the signedness for the catalog page.
func (s signedness) describe(typed bool) string {
	var yes, no []string
	for _, f := range []struct {
		name   string
		signed bool
		shown  bool
	}{{"body", s.body, true}, {"event ID", s.id, true}, {"type", s.typ, typed}} {
		switch {
		case !f.shown:
		case f.signed:
			yes = append(yes, f.name)
		default:
			no = append(no, f.name)
		}
	}
	switch {
	case len(yes) == 0:
		return "**none**: the token or signature authenticates the sender, not the event"
	case len(no) == 0:
		return strings.Join(yes, ", ")
	}
	return strings.Join(yes, ", ") + "; **not signed**: " + strings.Join(no, ", ")
}

// headersHolding returns the delivery's headers whose value is want (or,
// with prefix, the first part of want before a "."), in name order.
func headersHolding(d *webhookstest.Delivery, want string, prefix bool) []string {
	var names []string
	for name := range d.Header {
		v := d.Header.Get(name)
		if want != "" && (v == want || prefix && v != "" && strings.HasPrefix(want, v+".")) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// findSigned finds the header the entry reads the event ID (and the type)
// from, if any, by changing each header that holds it: the verifier then
// refuses the copy as a bad signature (the header is signed), reads the
// new value (it is not), or reads the same (it does not read the header).
func findSigned(t *testing.T, f *catalogFixture, base *webhookstest.Delivery) signedness {
	t.Helper()
	// The harness checks bodyUnsigned by tampering (a tampered credential
	// field would be refused where the rest of the body is not signed).
	s := signedness{body: !bodyUnsigned(f.entry)}
	s.id, s.typ = s.body, s.body
	probe := func(h, value string, read func(webhooks.Verification) string, was string) (found, signed bool) {
		c := cloneDelivery(base)
		c.Header.Set(h, value)
		ver, err := f.try(c)
		switch {
		case errors.Is(err, webhooks.ReasonBadSignature):
			return true, true
		case err == nil && read(ver) != was:
			return true, false
		}
		return false, false
	}
	for _, h := range headersHolding(base, base.EventID, false) {
		if found, signed := probe(h, base.EventID+"-other", func(v webhooks.Verification) string { return v.EventID }, base.EventID); found {
			s.idHeader, s.id = h, signed
			break
		}
	}
	for _, h := range headersHolding(base, base.EventType, true) {
		if found, signed := probe(h, "relabelled", func(v webhooks.Verification) string { return v.EventType }, base.EventType); found {
			s.typeHeader, s.typ = h, signed
			break
		}
	}
	return s
}

// try verifies d with the fixture's verifier directly.
func (f *catalogFixture) try(d *webhookstest.Delivery) (webhooks.Verification, error) {
	u, err := url.Parse(d.URL)
	if err != nil {
		return webhooks.Verification{}, err
	}
	return f.verifier.Verify(context.Background(), webhooks.Route{Provider: f.name}, &webhooks.Request{
		Method: d.Method, URL: &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}, Header: d.Header.Clone(), Body: d.Body,
	})
}

// verification verifies d with the fixture's verifier directly.
func (f *catalogFixture) verification(t *testing.T, d *webhookstest.Delivery) webhooks.Verification {
	t.Helper()
	ver, err := f.try(d)
	require.NoError(t, err, f.name)
	return ver
}

// acknowledge confirms every subscription (SNS) at once.
func acknowledge(context.Context, webhooks.Route, providers.Confirmation) error { return nil }

// TestCatalogUnsignedFields runs, for every entry, the attacks of one who
// holds a captured delivery where the signature leaves the event ID or
// type out: the captured body sent ahead under the ID of a later genuine
// delivery must not lock that delivery out, and a captured signed body
// sent under another type must be refused. It also checks that each
// verifier marks exactly the fields the attacks found unsigned
// (Verification.Unsigned), that it needs a replay store exactly for that
// type guard (or its replay keys), and that the catalog's event ID text
// agrees.
func TestCatalogUnsignedFields(t *testing.T) {
	t.Parallel()
	sns := newSNSServer(t)
	var unsignedIDs, unsignedTypes []string
	for _, e := range providers.Entries() {
		f := newFixture(t, e.Name, sns, acknowledge)
		at := time.Now().Truncate(time.Second)
		base := f.sign(t, webhookstest.Message{Timestamp: at})
		s := findSigned(t, f, base)
		got := f.verification(t, base).Unsigned
		assert.Equal(t, webhooks.UnsignedFields{EventID: !s.id, EventType: !s.typ, Body: !s.body}, got, "%s: the verifier marks what the attacks found unsigned (%+v)", e.Name, s)
		assert.Equal(t, !s.typ && s.typeHeader != "" && s.body || e.Name == "mailgun", webhooks.NeedsReplayStore(f.verifier),
			"%s: the verifier needs a replay store exactly when a header it does not sign chooses the type of a signed body, or for its replay keys (mailgun)", e.Name)
		if !s.id {
			unsignedIDs = append(unsignedIDs, e.Name)
		}
		if !s.typ && base.EventType != "" {
			unsignedTypes = append(unsignedTypes, e.Name)
		}
		switch {
		case strings.Contains(e.EventID(), "**not signed**"):
			assert.False(t, s.id, "%s: the catalog says the event ID is not signed", e.Name)
		case strings.Contains(e.EventID(), ", signed"), strings.Contains(e.EventID(), "of the signed body"):
			assert.True(t, s.id, "%s: the catalog says the event ID is signed", e.Name)
		}

		if !s.id && s.idHeader != "" {
			// The captured body under the next genuine delivery's ID.
			f := fixtureFor(t, f.signer, sns, acknowledge)
			// A body of its own: with the same bytes, nothing is lost.
			genuine := f.sign(t, webhookstest.Message{Body: append(slices.Clone(base.Body), ' '), Timestamp: at})
			captured := cloneDelivery(base)
			captured.Header.Set(s.idHeader, genuine.EventID)
			require.Less(t, f.send(t, captured).Code, 300, e.Name)
			rec := f.send(t, genuine)
			assert.Equal(t, wantStatus(e, http.StatusAccepted), rec.Code, "%s: the genuine delivery after a captured body under its ID: %s", e.Name, rec.Body)
			assert.Equal(t, 2, f.inbox.Len(), "%s: both are stored", e.Name)
		}
		// A signed body under another type. (Where nothing signs the body,
		// a captured request already lets its holder send anything.)
		if !s.typ && s.typeHeader != "" && s.body {
			f := fixtureFor(t, f.signer, sns, acknowledge)
			require.Less(t, f.send(t, base).Code, 300, e.Name)
			relabelled := cloneDelivery(base)
			relabelled.Header.Set(s.typeHeader, "relabelled")
			if !s.id && s.idHeader != "" {
				relabelled.Header.Set(s.idHeader, base.EventID+"-other")
			}
			rec := f.send(t, relabelled)
			assert.Equal(t, http.StatusConflict, rec.Code, "%s: the captured body under another type: %s", e.Name, rec.Body)
			assert.Equal(t, 1, f.inbox.Len(), "%s: the relabelled copy is not stored", e.Name)
		}
	}
	// The entries found from outside, as a floor: the harness must see
	// at least these.
	for _, name := range []string{"github", "shopify", "bitbucket", "jira", "sentry", "razorpay", "woocommerce", "zendesk", "linear", "gitlab"} {
		assert.Contains(t, unsignedIDs, name)
	}
	for _, name := range []string{"github", "shopify", "bitbucket", "sentry", "woocommerce", "linear", "gitlab", "twitch"} {
		assert.Contains(t, unsignedTypes, name)
	}
}
