package sdkcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// publicURL is what the entries that sign the URL are told they are
// reached under.
const publicURL = "https://hooks.example.com"

// newSigner returns a webhookstest signer for a catalog entry with a fresh
// credential (a key pair for the public-key entries).
func newSigner(t *testing.T, name string) *webhookstest.Signer {
	t.Helper()
	s, err := webhookstest.NewKeySigner(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// catalogVerify runs a request through the catalog entry built by name
// with credential, and returns its verification or error.
func catalogVerify(t *testing.T, name, credential string, req *http.Request) (webhooks.Verification, error) {
	t.Helper()
	v, err := providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(credential), PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	return webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: name}, req, 0)
}

// newRequest builds a POST with the body and headers.
func newRequest(t *testing.T, rawURL string, body []byte, h http.Header) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	return req
}

// request returns the delivery as an *http.Request.
func request(t *testing.T, d *webhookstest.Delivery) *http.Request {
	t.Helper()
	req, err := d.Request(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// catalogAgrees requires the catalog entry to accept the delivery its
// provider's SDK accepted, and to refuse it with a tampered body, as the
// SDK did.
func catalogAgrees(t *testing.T, name, credential string, d *webhookstest.Delivery) {
	t.Helper()
	if _, err := catalogVerify(t, name, credential, request(t, d)); err != nil {
		t.Fatalf("the %s entry refuses the delivery its SDK accepts: %v", name, err)
	}
	bad := &webhookstest.Delivery{Method: d.Method, URL: d.URL, Header: d.Header, Body: tampered(d.Body)}
	if _, err := catalogVerify(t, name, credential, request(t, bad)); err == nil {
		t.Fatalf("the %s entry accepts a tampered body its SDK refuses", name)
	}
}

// tampered returns a copy of the body with the first lower-case letter of
// its second half upper-cased, or with a space appended when there is
// none.
func tampered(body []byte) []byte {
	b := bytes.Clone(body)
	for i := len(b) / 2; i < len(b); i++ {
		if b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
			return b
		}
	}
	return append(b, ' ')
}

// loadVector reads a vector of providers/testdata.
func loadVector(t *testing.T, rel string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "providers", "testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// tamperedString is tampered for a string: the first lower-case letter of
// its second half upper-cased, or a space appended.
func tamperedString(s string) string { return string(tampered([]byte(s))) }
