package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Gateway defaults.
const (
	DefaultMaxBodyBytes          = 1 << 20
	DefaultPathPrefix            = "/webhooks/"
	DefaultReplayTTL             = 24 * time.Hour
	DefaultUnavailableRetryAfter = 5 * time.Second
)

// DefaultDroppedHeaders returns the request headers the gateway never stores
// with an item, because they may carry credentials: Authorization,
// Proxy-Authorization, Cookie and X-Gitlab-Token. WithDroppedHeaders adds to
// them, and so does a verifier that implements SecretHeaderVerifier.
func DefaultDroppedHeaders() []string {
	return []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Gitlab-Token"}
}

// SecretHeaderVerifier is an optional Verifier capability: the request
// headers that carry a credential (a shared token, a password). The Gateway
// never stores those headers with items.
type SecretHeaderVerifier interface {
	SecretHeaders() []string
}

// ReceiveStatus is the outcome of Gateway.Receive.
type ReceiveStatus int

// Receive statuses and the HTTP answers the Gateway's handler gives them.
const (
	StatusAccepted        ReceiveStatus = iota + 1 // 202: stored as a new item
	StatusDuplicate                                // 200: already stored, same payload
	StatusConflict                                 // 409: event ID reused with another payload
	StatusRejected                                 // 401: verification failed (see Reason)
	StatusUnknownProvider                          // 404: no verifier for the provider
	StatusUnavailable                              // 503: a store or credential source failed; retry later
	StatusInternalError                            // 500: a verifier or store panicked
	StatusHandshake                                // the verifier's HandshakeResponse (200 by default): a provider challenge, nothing stored
	StatusInvalid                                  // 400: a tenant, event ID, type or replay key that cannot be stored (see MaxKeyBytes)
)

// MaxKeyBytes bounds the tenant, event ID, event type and replay key of a
// webhook. Each must also be valid UTF-8 without NUL bytes, so every store
// (PostgreSQL text included) can hold it; other requests get StatusInvalid.
const MaxKeyBytes = 512

// ReasonInvalidKey is the Reason of StatusInvalid results.
const ReasonInvalidKey Reason = "invalid_key"

// checkKey reports why s cannot be stored as part of a key, or nil.
func checkKey(what, s string) error {
	switch {
	case len(s) > MaxKeyBytes:
		return fmt.Errorf("webhooks: the %s is %d bytes; at most %d are allowed", what, len(s), MaxKeyBytes)
	case !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("webhooks: the %s is not valid UTF-8 or contains a NUL byte", what)
	}
	return nil
}

var statusNames = map[ReceiveStatus]string{
	StatusAccepted:        "accepted",
	StatusDuplicate:       "duplicate",
	StatusConflict:        "conflict",
	StatusRejected:        "rejected",
	StatusUnknownProvider: "unknown_provider",
	StatusUnavailable:     "unavailable",
	StatusInternalError:   "internal_error",
	StatusHandshake:       "handshake",
	StatusInvalid:         "invalid",
}

// String returns the status's name as used in answers, such as "accepted".
func (s ReceiveStatus) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("ReceiveStatus(%d)", int(s))
}

