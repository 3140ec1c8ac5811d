package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
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
				rcv, err := webhooks.NewReceiver(reg, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(slog.New(logs)))
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

// TestMountingIdioms: the ways a Go developer mounts a handler work as
// they read, with the default path prefix: http.StripPrefix with or
// without the trailing slash, a ServeMux subtree or {provider} pattern,
// and a sub-router mounted under a prefix of its own.
func TestMountingIdioms(t *testing.T) {
	t.Parallel()
	newRcv := func(t *testing.T, logs *syncBuffer) (*webhooks.Receiver, *memstore.Inbox) {
		t.Helper()
		inbox := memstore.NewInbox()
		r := webhooks.NewRegistry()
		r.MustRegister("acme", headerVerifier)
		logger := discard
		if logs != nil {
			logger = slog.New(slog.NewTextHandler(logs, nil))
		}
		rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(logger), webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithTenants("acme")) // headerVerifier is tenant-aware by the host's word
		require.NoError(t, err)
		return rcv, inbox
	}
	stored := func(t *testing.T, inbox *memstore.Inbox, tenant, id string) {
		t.Helper()
		_, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", Tenant: tenant, EventID: id})
		assert.NoError(t, err, "event %s was stored for provider acme, tenant %q", id, tenant)
	}
	for _, tc := range []struct {
		name  string
		mount func(rcv http.Handler) http.Handler
		path  string
	}{
		{"StripPrefix without the trailing slash", func(rcv http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/hooks/", http.StripPrefix("/hooks", rcv))
			return mux
		}, "/hooks/acme"},
		{"StripPrefix with the trailing slash", func(rcv http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/hooks/", http.StripPrefix("/hooks/", rcv))
			return mux
		}, "/hooks/acme"},
		{"StripPrefix as the server's handler", func(rcv http.Handler) http.Handler {
			return http.StripPrefix("/hooks", rcv)
		}, "/hooks/acme"},
		{"StripPrefix, with the prefix after it", func(rcv http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/hooks/", http.StripPrefix("/hooks", rcv))
			return mux
		}, "/hooks/webhooks/acme"},
		{"a ServeMux subtree", func(rcv http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("POST /hooks/", rcv)
			return mux
		}, "/hooks/acme/"},
		{"a ServeMux pattern with {provider}", func(rcv http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("POST /hooks/{provider}", rcv)
			return mux
		}, "/hooks/acme"},
		{"a sub-router under StripPrefix, with a subtree", func(rcv http.Handler) http.Handler {
			api := http.NewServeMux()
			api.Handle("/hooks/", rcv)
			root := http.NewServeMux()
			root.Handle("/api/", http.StripPrefix("/api", api))
			return root
		}, "/api/hooks/acme"},
		{"a sub-router under StripPrefix, with {provider}", func(rcv http.Handler) http.Handler {
			api := http.NewServeMux()
			api.Handle("POST /hooks/{provider}", rcv)
			root := http.NewServeMux()
			root.Handle("/api/", http.StripPrefix("/api", api))
			return root
		}, "/api/hooks/acme"},
		{"a sub-router mounted whole", func(rcv http.Handler) http.Handler {
			api := http.NewServeMux()
			api.Handle("/api/hooks/", rcv)
			root := http.NewServeMux()
			root.Handle("/api/", api)
			return root
		}, "/api/hooks/acme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rcv, inbox := newRcv(t, nil)
			h := tc.mount(rcv)
			resp := post(t, h, tc.path, `{}`, okHeaders("e1"))
			assert.Equal(t, http.StatusAccepted, resp.Code, "POST %s: %s", tc.path, resp.Raw)
			stored(t, inbox, "", "e1")
		})
	}

	t.Run("a tenant after the mount point", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name  string
			mount func(rcv http.Handler) http.Handler
			path  string
		}{
			{"StripPrefix", func(rcv http.Handler) http.Handler { return http.StripPrefix("/hooks/", rcv) }, "/hooks/acme/t1"},
			{"{provider}/{tenant}", func(rcv http.Handler) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("POST /hooks/{provider}/{tenant}", rcv)
				return mux
			}, "/hooks/acme/t1"},
		} {
			rcv, inbox := newRcv(t, nil)
			resp := post(t, tc.mount(rcv), tc.path, `{}`, okHeaders("e1"))
			assert.Equal(t, http.StatusAccepted, resp.Code, "%s: POST %s", tc.name, tc.path)
			stored(t, inbox, "t1", "e1")
		}
	})

	// Where the path cannot be read one way only, or was rewritten rather
	// than cut, the answer is 404 and the mounting mistake is logged.
	for _, tc := range []struct {
		name  string
		mount func(rcv http.Handler) http.Handler
		path  string
	}{
		{"a ServeMux and StripPrefix disagree", func(rcv http.Handler) http.Handler {
			// /x/x/acme: acme under the subtree /x/, or x/acme after the cut /x?
			mux := http.NewServeMux()
			mux.Handle("/x/", http.StripPrefix("/x", rcv))
			return mux
		}, "/x/x/acme"},
		{"a rewritten path", func(rcv http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.URL.Path = "/elsewhere/acme"
				rcv.ServeHTTP(w, r)
			})
		}, "/in/acme"},
		{"a handler mounted without a way to tell where", func(rcv http.Handler) http.Handler { return rcv }, "/hooks/acme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			rcv, inbox := newRcv(t, logs)
			resp := post(t, tc.mount(rcv), tc.path, `{}`, okHeaders("e1"))
			assert.Equal(t, http.StatusNotFound, resp.Code)
			assert.Equal(t, "not_found", resp.Status)
			assert.Zero(t, inbox.Len())
			assert.Contains(t, logs.String(), "outside the receiver's path prefix")
			assert.True(t, strings.Contains(logs.String(), "level=ERROR"), "logged as an error: %s", logs.String())
		})
	}
}

