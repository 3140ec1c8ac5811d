package admin

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/ops"
)

// Handler serves the admin API and page over an ops.Store. It is safe for
// concurrent use. It has no authentication of its own: mount it behind the
// host's (see the package documentation).
type Handler struct {
	store  ops.Store
	cfg    config
	routes map[string]route
	cop    *http.CrossOriginProtection
}

type config struct {
	prefix   string
	actor    func(*http.Request) string
	payloads bool
	clock    webhooks.Clock
	logger   *slog.Logger
}

// Option configures NewHandler.
type Option func(*config)

// WithPathPrefix sets the path the handler serves under, as it sees
// requests: mounted with mux.Handle("/admin/", h), set "/admin/". The
// prefix must start and end with '/'. Defaults to "/", for a handler
// mounted with http.StripPrefix.
func WithPathPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithActor sets how the handler learns who makes a request that replays
// or closes: actor returns the name the host's authentication gave the
// request (a user, a service, a token's name), recorded in the items'
// audit trail, or "" when it has none, which refuses the request (403).
// A request body cannot name the actor. Defaults to none: the handler is
// read-only and its mutating endpoints answer 403.
func WithActor(actor func(r *http.Request) string) Option {
	return func(c *config) { c.actor = actor }
}

// WithPayloads shows payloads and stored headers — the item's and its
// quarantined deliveries' — on the item endpoint and page. They hold
// customers' data, which operators may not be entitled to see; the
// headers credentials never include (the Receiver does not store them).
// Defaults to false: digests and sizes only.
func WithPayloads(show bool) Option {
	return func(c *config) { c.payloads = show }
}

// WithClock sets the clock giving the time of replays, closings and stats.
// Defaults to the system clock.
func WithClock(clock webhooks.Clock) Option {
	return func(c *config) { c.clock = clock }
}

// WithLogger sets the logger for store failures. Defaults to
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// route is one path's handler and the methods it takes.
type route struct {
	methods []string
	serve   func(http.ResponseWriter, *http.Request)
	api     bool // errors as JSON rather than HTML
}

// NewHandler returns a Handler over store.
func NewHandler(store ops.Store, opts ...Option) (*Handler, error) {
	if store == nil {
		return nil, errors.New("webhooks/admin: NewHandler needs an ops.Store (memstore and pgstore are ones)")
	}
	cfg := config{prefix: "/"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.clock == nil {
		cfg.clock = systemClock{}
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	if !strings.HasPrefix(cfg.prefix, "/") || !strings.HasSuffix(cfg.prefix, "/") {
		return nil, fmt.Errorf("webhooks/admin: WithPathPrefix(%q): the prefix must start and end with '/'", cfg.prefix)
	}
	h := &Handler{store: store, cfg: cfg, cop: http.NewCrossOriginProtection()}
	get, post := []string{http.MethodGet, http.MethodHead}, []string{http.MethodPost}
	h.routes = map[string]route{
		"":                 {methods: get, serve: h.servePage},
		"item":             {methods: get, serve: h.serveItemPage},
		"admin.css":        {methods: get, serve: serveCSS},
		"pause":            {methods: post, serve: h.servePauseForm},
		"resume":           {methods: post, serve: h.serveResumeForm},
		"api/stats":        {methods: get, serve: h.serveStats, api: true},
		"api/dead-letters": {methods: get, serve: h.serveDeadLetters, api: true},
		"api/item":         {methods: get, serve: h.serveItem, api: true},
		"api/replay":       {methods: post, serve: h.serveReplay, api: true},
		"api/bulk-replay":  {methods: post, serve: h.serveBulkReplay, api: true},
		"api/close":        {methods: post, serve: h.serveClose, api: true},
		"api/pause":        {methods: post, serve: h.servePause, api: true},
		"api/resume":       {methods: post, serve: h.serveResume, api: true},
	}
	return h, nil
}

// ServeHTTP serves the page and the API (see the package documentation).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	// No answer of the handler may be framed (clickjacking): the pages
	// say so in their CSP as well, for browsers that read only that.
	w.Header().Set("X-Frame-Options", "DENY")
	rest, ok := strings.CutPrefix(r.URL.Path, h.cfg.prefix)
	if !ok {
		if r.URL.Path+"/" == h.cfg.prefix || r.URL.Path == "" {
			h.redirectToPrefix(w, r)
			return
		}
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("%s is not under the admin handler's prefix %s (see WithPathPrefix)", r.URL.Path, h.cfg.prefix))
		return
	}
	rt, ok := h.routes[rest]
	if !ok {
		if strings.HasPrefix(rest, "api/") {
			writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no endpoint %s: see the package documentation of webhooks/admin", rest))
		} else {
			h.pageError(w, http.StatusNotFound, "There is no page "+rest+" here.")
		}
		return
	}
	allowed := false
	for _, m := range rt.methods {
		allowed = allowed || r.Method == m
	}
	if !allowed {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s takes %s, not %s", rest, strings.Join(rt.methods, " or "), r.Method))
		return
	}
	rt.serve(w, r)
}

// redirectToPrefix sends a request for the prefix without its trailing
// slash to the prefix, relative to what the client asked for, so it works
// behind http.StripPrefix too.
func (h *Handler) redirectToPrefix(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	if r.RequestURI != "" {
		p, _, _ = strings.Cut(r.RequestURI, "?")
	}
	target := path.Base(p) + "/"
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	// Not http.Redirect: it would resolve the target against r.URL.Path,
	// which http.StripPrefix has emptied.
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusMovedPermanently)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, adminjson.ErrorResponse{Error: code, Message: msg})
}

// storeError answers an error of the store, or of the request it refused.
func (h *Handler) storeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code := statusOf(err)
	writeError(w, status, code, h.errorMessage(r, status, err))
}

// errorMessage is what an error answer with status says of err: a
// refusal's own message, or, for a failure of the store (500), a generic
// one with a reference to the log line that holds the error. A store's
// error may name hosts, users, schemas and statements, which are no
// business of whoever reads the answer.
func (h *Handler) errorMessage(r *http.Request, status int, err error) string {
	if status != http.StatusInternalServerError {
		return err.Error()
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	ref := hex.EncodeToString(b[:])
	h.cfg.logger.ErrorContext(r.Context(), "admin: the store failed", "path", r.URL.Path, "ref", ref, "err", err)
	return "the store failed; the server's log has the error, reference " + ref
}

// statusOf maps an error to an HTTP status and an error code.
func statusOf(err error) (int, string) {
	switch {
	case isBadRequest(err):
		return http.StatusBadRequest, "bad_request"
	case errors.Is(err, ops.ErrNotFound):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, ops.ErrNotDead):
		return http.StatusConflict, "not_dead"
	case errors.Is(err, ops.ErrNotFinished):
		return http.StatusConflict, "not_finished"
	case errors.Is(err, webhooks.ErrNotPaused):
		return http.StatusConflict, "not_paused"
	case errors.Is(err, errNoPauses):
		return http.StatusNotImplemented, "not_implemented"
	}
	return http.StatusInternalServerError, "internal"
}
