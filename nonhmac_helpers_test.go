package webhooks_test

// Helpers shared by the tests of the verifiers that are not HMAC over the
// body (token, basic auth, GitLab, Twilio, Ed25519, unsigned).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

var nhRoute = webhooks.Route{Provider: "test", Tenant: "acme"}

// nhNow is the clock of every timestamped test here.
var nhNow = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) // Unix 1735689600

func nhClock(t time.Time) webhooks.Clock {
	return webhooks.ClockFunc(func() time.Time { return t })
}

// nhRequest builds a POST request from a body and header name/value pairs;
// a name given twice becomes two header lines.
func nhRequest(body string, kv ...string) *webhooks.Request {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return &webhooks.Request{Method: http.MethodPost, Header: h, Body: []byte(body)}
}

// nhLoad reads a JSON file under testdata into v.
func nhLoad(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
}

// nhVerify fails t unless v verifies req.
func nhVerify(t *testing.T, v webhooks.Verifier, req *webhooks.Request) webhooks.Verification {
	t.Helper()
	got, err := v.Verify(context.Background(), nhRoute, req)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return got
}

// nhReject fails t unless v rejects req with the reason, seen through both
// errors.Is and errors.As.
func nhReject(t *testing.T, v webhooks.Verifier, req *webhooks.Request, reason webhooks.Reason) *webhooks.VerificationError {
	t.Helper()
	_, err := v.Verify(context.Background(), nhRoute, req)
	if err == nil {
		t.Fatalf("Verify succeeded, want rejection %q", reason)
	}
	vErr, ok := errors.AsType[*webhooks.VerificationError](err)
	if !ok {
		t.Fatalf("error %q (%T) is not a *VerificationError, want reason %q", err, err, reason)
	}
	if vErr.Reason != reason {
		t.Fatalf("reason %q (%v), want %q", vErr.Reason, err, reason)
	}
	if !errors.Is(err, &webhooks.VerificationError{Reason: reason}) {
		t.Fatalf("errors.Is(%v, reason %q) is false", err, reason)
	}
	return vErr
}

// nhNoLeak fails t if err's text contains any of the secrets.
func nhNoLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Fatalf("error %q contains secret material %q", err, s)
		}
	}
}

// nhErrResolver is a CredentialResolver whose store is down.
var nhErrResolver = webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) {
	return nil, errors.New("secret store down")
})

// nhSecrets returns a resolver with the given ID/value pairs.
func nhSecrets(idValue ...string) webhooks.CredentialResolver {
	var list []webhooks.Secret
	for i := 0; i+1 < len(idValue); i += 2 {
		list = append(list, webhooks.Secret{ID: idValue[i], Value: []byte(idValue[i+1])})
	}
	return webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) {
		return list, nil
	})
}

// nhGateway returns a gateway serving provider with v on fresh memstores.
func nhGateway(t *testing.T, provider string, v webhooks.Verifier, clock webhooks.Clock) (*webhooks.Receiver, *memstore.Inbox, *memstore.Replay) {
	t.Helper()
	resolver := webhooks.NewRegistry()
	if err := resolver.Register(provider, v); err != nil {
		t.Fatal(err)
	}
	inbox, replay := memstore.NewInbox(), memstore.NewReplay()
	opts := []webhooks.ReceiverOption{}
	if clock != nil {
		opts = append(opts, webhooks.WithClock(clock))
	}
	gw, err := webhooks.NewReceiver(resolver, inbox, replay, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return gw, inbox, replay
}

// nhStoredNothing fails t if the inbox holds a due item or the replay store
// a key.
func nhStoredNothing(t *testing.T, inbox *memstore.Inbox, replay *memstore.Replay, now time.Time) {
	t.Helper()
	leases, err := inbox.Acquire(context.Background(), webhooks.AcquireRequest{Now: now.Add(time.Hour), LeaseDuration: time.Minute, Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(leases) != 0 {
		t.Fatalf("the inbox holds %v, want nothing", leases[0].Item.Key)
	}
	if n := replay.Len(); n != 0 {
		t.Fatalf("the replay store holds %d keys, want none", n)
	}
}
