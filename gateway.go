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
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Receiver defaults.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultPathPrefix   = "/webhooks/"
	DefaultReplayTTL    = 24 * time.Hour
	// DefaultUnavailableRetryAfter is the Retry-After of 503 answers.
	DefaultUnavailableRetryAfter = 5 * time.Second
)

// droppedHeaders are the request headers a Receiver never stores with an
// item, because they may carry credentials.
var droppedHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Gitlab-Token"}

// SecretHeaderVerifier is an optional Verifier capability: the request
// headers that carry a credential (a shared token, a password). The Receiver
// never stores those headers with items.
type SecretHeaderVerifier interface {
	SecretHeaders() []string
}

// ReceiveStatus is the outcome of Gateway.Receive.
type ReceiveStatus int

// Receive statuses and the HTTP answers a Receiver gives them.
const (
	StatusAccepted        ReceiveStatus = iota + 1 // 202: stored as a new item
	StatusDuplicate                                // 200: already stored, same payload
	StatusConflict                                 // 409: event ID reused with another payload
	StatusRejected                                 // 401: verification failed (see Reason)
	StatusUnknownProvider                          // 404: no verifier for the provider
	StatusUnavailable                              // 503: a store or credential source failed; retry later
	StatusInternalError                            // 500: a verifier or store panicked
	StatusHandshake                                // the verifier's Response (200 by default): a provider challenge, nothing stored
	StatusInvalid                                  // 400: a tenant, event ID, type or replay key that cannot be stored (see MaxKeyBytes)
	StatusIgnored                                  // 200: verified, but of an event type the host does not subscribe to (see WithSubscriptions); not stored
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
	StatusIgnored:         "ignored",
	StatusInvalid:         "invalid",
}

// String returns the status's name as used in answers, such as "accepted".
func (s ReceiveStatus) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("ReceiveStatus(%d)", int(s))
}

// HTTPStatus returns the HTTP status code a Receiver answers with.
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
	case StatusHandshake, StatusIgnored:
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
	Handshake *Response
	// Answer is the provider's expected reply to an accepted, duplicate or
	// ignored delivery, when its verifier gives one (Verification.Answer).
	Answer *Response
}

// Gateway receives webhooks: it verifies a request and stores it in the
// inbox, telling what it did. *Receiver is the implementation (and serves
// HTTP); a host's tests may fake it.
type Gateway interface {
	Receive(ctx context.Context, route Route, req *Request) (ReceiveResult, error)
}

// Receiver is the Gateway: it verifies inbound webhooks and stores them in
// the inbox. It is an http.Handler serving POST {prefix}{provider} and POST
// {prefix}{provider}/{tenant} (see WithPathPrefix for mounting it under a
// router); Receive is the same pipeline without HTTP. A Receiver is safe
// for concurrent use.
type Receiver struct {
	resolver Resolver
	inbox    Enqueuer
	replay   ReplayStore
	cfg      receiverConfig
	// subscribed holds WithSubscriptions' patterns; nil takes every type.
	subscribed *patterns[struct{}]

	// lastMountWarning rate-limits the log line about requests outside the
	// path prefix (Unix nanoseconds of the last one).
	lastMountWarning atomic.Int64
}

var _ Gateway = (*Receiver)(nil)

type receiverConfig struct {
	maxBodyBytes int64
	prefix       string
	replayTTL    time.Duration
	retryAfter   time.Duration
	clock        Clock
	logger       *slog.Logger
	waker        interface{ Wake() }
	dropped      map[string]bool

	redeliveryReplay bool
	subscribe        bool     // WithSubscriptions was given
	subscriptions    []string // its patterns
}

// ReceiverOption configures a Receiver. WithClock and WithLogger are
// ReceiverOptions too.
type ReceiverOption interface {
	applyReceiver(*receiverConfig)
}

type receiverOption func(*receiverConfig)

func (o receiverOption) applyReceiver(c *receiverConfig) { o(c) }

// WithMaxBodyBytes limits request bodies; larger ones are answered 413.
// Defaults to DefaultMaxBodyBytes (1 MiB).
func WithMaxBodyBytes(n int64) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.maxBodyBytes = n })
}

// WithPathPrefix sets the path the handler serves, {prefix}{provider} and
// {prefix}{provider}/{tenant}, each optionally with a trailing slash. The
// prefix must start and end with '/'; "/" serves providers at the root,
// for a handler mounted with http.StripPrefix. The prefix is the path as
// the Receiver sees it: mounted with mux.Handle("/api/webhooks/", rcv),
// set "/api/webhooks/". A request outside the prefix is answered 404 and
// logged as a mounting mistake, naming the prefix and the path seen.
//
// A route pattern with Go 1.22 wildcards needs no prefix: when the
// request's pattern has a {provider} wildcard (and optionally {tenant}),
// as in mux.Handle("POST /hooks/{provider}/{tenant}", rcv), those values
// are used. Defaults to DefaultPathPrefix ("/webhooks/").
func WithPathPrefix(prefix string) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.prefix = prefix })
}