// HTTPStatus returns the HTTP status code the Gateway answers with.
func (s ReceiveStatus) HTTPStatus() int {
	switch s {
	case StatusAccepted:
		return http.StatusAccepted
	case StatusDuplicate:
		return http.StatusOK
	case StatusConflict:
		return http.StatusConflict
	case StatusRejected:
		return http.StatusUnauthorized
	case StatusUnknownProvider:
		return http.StatusNotFound
	case StatusUnavailable:
		return http.StatusServiceUnavailable
	case StatusHandshake:
		return http.StatusOK
	case StatusInvalid:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// ReceiveResult is the outcome of Gateway.Receive.
type ReceiveResult struct {
	Status ReceiveStatus
	// Reason is the reason code when Status is StatusRejected or
	// StatusInvalid.
	Reason Reason
	// Key is the inbox key once the request verified.
	Key       InboxKey
	EventType string
	// Handshake is the response to write when Status is StatusHandshake.
	Handshake *HandshakeResponse
}

// Gateway verifies inbound webhooks and stores them in the inbox. It is an
// http.Handler serving POST {prefix}{provider} and POST
// {prefix}{provider}/{tenant}; Receive is the same pipeline without HTTP.
// A Gateway is safe for concurrent use.
type Gateway struct {
	resolver VerifierResolver
	inbox    Enqueuer
	replay   ReplayStore
	cfg      gatewayConfig
}

type gatewayConfig struct {
	maxBodyBytes int64
	prefix       string
	replayTTL    time.Duration
	retryAfter   time.Duration
	clock        Clock
	logger       *slog.Logger
	waker        Waker
	dropped      map[string]bool
}

// GatewayOption configures a Gateway.
type GatewayOption func(*gatewayConfig)

// WithMaxBodyBytes limits request bodies; larger ones are answered 413.
// Defaults to DefaultMaxBodyBytes (1 MiB).
func WithMaxBodyBytes(n int64) GatewayOption { return func(c *gatewayConfig) { c.maxBodyBytes = n } }

// WithPathPrefix sets the path the handler serves, which must start and end
// with '/'. Defaults to DefaultPathPrefix ("/webhooks/").
func WithPathPrefix(prefix string) GatewayOption { return func(c *gatewayConfig) { c.prefix = prefix } }

// WithReplayTTL sets how long a replay key stays registered. Defaults to
// DefaultReplayTTL (24 hours).
func WithReplayTTL(d time.Duration) GatewayOption { return func(c *gatewayConfig) { c.replayTTL = d } }

// WithRetryAfter sets the Retry-After the handler sends with 503 answers.
// Defaults to DefaultUnavailableRetryAfter (5 seconds).
func WithRetryAfter(d time.Duration) GatewayOption {
	return func(c *gatewayConfig) { c.retryAfter = d }
}

// WithGatewayClock sets the clock for receive times and replay expiry.
// Defaults to SystemClock.
func WithGatewayClock(clock Clock) GatewayOption { return func(c *gatewayConfig) { c.clock = clock } }

// WithGatewayLogger sets the logger. Defaults to discarding logs.
func WithGatewayLogger(l *slog.Logger) GatewayOption { return func(c *gatewayConfig) { c.logger = l } }

// WithWaker sets who is told, after each new item, that work is due, for
// example the in-process *Processor. Defaults to nobody.
func WithWaker(w Waker) GatewayOption { return func(c *gatewayConfig) { c.waker = w } }

// WithDroppedHeaders adds headers that are not stored with items, for
// example one carrying a provider's shared token. The DefaultDroppedHeaders
// are always dropped.
func WithDroppedHeaders(names ...string) GatewayOption {
	return func(c *gatewayConfig) {
		for _, n := range names {
			c.dropped[http.CanonicalHeaderKey(n)] = true
		}
	}
}

// NewGateway returns a Gateway that looks verifiers up in resolver, guards
// against replays with replay and stores webhooks with inbox.
func NewGateway(resolver VerifierResolver, inbox Enqueuer, replay ReplayStore, opts ...GatewayOption) (*Gateway, error) {
	if resolver == nil || inbox == nil || replay == nil {
		return nil, errors.New("webhooks: NewGateway needs a resolver, an inbox and a replay store (memstore has both stores)")
	}
	cfg := gatewayConfig{
		maxBodyBytes: DefaultMaxBodyBytes,
		prefix:       DefaultPathPrefix,
		replayTTL:    DefaultReplayTTL,
		retryAfter:   DefaultUnavailableRetryAfter,
	}
	cfg.dropped = make(map[string]bool)
	WithDroppedHeaders(DefaultDroppedHeaders()...)(&cfg)
	for _, o := range opts {
		o(&cfg)
	}
	cfg.clock = clockOrSystem(cfg.clock)
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.maxBodyBytes <= 0:
		return nil, fmt.Errorf("webhooks: WithMaxBodyBytes(%d): the limit must be positive", cfg.maxBodyBytes)
	case !strings.HasPrefix(cfg.prefix, "/") || !strings.HasSuffix(cfg.prefix, "/"):
		return nil, fmt.Errorf("webhooks: WithPathPrefix(%q): the prefix must start and end with '/'", cfg.prefix)
	case cfg.replayTTL <= 0:
		return nil, fmt.Errorf("webhooks: WithReplayTTL(%v): the TTL must be positive", cfg.replayTTL)
	case cfg.retryAfter < time.Second:
		return nil, fmt.Errorf("webhooks: WithRetryAfter(%v): use at least one second", cfg.retryAfter)
	}
	return &Gateway{resolver: resolver, inbox: inbox, replay: replay, cfg: cfg}, nil
}

// Receive verifies req for route and stores it in the inbox. It never
// panics: a panicking verifier or store yields StatusInternalError. The error
// is nil exactly when the status is StatusAccepted, StatusDuplicate or
// StatusHandshake; otherwise it says why (a *VerificationError,
// ErrUnknownProvider, ErrPayloadConflict, or the store's error) and is safe
// to log: it holds no secret.
func (g *Gateway) Receive(ctx context.Context, route Route, req *Request) (res ReceiveResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			// The panic value may hold anything, secrets included: log only
			// its type.
			g.cfg.logger.ErrorContext(ctx, "webhook receive panicked", "provider", route.Provider, "panic_type", fmt.Sprintf("%T", r))
			res, err = ReceiveResult{Status: StatusInternalError}, errReceivePanic
		}
	}()
	if req == nil {
		req = &Request{}
	}
	v, ok := g.resolver.Lookup(route.Provider)
	if !ok {
		return ReceiveResult{Status: StatusUnknownProvider}, fmt.Errorf("%w: %q", ErrUnknownProvider, route.Provider)
	}
	if err := checkKey("tenant", route.Tenant); err != nil {
		return ReceiveResult{Status: StatusInvalid, Reason: ReasonInvalidKey}, err
	}
	ver, err := v.Verify(ctx, route, req)
	if err != nil {
		var ve *VerificationError
		if errors.As(err, &ve) {
			return ReceiveResult{Status: StatusRejected, Reason: ve.Reason}, err
		}
		return ReceiveResult{Status: StatusUnavailable}, fmt.Errorf("webhooks: verifier for %q could not decide: %w", route.Provider, err)
	}
	if ver.Handshake != nil {
		return ReceiveResult{Status: StatusHandshake, Handshake: ver.Handshake, EventType: ver.EventType}, nil
	}
	if ver.EventID == "" {
		err := Reject(ReasonMissingEventID, "the verifier returned no event ID")
		return ReceiveResult{Status: StatusRejected, Reason: err.Reason}, err
	}
	if err := errors.Join(checkKey("event ID", ver.EventID), checkKey("event type", ver.EventType), checkKey("replay key", ver.ReplayKey)); err != nil {
		return ReceiveResult{Status: StatusInvalid, Reason: ReasonInvalidKey}, err
	}
	res = ReceiveResult{
		Key:       InboxKey{Provider: route.Provider, Tenant: route.Tenant, EventID: ver.EventID},
		EventType: ver.EventType,
	}
	digest := ver.PayloadSHA256
	if digest == ([sha256.Size]byte{}) {
		digest = sha256.Sum256(req.Body)
	}
	now := g.cfg.clock.Now()

	replayKey := ver.ReplayKey
	if replayKey == "" {
		replayKey = ver.EventID
	}
	seen, err := g.replay.Register(ctx, ReplayKey{Provider: route.Provider, Tenant: route.Tenant, Key: replayKey}, digest, now, now.Add(g.cfg.replayTTL))
	if err != nil {
		res.Status = StatusUnavailable
		return res, fmt.Errorf("webhooks: replay store: %w", err)
	}
	if seen == ReplayConflict {
		res.Status = StatusConflict
		return res, fmt.Errorf("%w: replay key %q", ErrPayloadConflict, replayKey)
	}
	// ReplaySeen still goes on to Enqueue: an earlier delivery may have
	// registered the key and then failed to store (503), and its retry must
	// be stored now. The inbox answers duplicate when it was stored.

	enq, err := g.inbox.Enqueue(ctx, Envelope{
		Key:           res.Key,
		EventType:     ver.EventType,
		Payload:       req.Body,
		Headers:       g.keptHeaders(req.Header, v),
		PayloadSHA256: digest,
		KeyID:         ver.KeyID,
		OccurredAt:    ver.OccurredAt,
		ReceivedAt:    now,
	})
	if err != nil {
		res.Status = StatusUnavailable
		return res, fmt.Errorf("webhooks: inbox store: %w", err)
	}
	switch enq.Outcome {
	case EnqueueNew:
		res.Status = StatusAccepted
		if g.cfg.waker != nil {
			g.cfg.waker.Wake()
		}
		return res, nil
	case EnqueueDuplicate:
		res.Status = StatusDuplicate
		return res, nil
	case EnqueueConflict:
		res.Status = StatusConflict
		return res, fmt.Errorf("%w: event %q", ErrPayloadConflict, ver.EventID)
	}
	res.Status = StatusUnavailable
	return res, fmt.Errorf("webhooks: inbox store returned unknown outcome %v", enq.Outcome)
}

