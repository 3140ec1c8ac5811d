package providers_test

// Helpers shared by the tests of this package: the HMAC presets' (fixedNow,
// request, vectors) and those of the other schemes (the nh* helpers:
// token, basic auth, GitLab, Twilio, Ed25519, unsigned).

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// vector is a provider test vector stored under testdata/. Published
// vectors come from the provider's documentation or reference test suite;
// the others were computed with openssl from the documented scheme (see
// their computed_with and note fields).
type vector struct {
	Source    string            `json:"source"`
	Published bool              `json:"published"`
	Secret    string            `json:"secret"`
	Payload   string            `json:"payload"`
	Headers   map[string]string `json:"headers"`
	// Now is a Unix time inside the vector's timestamp window.
	Now int64 `json:"now"`
	// Handshake holds the expected answer to a challenge vector.
	Handshake map[string]string `json:"handshake"`
}

func loadVector(t *testing.T, path string) vector {
	t.Helper()
	var v vector
	nhLoad(t, path, &v)
	if v.Source == "" || v.Secret == "" || v.Payload == "" || len(v.Headers) == 0 {
		t.Fatalf("vector %s is incomplete", path)
	}
	return v
}

// fixedNow is the clock of every timestamped preset test.
var fixedNow = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

var testRoute = webhooks.Route{Provider: "test", Tenant: "acme"}

// newVerifier returns the HMAC verifier of opts with the clock (nil: the
// system clock).
func newVerifier(t *testing.T, opts webhooks.HMACOptions, creds webhooks.CredentialResolver, clock webhooks.Clock) *webhooks.HMACVerifier {
	t.Helper()
	opts.Clock = clock
	v, err := webhooks.NewHMACVerifier(opts, creds)
	if err != nil {
		t.Fatalf("NewHMACVerifier: %v", err)
	}
	return v
}

// request builds a request from a body and header name/value pairs; a name
// given twice becomes two header lines.
func request(body string, kv ...string) *webhooks.Request {
	return nhRequest(body, kv...)
}

func mac(newHash func() hash.Hash, key string, parts ...string) []byte {
	m := hmac.New(newHash, []byte(key))
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

func hexMAC(key string, parts ...string) string {
	return hex.EncodeToString(mac(sha256.New, key, parts...))
}

// bodyID is the event ID Event.IDFromBody derives from a body.
func bodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// wantReason fails unless err is a *VerificationError with the reason, seen
// through both errors.Is and errors.As.
func wantReason(t *testing.T, err error, reason webhooks.Reason) {
	t.Helper()
	if err == nil {
		t.Fatalf("Verify succeeded, want rejection %q", string(reason))
	}
	var vErr *webhooks.VerificationError
	if !errors.As(err, &vErr) {
		t.Fatalf("error %q (%T) is not a *VerificationError, want reason %q", err, err, string(reason))
	}
	if vErr.Reason != reason {
		t.Fatalf("reason %q (%v), want %q", string(vErr.Reason), err, string(reason))
	}
	if !errors.Is(err, reason) {
		t.Fatalf("errors.Is(%v, reason %q) is false", err, string(reason))
	}
}

// verified returns a function that fails t unless Verify succeeded, for use
// as verified(t)(v.Verify(…)).
func verified(t *testing.T) func(webhooks.Verification, error) webhooks.Verification {
	t.Helper()
	return func(got webhooks.Verification, err error) webhooks.Verification {
		t.Helper()
		return wantOK(t, got, err)
	}
}

func wantOK(t *testing.T, got webhooks.Verification, err error) webhooks.Verification {
	t.Helper()
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return got
}

const (
	ghDelivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	ghEvent    = "push"
)

var nhRoute = webhooks.Route{Provider: "test", Tenant: "acme"}

// nhNow is the clock of every timestamped test here.
var nhNow = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) // Unix 1735689600

func nhClock(t time.Time) webhooks.Clock {
	return webhookstest.NewClock(t)
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
		t.Fatalf("Verify succeeded, want rejection %q", string(reason))
	}
	vErr, ok := errors.AsType[*webhooks.VerificationError](err)
	if !ok {
		t.Fatalf("error %q (%T) is not a *VerificationError, want reason %q", err, err, string(reason))
	}
	if vErr.Reason != reason {
		t.Fatalf("reason %q (%v), want %q", string(vErr.Reason), err, string(reason))
	}
	if !errors.Is(err, reason) {
		t.Fatalf("errors.Is(%v, reason %q) is false", err, string(reason))
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
	opts := []webhooks.ReceiverOption{webhooks.WithReplayStore(replay)}
	if clock != nil {
		opts = append(opts, webhooks.WithClock(clock))
	}
	gw, err := webhooks.NewReceiver(resolver, inbox, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return gw, inbox, replay
}

// nhStoredNothing fails t if the inbox holds a due item or the replay store
// a key.
func nhStoredNothing(t *testing.T, inbox *memstore.Inbox, replay *memstore.Replay, now time.Time) {
	t.Helper()
	if n := inbox.Len(); n != 0 {
		t.Fatalf("the inbox holds %d items, want none", n)
	}
	if n := replay.Len(); n != 0 {
		t.Fatalf("the replay store holds %d keys, want none", n)
	}
}

// newHMAC is NewHMACVerifier with a clock, for tests that check its error.
func newHMAC(opts webhooks.HMACOptions, creds webhooks.CredentialResolver, clock webhooks.Clock) (*webhooks.HMACVerifier, error) {
	opts.Clock = clock
	return webhooks.NewHMACVerifier(opts, creds)
}
