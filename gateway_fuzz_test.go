package webhooks_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// FuzzGatewayServeHTTP throws arbitrary paths, methods, headers and bodies at
// the handler: it must never panic, must answer one of the documented codes
// with a JSON body, and must store an item only when it answered 202.
func FuzzGatewayServeHTTP(f *testing.F) {
	f.Add("/webhooks/acme/", "POST", "ok", "e1", `{}`)
	f.Add("/webhooks/acme/t1", "POST", "ok", "e1", `{}`)
	f.Add("/webhooks/acme%2Ft1", "POST", "ok", "e1", `{}`)
	f.Add("/webhooks/acme/..", "POST", "ok", "e1", `{}`)
	f.Add("/webhooks/acme/%ff", "POST", "ok", "e\xff", `{}`)
	f.Add("/webhooks//x", "GET", "", "", "")
	f.Add("/webhooks/acme", "POST", "panic", "e", "x")
	f.Fuzz(func(t *testing.T, path, method, sig, id, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#?") || !validToken(method) {
			t.Skip()
		}
		inbox := memstore.NewInbox()
		r := webhooks.NewRegistry()
		r.MustRegister("acme", headerVerifier)
		gw, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithMaxBodyBytes(64), webhooks.WithLogger(discard))
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, "/", strings.NewReader(body))
		req.Method = method
		req.URL.Path, req.URL.RawPath = "", ""
		if err := setPath(req, path); err != nil {
			t.Skip()
		}
		if utf8.ValidString(sig) && !strings.ContainsAny(sig, "\r\n\x00") {
			req.Header.Set("X-Sig", sig)
		}
		req.Header["X-Id"] = []string{id}
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 202, 400, 401, 404, 405, 409, 413, 500, 503:
		default:
			t.Fatalf("undocumented status %d for %s %q", rec.Code, method, path)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		if inbox.Len() != 0 && rec.Code != http.StatusAccepted {
			t.Fatalf("status %d but an item was stored", rec.Code)
		}
	})
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// setPath sets the request path from its escaped form, as a server would.
func setPath(req *http.Request, escaped string) error {
	u, err := req.URL.Parse(escaped)
	if err != nil {
		return err
	}
	req.URL = u
	return nil
}
