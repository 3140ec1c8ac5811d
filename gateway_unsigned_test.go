package webhooks_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// githubLike signs the body only and reads the event ID and type from
// headers, as GitHub does: whoever holds one delivery can send its body
// again under any ID and type.
func githubLike() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Sig",
			SignaturePrefix: "sha256=",
			Event:           webhooks.EventSource{IDHeader: "X-Delivery", TypeHeader: "X-Event"},
		},
	}
}

func unsignedReceiver(t *testing.T) (*webhooks.Receiver, *memstore.Inbox) {
	t.Helper()
	v, err := webhooks.NewHMACVerifier(githubLike(), webhooks.StaticSecrets("s3cret"))
	require.NoError(t, err)
	r := webhooks.NewRegistry()
	r.MustRegister("gh", v)
	inbox := memstore.NewInbox()
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))
	require.NoError(t, err)
	return rcv, inbox
}

func ghHeaders(body, id, typ string) map[string]string {
	return map[string]string{"X-Sig": bodySignature("s3cret", body), "X-Delivery": id, "X-Event": typ}
}

func TestVerifierMarksUnsignedFields(t *testing.T) {
	t.Parallel()
	verify := func(opts webhooks.HMACOptions, headers map[string]string) webhooks.Verification {
		t.Helper()
		v, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets("s3cret"))
		require.NoError(t, err)
		req := &webhooks.Request{Method: http.MethodPost, Header: http.Header{}, Body: []byte(`{"id":"e1","type":"t"}`)}
		for k, val := range headers {
			req.Header.Set(k, val)
		}
		got, err := v.Verify(context.Background(), webhooks.Route{Provider: "p"}, req)
		require.NoError(t, err)
		return got
	}
	sig := bodySignature("s3cret", `{"id":"e1","type":"t"}`)
	assert.Equal(t, webhooks.UnsignedFields{EventID: true, EventType: true}, verify(githubLike(), map[string]string{"X-Sig": sig, "X-Delivery": "d1", "X-Event": "push"}).Unsigned,
		"headers outside the signed content")
	assert.Equal(t, webhooks.UnsignedFields{}, verify(bodyOptions(), map[string]string{"X-Sig": sig}).Unsigned, "fields of the signed body")

	// An ID header the template signs is signed; the type header is not.
	signedID := githubLike()
	signedID.SignedContent = "{id}.{body}"
	mac := bodySignature("s3cret", `d1.{"id":"e1","type":"t"}`)
	assert.Equal(t, webhooks.UnsignedFields{EventType: true}, verify(signedID, map[string]string{"X-Sig": mac, "X-Delivery": "d1", "X-Event": "push"}).Unsigned)

	// IDFromBody standing in for an absent header is marked by the
	// header: a copy that adds it chooses the ID.
	fallback := githubLike()
	fallback.Event.IDFromBody = true
	assert.True(t, verify(fallback, map[string]string{"X-Sig": sig, "X-Event": "push"}).Unsigned.EventID)
	// An absent type header too: a copy that adds it chooses the type.
	optional := githubLike()
	optional.Event.TypeOptional = true
	assert.True(t, verify(optional, map[string]string{"X-Sig": sig, "X-Delivery": "d1"}).Unsigned.EventType)
}