// errReceivePanic is returned by Receive when a verifier or store panicked.
var errReceivePanic = errors.New("webhooks: a verifier or store panicked while receiving a webhook")

// keptHeaders copies h without the dropped headers and those v says carry
// secrets.
func (g *Gateway) keptHeaders(h http.Header, v Verifier) http.Header {
	dropped := g.cfg.dropped
	if sv, ok := v.(SecretHeaderVerifier); ok {
		dropped = maps.Clone(dropped)
		for _, name := range sv.SecretHeaders() {
			dropped[http.CanonicalHeaderKey(name)] = true
		}
	}
	kept := make(http.Header, len(h))
	for k, vs := range h {
		if !dropped[http.CanonicalHeaderKey(k)] {
			kept[k] = slices.Clone(vs)
		}
	}
	return kept
}

// ServeHTTP serves POST {prefix}{provider}[/{tenant}]. It answers 202 for a
// new webhook, 200 for a duplicate, 409 for an event ID reused with another
// payload, 401 when verification fails, 404 for an unknown provider or path,
// 400 for a tenant, event ID or type that cannot be stored (see MaxKeyBytes),
// 405 for other methods, 413 for bodies over the limit, 503 with Retry-After
// when a store fails, and 500 if a verifier or store panics. A provider
// challenge the verifier answered (see Verification.Handshake) gets the
// verifier's response and stores nothing. Other bodies are small JSON
// objects such as {"status":"rejected","reason":"bad_signature"}.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := g.route(r.URL)
	if !ok {
		writeJSON(w, http.StatusNotFound, responseBody{Status: "not_found"})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, responseBody{Status: "method_not_allowed"})
		return
	}
	if r.ContentLength > g.cfg.maxBodyBytes {
		g.tooLarge(w, r, route)
		return
	}
	if r.Body == nil { // only hand-built requests; servers always set one
		r.Body = http.NoBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			g.tooLarge(w, r, route)
			return
		}
		g.cfg.logger.WarnContext(r.Context(), "webhook body read failed", "provider", route.Provider, "tenant", route.Tenant, "err", err)
		writeJSON(w, http.StatusBadRequest, responseBody{Status: "bad_request"})
		return
	}
	res, err := g.Receive(r.Context(), route, &Request{
		Method:     r.Method,
		URL:        r.URL,
		Header:     r.Header,
		Body:       body,
		RemoteAddr: r.RemoteAddr,
	})
	g.log(r.Context(), route, res, err)
	if res.Status == StatusHandshake {
		writeHandshake(w, res.Handshake)
		return
	}
	if res.Status == StatusUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(g.cfg.retryAfter/time.Second)))
	}
	writeJSON(w, res.Status.HTTPStatus(), responseBody{Status: res.Status.String(), Reason: string(res.Reason), EventID: res.Key.EventID})
}