// The Receiver's own answers are encoding/json's encoding of their three
// fields, escaping included, whatever the event ID holds (the Receiver
// stores any valid UTF-8 without NUL): a body a provider or a proxy
// decodes, or a page embeds, as it would any Go service's JSON.
func TestAnswerIsEncodingJSON(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil)
	for _, id := range []string{"evt_1", `a"b\c`, "<script>&", "tab\tnew\nline\r", "\x01\x1f\x7f", "line\u2028para\u2029", "é😀"} {
		headers := okHeaders(id)
		r := post(t, f.gw, "/webhooks/acme", `{}`, headers)
		require.Equal(t, http.StatusAccepted, r.Code, "event ID %q", id)
		want, err := json.Marshal(struct {
			Status  string `json:"status"`
			EventID string `json:"event_id"`
		}{"accepted", id})
		require.NoError(t, err)
		assert.Equal(t, string(want)+"\n", r.Raw, "the answer for the event ID %q", id)
	}
}

// keepingInbox keeps every envelope it is given as it is, payload and
// headers included, as Enqueue's contract allows.
type keepingInbox struct {
	mu   sync.Mutex
	envs []webhooks.Envelope
}

func (k *keepingInbox) Enqueue(_ context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.envs = append(k.envs, env)
	return webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: webhooks.StatePending}, nil
}

// A store may keep the payload and headers it was given: the Receiver
// reads each body into memory of its own and never touches it again, so
// later requests (of the same length, which a reused buffer would take)
// leave what the store kept unchanged.
func TestStoreMayKeepTheEnvelope(t *testing.T) {
	t.Parallel()
	inbox := &keepingInbox{}
	f := newGatewayFixture(t, inbox, nil)
	const n = 20
	body := func(i int) string { return fmt.Sprintf(`{"n":%03d}`, i) }
	for i := range n {
		r := post(t, f.gw, "/webhooks/acme", body(i), okHeaders(fmt.Sprintf("evt_%03d", i)))
		require.Equal(t, http.StatusAccepted, r.Code)
	}
	require.Len(t, inbox.envs, n)
	for i, env := range inbox.envs {
		assert.Equal(t, body(i), string(env.Payload), "the payload of delivery %d, after %d more", i, n-1-i)
		assert.Equal(t, fmt.Sprintf("evt_%03d", i), env.Headers.Get("X-Id"), "the headers of delivery %d", i)
	}
}
