package webhooks_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// A signature that matches no secret is logged with what usually causes
// it, so a host that pasted the wrong secret or mounted a body-changing
// middleware sees why; the provider's answer stays the bare reason code.
func TestBadSignatureLogNamesLikelyCauses(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"Receiver", "VerifyMiddleware"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			logs := &records{}
			var h http.Handler
			if via == "Receiver" {
				reg := webhooks.NewRegistry()
				reg.MustRegister("github", githubVerifier(t, "sk_test_not-the-webhook-secret"))
				rcv, err := webhooks.NewReceiver(reg, memstore.NewInbox(), memstore.NewReplay(), webhooks.WithLogger(slog.New(logs)))
				require.NoError(t, err)
				h = rcv
			} else {
				h = webhooks.VerifyMiddleware("github", githubVerifier(t, "sk_test_not-the-webhook-secret"), webhooks.WithLogger(slog.New(logs)))(http.NotFoundHandler())
			}
			serve := func(r *http.Request) *httptest.ResponseRecorder {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				return rec
			}
			req := githubRequest(ghPayload)
			req.URL.Path = "/webhooks/github"

			rec := serve(req)
			assert.Equal(t, http.StatusUnauthorized, rec.Code)
			assert.Equal(t, `{"status":"rejected","reason":"bad_signature"}`+"\n", rec.Body.String(), "the answer names no cause")
			got := logs.all()
			require.Len(t, got, 1)
			assert.Equal(t, slog.LevelWarn, got[0].level)
			assert.Equal(t, "bad_signature", got[0].attrs["reason"])
			causes, _ := got[0].attrs["likely_causes"].(string)
			for _, cause := range []string{"wrong or rotated secret", "API key", "proxy or middleware", "changed the body", "wrong provider entry"} {
				assert.Contains(t, causes, cause)
			}
			assert.NotContains(t, fmt.Sprint(got[0].attrs), "sk_test_not-the-webhook-secret", "no secret in the log")

			// Other rejections have causes of their own, which their reason names.
			req = githubRequest(ghPayload)
			req.URL.Path = "/webhooks/github"
			req.Header.Del("X-Hub-Signature-256")
			rec = serve(req)
			assert.Equal(t, `{"status":"rejected","reason":"missing_signature"}`+"\n", rec.Body.String())
			got = logs.all()
			require.Len(t, got, 2)
			assert.NotContains(t, got[1].attrs, "likely_causes")
		})
	}
}

// records is a slog.Handler that keeps every record's level, message and
// attributes.
type records struct {
	mu   sync.Mutex
	list []record
}

type record struct {
	level slog.Level
	msg   string
	attrs map[string]any
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }

func (h *records) Handle(_ context.Context, r slog.Record) error {
	rec := record{level: r.Level, msg: r.Message, attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.list = append(h.list, rec)
	return nil
}

func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

func (h *records) all() []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.list)
}