// WithReplayTTL sets how long a replay key stays registered. Defaults to
// DefaultReplayTTL (24 hours).
func WithReplayTTL(d time.Duration) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.replayTTL = d })
}

// WithUnavailableRetryAfter sets the Retry-After the handler sends with
// 503 answers, telling the provider when to try again. Defaults to
// DefaultUnavailableRetryAfter (5 seconds).
func WithUnavailableRetryAfter(d time.Duration) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.retryAfter = d })
}

// WithWaker sets who is told, after each new item, that work is due, for
// example the in-process *Processor. Defaults to nobody.
func WithWaker(w interface{ Wake() }) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.waker = w })
}

// WithDroppedHeaders adds headers that are not stored with items, for
// example one carrying a provider's shared token. Authorization,
// Proxy-Authorization, Cookie and X-Gitlab-Token are always dropped, and
// so are the headers a verifier declares secret (SecretHeaderVerifier).
func WithDroppedHeaders(names ...string) ReceiverOption {
	return receiverOption(func(c *receiverConfig) {
		for _, n := range names {
			c.dropped[http.CanonicalHeaderKey(n)] = true
		}
	})
}

// WithRedeliveryReplay makes a provider's redelivery of a dead letter — a
// verified delivery with the item's event ID and the same payload, sent
// again from the provider's dashboard or by its own retries — replay the
// item, as an operator's replay would, recorded in its audit trail as a
// provider redelivery and answered 202.
//
// It is off by default: a redelivery of a dead letter is then a duplicate
// (200) and changes nothing, because a provider's automatic retries would
// otherwise run a handler again that failed on purpose (Permanent) for as
// long as the provider retries. Turn it on where the provider's resend
// button is how your team asks for a retry. Defaults to false.
func WithRedeliveryReplay(enabled bool) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.redeliveryReplay = enabled })
}

// WithSubscriptions lists the event types the host subscribes to, as
// patterns like a Mux's ("invoice.paid", "invoice.*", "*"). A verified
// delivery of any other type is answered 200 with status "ignored" (or the
// provider's own answer) and is not stored, so pings and types the host
// never handles do not fill the inbox; each is logged. An invalid pattern
// makes NewReceiver fail. Defaults to every type.
func WithSubscriptions(patterns ...string) ReceiverOption {
	return receiverOption(func(c *receiverConfig) {
		c.subscriptions = append(c.subscriptions, patterns...)
		c.subscribe = true
	})
}

// NewReceiver returns a Receiver that looks verifiers up in resolver,
// guards against replays with replay and stores webhooks with inbox.
func NewReceiver(resolver Resolver, inbox Enqueuer, replay ReplayStore, opts ...ReceiverOption) (*Receiver, error) {
	if resolver == nil || inbox == nil || replay == nil {
		return nil, errors.New("webhooks: NewReceiver needs a resolver, an inbox and a replay store (memstore and pgstore have both stores)")
	}
	cfg := receiverConfig{
		maxBodyBytes: DefaultMaxBodyBytes,
		prefix:       DefaultPathPrefix,
		replayTTL:    DefaultReplayTTL,
		retryAfter:   DefaultUnavailableRetryAfter,
		dropped:      make(map[string]bool),
	}
	WithDroppedHeaders(droppedHeaders...).applyReceiver(&cfg)
	for _, o := range opts {
		o.applyReceiver(&cfg)
	}
	cfg.clock = clockOrSystem(cfg.clock)
	cfg.logger = loggerOrDefault(cfg.logger)
	switch {
	case cfg.maxBodyBytes <= 0:
		return nil, fmt.Errorf("webhooks: WithMaxBodyBytes(%d): the limit must be positive", cfg.maxBodyBytes)
	case !strings.HasPrefix(cfg.prefix, "/") || !strings.HasSuffix(cfg.prefix, "/"):
		return nil, fmt.Errorf("webhooks: WithPathPrefix(%q): the prefix must start and end with '/'", cfg.prefix)
	case cfg.replayTTL <= 0:
		return nil, fmt.Errorf("webhooks: WithReplayTTL(%v): the TTL must be positive", cfg.replayTTL)
	case cfg.retryAfter < time.Second:
		return nil, fmt.Errorf("webhooks: WithUnavailableRetryAfter(%v): use at least one second", cfg.retryAfter)
	}
	g := &Receiver{resolver: resolver, inbox: inbox, replay: replay, cfg: cfg}
	if cfg.subscribe {
		g.subscribed = new(patterns[struct{}])
		for _, p := range cfg.subscriptions {
			if err := g.subscribed.add(p, struct{}{}); err != nil {
				return nil, fmt.Errorf("WithSubscriptions: %w", err)
			}
		}
	}
	return g, nil
}