func (g *Gateway) tooLarge(w http.ResponseWriter, r *http.Request, route Route) {
	g.cfg.logger.WarnContext(r.Context(), "webhook body over the limit", "provider", route.Provider, "tenant", route.Tenant, "limit_bytes", g.cfg.maxBodyBytes)
	// The rest of the body is not read; close the connection rather than
	// leave it in an unknown state.
	w.Header().Set("Connection", "close")
	writeJSON(w, http.StatusRequestEntityTooLarge, responseBody{Status: "too_large"})
}

// route parses {prefix}{provider}[/{tenant}] from the escaped path, so an
// encoded slash cannot split a segment, and refuses "." and ".." segments.
func (g *Gateway) route(u *url.URL) (Route, bool) {
	rest, ok := strings.CutPrefix(u.EscapedPath(), g.cfg.prefix)
	if !ok || rest == "" {
		return Route{}, false
	}
	rawProvider, rawTenant, hasTenant := strings.Cut(rest, "/")
	if strings.Contains(rawTenant, "/") || (hasTenant && rawTenant == "") {
		return Route{}, false
	}
	provider, err1 := url.PathUnescape(rawProvider)
	tenant, err2 := url.PathUnescape(rawTenant)
	for _, seg := range []string{provider, tenant} {
		if seg == "." || seg == ".." || strings.Contains(seg, "/") {
			return Route{}, false
		}
	}
	if err1 != nil || err2 != nil || provider == "" {
		return Route{}, false
	}
	return Route{Provider: provider, Tenant: tenant}, true
}

func (g *Gateway) log(ctx context.Context, route Route, res ReceiveResult, err error) {
	attrs := []any{"provider", route.Provider, "tenant", route.Tenant, "status", res.Status.String()}
	if res.Key.EventID != "" {
		attrs = append(attrs, "event_id", res.Key.EventID, "event_type", res.EventType)
	}
	switch res.Status {
	case StatusAccepted, StatusDuplicate, StatusHandshake:
		g.cfg.logger.DebugContext(ctx, "webhook received", attrs...)
	case StatusRejected:
		g.cfg.logger.WarnContext(ctx, "webhook rejected", append(attrs, "reason", string(res.Reason), "err", err)...)
	case StatusUnavailable, StatusInternalError:
		g.cfg.logger.ErrorContext(ctx, "webhook not stored", append(attrs, "err", err)...)
	default:
		g.cfg.logger.WarnContext(ctx, "webhook refused", append(attrs, "err", err)...)
	}
}

type responseBody struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	EventID string `json:"event_id,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, body responseBody) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func writeHandshake(w http.ResponseWriter, h *HandshakeResponse) {
	for k, vs := range h.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	code := h.StatusCode
	if code == 0 {
		code = http.StatusOK
	}
	w.WriteHeader(code)
	_, _ = w.Write(h.Body)
}