// A captured body sent ahead under the ID of a later genuine delivery
// cannot lock that delivery out: it is stored too, under a key of its own,
// and both are flagged.
func TestUnsignedIDConflictKeepsBoth(t *testing.T) {
	t.Parallel()
	rcv, inbox := unsignedReceiver(t)
	captured, genuine := `{"n":1}`, `{"n":2}`
	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/gh", captured, ghHeaders(captured, "d1", "push")).Code)

	// The attacker sends the captured body under the next delivery's ID.
	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/gh", captured, ghHeaders(captured, "d2", "push")).Code)
	// The genuine d2 arrives, and retries.
	r := post(t, rcv, "/webhooks/gh", genuine, ghHeaders(genuine, "d2", "push"))
	assert.Equal(t, http.StatusAccepted, r.Code, r.Raw)
	digest := sha256.Sum256([]byte(genuine))
	alt := "d2#sha256:" + hex.EncodeToString(digest[:16])
	assert.Equal(t, alt, r.EventID)
	r = post(t, rcv, "/webhooks/gh", genuine, ghHeaders(genuine, "d2", "push"))
	assert.Equal(t, http.StatusOK, r.Code, "a retry of the genuine delivery is a duplicate")
	assert.Equal(t, 3, inbox.Len())

	it, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "gh", EventID: alt})
	require.NoError(t, err)
	assert.Equal(t, []byte(genuine), it.Payload)
	assert.Equal(t, webhooks.StatePending, it.State, "the genuine delivery will be handled")
	first, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "gh", EventID: "d2"})
	require.NoError(t, err)
	assert.Equal(t, []byte(captured), first.Payload)
	assert.GreaterOrEqual(t, first.Conflicts, 1, "the first item under the ID is flagged")
	assert.Len(t, first.Quarantine, first.Conflicts, "and keeps the other delivery for the operator")

	// With a signed ID the conflict is refused as before.
	f := newGatewayFixture(t, nil, nil)
	assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{"n":1}`, okHeaders("e1")).Code)
	assert.Equal(t, http.StatusConflict, post(t, f.gw, "/webhooks/acme", `{"n":2}`, okHeaders("e1")).Code)
	assert.Equal(t, 1, f.inbox.Len())
}

// A body already received under one event type is refused under another,
// so a captured delivery cannot be handled as another kind of event.
func TestUnsignedTypeCannotRelabelABody(t *testing.T) {
	t.Parallel()
	rcv, inbox := unsignedReceiver(t)
	body := `{"ref":"main"}`
	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/gh", body, ghHeaders(body, "d1", "push")).Code)
	for _, typ := range []string{"issues", "Push", "push.x"} {
		r := post(t, rcv, "/webhooks/gh", body, ghHeaders(body, "d9", typ))
		assert.Equal(t, http.StatusConflict, r.Code, "relabelled as %q", typ)
	}
	res, err := rcv.Receive(context.Background(), webhooks.Route{Provider: "gh"}, &webhooks.Request{Method: http.MethodPost, Header: header(ghHeaders(body, "d9", "issues")), Body: []byte(body)})
	assert.Equal(t, webhooks.StatusConflict, res.Status)
	assert.ErrorIs(t, err, webhooks.ErrTypeConflict)
	assert.Equal(t, 1, inbox.Len())
	assert.Equal(t, http.StatusOK, post(t, rcv, "/webhooks/gh", body, ghHeaders(body, "d1", "push")).Code, "the genuine retry is a duplicate")

	// The type header left out, then added, relabels just as well.
	optional := githubLike()
	optional.Event.TypeOptional = true
	v, err := webhooks.NewHMACVerifier(optional, webhooks.StaticSecrets("s3cret"))
	require.NoError(t, err)
	reg := webhooks.NewRegistry()
	reg.MustRegister("gh", v)
	rcv2, err := webhooks.NewReceiver(reg, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))
	require.NoError(t, err)
	h := ghHeaders(body, "d1", "")
	delete(h, "X-Event")
	assert.Equal(t, http.StatusAccepted, post(t, rcv2, "/webhooks/gh", body, h).Code)
	assert.Equal(t, http.StatusConflict, post(t, rcv2, "/webhooks/gh", body, ghHeaders(body, "d2", "push")).Code)
}

func header(m map[string]string) http.Header {
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// TestReceiverReplayStoreIsOptional: a Receiver needs a ReplayStore only
// for verifiers that say so (a type header the signature leaves out, a
// replay key of their own): without one it builds for the others and
// stores their deliveries; it refuses to build for those, naming their
// providers; and a delivery whose verification needs one, from a
// verifier that did not say so or was registered later, is refused (500)
// and not stored, never stored unguarded.
func TestReceiverReplayStoreIsOptional(t *testing.T) {
	t.Parallel()
	signedBody, err := webhooks.NewHMACVerifier(bodyOptions(), webhooks.StaticSecrets("s3cret"))
	require.NoError(t, err)
	unsignedType, err := webhooks.NewHMACVerifier(githubLike(), webhooks.StaticSecrets("s3cret"))
	require.NoError(t, err)
	assert.False(t, webhooks.NeedsReplayStore(signedBody), "a verifier whose signature covers the body, ID and type")
	assert.True(t, webhooks.NeedsReplayStore(unsignedType), "a verifier reading the type from a header it does not sign")

	r := webhooks.NewRegistry()
	r.MustRegister("pay", signedBody)
	inbox := memstore.NewInbox()
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithLogger(discard))
	require.NoError(t, err, "no verifier needs a replay store")
	body := `{"id":"evt_1","type":"invoice.paid"}`
	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/pay", body, map[string]string{"X-Sig": bodySignature("s3cret", body)}).Code)
	assert.Equal(t, 1, inbox.Len())

	r.MustRegister("gh", unsignedType)
	r.MustRegister("gh2", unsignedType)
	_, err = webhooks.NewReceiver(r, inbox)
	require.Error(t, err, "a verifier needs a replay store and none is given")
	assert.ErrorContains(t, err, `the verifiers of "gh", "gh2" need a replay store`)
	assert.ErrorContains(t, err, "WithReplayStore")
	_, err = webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore((*memstore.Replay)(nil)))
	assert.ErrorContains(t, err, "WithReplayStore was given a nil *memstore.Replay")
	_, err = webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()))
	require.NoError(t, err)

	// Registered after NewReceiver, or a verifier that does not say what
	// it needs: the delivery is refused, and nothing stored.
	gh := `{"ref":"main"}`
	rec := post(t, rcv, "/webhooks/gh", gh, ghHeaders(gh, "d1", "push"))
	assert.Equal(t, http.StatusInternalServerError, rec.Code, "%s", rec.Raw)
	nonce := webhooks.VerifierFunc(func(context.Context, webhooks.Route, *webhooks.Request) (webhooks.Verification, error) {
		return webhooks.Verification{EventID: "evt_2", ReplayKey: "nonce-1"}, nil
	})
	r.MustRegister("nonce", nonce)
	res, err := rcv.Receive(t.Context(), webhooks.Route{Provider: "nonce"}, &webhooks.Request{Method: http.MethodPost, Body: []byte("{}")})
	assert.Equal(t, webhooks.StatusInternalError, res.Status)
	assert.ErrorContains(t, err, `the verifier for "nonce" needs a replay store`)
	assert.Equal(t, 1, inbox.Len(), "neither delivery was stored")

	// Where nothing signs the body either (a shared token), there is no
	// signed body to guard: such a delivery needs no replay store.
	token := webhooks.VerifierFunc(func(context.Context, webhooks.Route, *webhooks.Request) (webhooks.Verification, error) {
		return webhooks.Verification{EventID: "evt_3", EventType: "push", Unsigned: webhooks.UnsignedFields{EventID: true, EventType: true, Body: true}}, nil
	})
	r.MustRegister("token", token)
	res, err = rcv.Receive(t.Context(), webhooks.Route{Provider: "token"}, &webhooks.Request{Method: http.MethodPost, Body: []byte("{}")})
	assert.Equal(t, webhooks.StatusAccepted, res.Status, "%v", err)
	assert.Equal(t, 2, inbox.Len())
}