// Receive verifies req for route and stores it in the inbox. It never
// panics: a panicking verifier or store yields StatusInternalError. The error
// is nil exactly when the status is StatusAccepted, StatusDuplicate,
// StatusIgnored or StatusHandshake; otherwise it says why (a *VerificationError,
// ErrUnknownProvider, ErrPayloadConflict, or the store's error) and is safe
// to log: it holds no secret.
func (g *Receiver) Receive(ctx context.Context, route Route, req *Request) (res ReceiveResult, err error) {
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
	if req.Method == http.MethodGet {
		// GET carries challenges only; a verifier that found an event
		// in one is broken, and nothing is stored.
		return ReceiveResult{Status: StatusInternalError}, fmt.Errorf("webhooks: the verifier for %q accepted a GET request without answering it as a challenge", route.Provider)
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
		Answer:    ver.Answer,
	}
	if g.subscribed != nil {
		if _, ok := g.subscribed.match(ver.EventType); !ok {
			res.Status = StatusIgnored
			return res, nil
		}
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
	seen, err := g.replay.Register(ctx, ReplayRegistration{
		Key:           ReplayKey{Provider: route.Provider, Tenant: route.Tenant, Key: replayKey},
		PayloadSHA256: digest,
		Now:           now,
		ExpiresAt:     now.Add(g.cfg.replayTTL),
	})
	if err != nil {
		res.Status = StatusUnavailable
		return res, fmt.Errorf("webhooks: replay store: %w", err)
	}
	if seen == ReplayConflict && replayKey != ver.EventID {
		// A replay key of its own (a nonce) reused with other content.
		res.Status = StatusConflict
		return res, fmt.Errorf("%w: replay key %q", ErrPayloadConflict, replayKey)
	}
	// ReplaySeen still goes on to Enqueue: an earlier delivery may have
	// registered the key and then failed to store (503), and its retry must
	// be stored now. The inbox answers duplicate when it was stored. A
	// conflict on the event ID itself goes on too, never to create an item:
	// where the inbox has the item it keeps the conflicting delivery in its
	// quarantine for operators.

	enq, err := g.inbox.Enqueue(ctx, Envelope{
		Key:           res.Key,
		EventType:     ver.EventType,
		Payload:       req.Body,
		Headers:       g.keptHeaders(req.Header, v),
		PayloadSHA256: digest,
		KeyID:         ver.KeyID,
		APIVersion:    ver.APIVersion,
		OccurredAt:    ver.OccurredAt,
		ReceivedAt:    now,
		ExistingOnly:  seen == ReplayConflict,
		ReplayIfDead:  g.cfg.redeliveryReplay,
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
		if enq.Replayed {
			// A provider's redelivery of a dead letter replayed it.
			res.Status = StatusAccepted
			g.cfg.logger.InfoContext(ctx, "dead letter replayed by the provider's redelivery", "provider", route.Provider, "tenant", route.Tenant, "event_id", ver.EventID)
			if g.cfg.waker != nil {
				g.cfg.waker.Wake()
			}
		}
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
func (g *Receiver) keptHeaders(h http.Header, v Verifier) http.Header {
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

// ServeHTTP serves POST {prefix}{provider}[/{tenant}], and GET there for
// providers whose verifier answers GET challenges (GETVerifier). It answers
// 202 for a new webhook, 200 for a duplicate or an ignored event type (see
// WithSubscriptions), 409 for an event ID reused with another payload, 401
// when verification fails, 404 for an unknown provider or path, 400 for a
// tenant, event ID or type that cannot be stored (see MaxKeyBytes), 405 for
// other methods, 413 for bodies over the limit, 503 with Retry-After when a
// store fails, and 500 if a verifier or store panics. A provider challenge
// the verifier answered (see Verification.Handshake) gets the verifier's
// response and stores nothing; a provider that expects its own answer to a
// delivery (Verification.Answer) gets it for 202 and 200. Other bodies are
// small JSON objects such as {"status":"rejected","reason":"bad_signature"}.
func (g *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := g.route(r)
	if !ok {
		writeJSON(w, http.StatusNotFound, responseBody{Status: "not_found"})
		return
	}
	switch {
	case r.Method == http.MethodPost:
	case r.Method == http.MethodGet && g.acceptsGET(route.Provider):
		// A provider's GET challenge: no body to read.
		r.Body = http.NoBody
	default:
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
	switch res.Status {
	case StatusHandshake:
		writeResponse(w, res.Handshake)
		return
	case StatusAccepted, StatusDuplicate, StatusIgnored:
		if res.Answer != nil {
			writeResponse(w, res.Answer)
			return
		}
	case StatusUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(int(g.cfg.retryAfter/time.Second)))
	}
	writeJSON(w, res.Status.HTTPStatus(), responseBody{Status: res.Status.String(), Reason: string(res.Reason), EventID: res.Key.EventID})
}

// acceptsGET reports whether the provider's verifier answers GET
// challenges (GETVerifier).
func (g *Receiver) acceptsGET(provider string) bool {
	v, ok := g.resolver.Lookup(provider)
	if !ok {
		return false
	}
	gv, ok := v.(GETVerifier)
	return ok && gv.AcceptsGET()
}

func (g *Receiver) tooLarge(w http.ResponseWriter, r *http.Request, route Route) {
	g.cfg.logger.WarnContext(r.Context(), "webhook body over the limit", "provider", route.Provider, "tenant", route.Tenant, "limit_bytes", g.cfg.maxBodyBytes)
	// The rest of the body is not read; close the connection rather than
	// leave it in an unknown state.
	w.Header().Set("Connection", "close")
	writeJSON(w, http.StatusRequestEntityTooLarge, responseBody{Status: "too_large"})
}

// route finds the provider and tenant of r: from the {provider} and
// {tenant} wildcards of a Go 1.22 route pattern when it has them, else from
// the escaped path after the prefix, so an encoded slash cannot split a
// segment. "." and ".." segments are refused.
func (g *Receiver) route(r *http.Request) (Route, bool) {
	if provider := r.PathValue("provider"); provider != "" {
		return checkRoute(provider, r.PathValue("tenant"))
	}
	path := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(path, g.cfg.prefix)
	if !ok {
		g.warnMount(r, path)
		return Route{}, false
	}
	// One trailing slash is accepted: /webhooks/stripe/ is /webhooks/stripe.
	rest = strings.TrimSuffix(rest, "/")
	rawProvider, rawTenant, hasTenant := strings.Cut(rest, "/")
	if rawProvider == "" || strings.Contains(rawTenant, "/") || (hasTenant && rawTenant == "") {
		return Route{}, false
	}
	provider, err1 := url.PathUnescape(rawProvider)
	tenant, err2 := url.PathUnescape(rawTenant)
	if err1 != nil || err2 != nil {
		return Route{}, false
	}
	return checkRoute(provider, tenant)
}

func checkRoute(provider, tenant string) (Route, bool) {
	for _, seg := range []string{provider, tenant} {
		if seg == "." || seg == ".." || strings.Contains(seg, "/") {
			return Route{}, false
		}
	}
	return Route{Provider: provider, Tenant: tenant}, provider != ""
}

// mountWarningEvery is how often a request outside the path prefix is
// logged; the rest are answered 404 quietly.
const mountWarningEvery = time.Minute

// warnMount logs a request whose path is outside the prefix, at most once
// a minute: it usually means the Receiver is mounted under a router path
// its prefix does not name, and every webhook would be refused with 404.
func (g *Receiver) warnMount(r *http.Request, path string) {
	now := g.cfg.clock.Now().UnixNano()
	last := g.lastMountWarning.Load()
	if last != 0 && now-last < int64(mountWarningEvery) || !g.lastMountWarning.CompareAndSwap(last, now) {
		return
	}
	g.cfg.logger.ErrorContext(r.Context(), "webhook path is outside the receiver's path prefix; answering 404. "+
		"If the receiver is mounted under a router path, set WithPathPrefix to the path it sees (for example \"/api/webhooks/\"), "+
		"use http.StripPrefix with WithPathPrefix(\"/\"), or route a pattern with a {provider} wildcard",
		"path_prefix", g.cfg.prefix, "path", path)
}

func (g *Receiver) log(ctx context.Context, route Route, res ReceiveResult, err error) {
	attrs := []any{"provider", route.Provider, "tenant", route.Tenant, "status", res.Status.String()}
	if res.Key.EventID != "" {
		attrs = append(attrs, "event_id", res.Key.EventID, "event_type", res.EventType)
	}
	switch res.Status {
	case StatusAccepted, StatusDuplicate, StatusHandshake:
		g.cfg.logger.DebugContext(ctx, "webhook received", attrs...)
	case StatusIgnored:
		g.cfg.logger.InfoContext(ctx, "webhook ignored: the host does not subscribe to its event type", attrs...)
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

func writeResponse(w http.ResponseWriter, h *Response) {
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
