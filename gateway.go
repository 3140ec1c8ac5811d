package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Receiver defaults that hosts build their own configuration on: the
// paths they route, their http.Server's limits and timeouts, their memory,
// their own 503 answers. (The in-flight bounds' defaults are in
// inflight.go.)
const (
	// DefaultMaxBodyBytes is the largest request body (WithMaxBodyBytes).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultPathPrefix is the path the Receiver serves (WithPathPrefix).
	DefaultPathPrefix = "/webhooks/"
	// DefaultReceiverStoreTimeout bounds the credential lookup and store
	// calls of one receive (WithReceiverStoreTimeout): Slack and Discord
	// give up on an answer after 3 seconds, Shopify after 5, GitHub after
	// 10, so 2 seconds leaves a slow store time to answer 503 before the
	// shortest of them stops listening.
	DefaultReceiverStoreTimeout = 2 * time.Second
	// DefaultUnavailableRetryAfter is the Retry-After of 503 answers
	// (WithUnavailableRetryAfter).
	DefaultUnavailableRetryAfter = 5 * time.Second
	// DefaultMaxInFlight bounds the requests a Receiver handles at once
	// (WithMaxInFlight): with 1 MiB bodies, at most 128 MiB of them in
	// memory.
	DefaultMaxInFlight = 128
)

// The Receiver's other defaults, which its options state.
const (
	defaultReplayTTL            = 24 * time.Hour
	defaultMaxStoredHeaders     = 64
	defaultMaxStoredHeaderBytes = 16 << 10
)

// droppedHeaders are HTTP's own credential headers, which a Receiver never
// stores with an item. A provider's are its verifier's to declare
// (SecretHeaderVerifier).
var droppedHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// SecretHeaderVerifier is an optional Verifier capability: the request
// headers that carry the request's signature or a credential (a signature
// header and its fallback names, a shared token, a password, another
// signature the provider sends beside the one verified). The Receiver
// never stores those headers, with an item or with a quarantined
// conflicting delivery: a body and its signature are a delivery anyone
// who reads the inbox could send again. Every verifier of this module
// implements it, deriving the names from its options. The Receiver calls
// it for each request, matches the names without regard to case and does
// not modify the slice.
type SecretHeaderVerifier interface {
	SecretHeaders() []string
}

// ReceiveStatus is the outcome of Receiver.Receive.
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
	StatusInvalid                                  // 400: a tenant, event ID, type or replay key that cannot be stored (valid UTF-8 without NUL, at most 512 bytes)
	StatusIgnored                                  // 200: verified, but of an event type the host has no handler for (see WithProcessor); not stored
	StatusNotFound                                 // 404: a tenant path segment for a provider that serves none (see TenantScoped and WithTenants)
)

// maxKeyBytes bounds the tenant, event ID, event type and replay key of a
// webhook. Each must also be valid UTF-8 without NUL bytes, so every store
// (PostgreSQL text included) can hold it; other requests get StatusInvalid.
const maxKeyBytes = 512

// ReasonInvalidKey is the Reason of StatusInvalid results.
const ReasonInvalidKey Reason = "invalid_key"

// checkKey reports why s cannot be stored as part of a key, or nil.
func checkKey(what, s string) error {
	switch {
	case len(s) > maxKeyBytes:
		return fmt.Errorf("webhooks: the %s is %d bytes; at most %d are allowed", what, len(s), maxKeyBytes)
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
	StatusNotFound:        "not_found",
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
	case StatusUnknownProvider, StatusNotFound:
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

// ReceiveResult is the outcome of Receiver.Receive.
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

// Receiver verifies inbound webhooks and stores them in the inbox. It is
// an http.Handler serving POST {prefix}{provider} and POST
// {prefix}{provider}/{tenant} (see WithPathPrefix for mounting it under a
// router); Receive is the same pipeline without HTTP, for a host that takes
// deliveries another way. A Receiver is safe for concurrent use.
type Receiver struct {
	resolver Resolver
	inbox    Enqueuer
	cfg      receiverConfig
	// inFlight admits the requests being handled (WithMaxInFlight and the
	// other bounds of inflight.go).
	inFlight *inFlight

	// lastMountWarning rate-limits the log line about requests outside the
	// path prefix (Unix nanoseconds of the last one).
	lastMountWarning atomic.Int64
}

type receiverConfig struct {
	replay       ReplayStore // WithReplayStore; nil for none
	maxBodyBytes int64
	prefix       string
	replayTTL    time.Duration
	retryAfter   time.Duration
	clock        Clock
	logger       *slog.Logger
	waker        LocalProcessor
	// handled tells the types stored; nil stores every type.
	handled HandledTypes
	dropped map[string]bool
	tenants map[string]bool // WithTenants
	// ordering holds the host's ordering functions by provider
	// (WithOrdering); a nil function turns keys off.
	ordering map[string]OrderingFunc
	fanOut   FanOutSupport // the inbox's
	// routerChecked: the jobs come from Handlers (or a Processor's),
	// checked against the inbox by NewReceiver.
	routerChecked bool

	redeliveryReplay bool
	storeTimeout     time.Duration
	limits           inFlightConfig
	maxHeaders       int
	maxHeaderBytes   int
	observer         Observer
	linker           TraceLinker // observer's, when it is one
}

// ReceiverOption configures a Receiver. The SharedOptions (WithClock,
// WithLogger, WithObserver) are ReceiverOptions too.
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
// prefix must start and end with '/'; it is the path as the Receiver sees
// it. Defaults to DefaultPathPrefix ("/webhooks/").
//
// The Receiver finds the provider and tenant, in this order: from the
// {provider} and {tenant} wildcards of a Go 1.22 route pattern, as in
// mux.Handle("POST /hooks/{provider}/{tenant}", rcv); after the prefix,
// when the path starts with it; after the http.ServeMux subtree pattern
// that routed the request, as in mux.Handle("/hooks/", rcv); or after the
// part of the path a handler before it cut off, as
// http.StripPrefix("/hooks", rcv) and http.StripPrefix("/hooks/", rcv)
// do (Request.RequestURI still holds the whole path). A sub-router is read
// the same way: its own pattern, under the cut of the router above it.
// Under a router that keeps the whole path and sets no pattern, set the
// prefix to the path the Receiver sees (for example "/api/webhooks/").
//
// A path it cannot read one way only (a subtree that matches the path
// both before and after a cut, with different remainders), or not at
// all, is answered 404 and logged as a mounting mistake, naming the
// prefix, the path seen and the pattern.
func WithPathPrefix(prefix string) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.prefix = prefix })
}

// WithReplayStore sets the ReplayStore that guards what the inbox cannot:
// the replay keys verifiers give of their own (Verification.ReplayKey),
// and the event type of a signed body where the type is not signed
// (UnsignedFields). memstore.NewReplay and a pgstore.Store are
// ReplayStores. Defaults to none, which most providers need: NewReceiver
// then refuses a resolver that lists a verifier that needs one
// (NeedsReplayStore), naming its provider, and a delivery whose
// verification needs one is answered 500.
func WithReplayStore(rs ReplayStore) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.replay = rs })
}

// WithReplayTTL sets how long a verifier's replay key (Verification.ReplayKey)
// and a body's event type stay registered in the ReplayStore. Defaults to
// 24 hours.
func WithReplayTTL(d time.Duration) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.replayTTL = d })
}

// WithUnavailableRetryAfter sets the Retry-After the handler sends with
// 503 answers, telling the provider when to try again. Defaults to
// DefaultUnavailableRetryAfter (5 seconds).
func WithUnavailableRetryAfter(d time.Duration) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.retryAfter = d })
}

// LocalProcessor is what a Receiver asks of the Processor running in the
// same process (WithProcessor): to be woken after each new item, so that
// it is handled at once rather than at the next poll, and which event
// types it handles. *Processor implements it; a host's tests may fake it.
// Wake must not block.
type LocalProcessor interface {
	Wake()
	HandledTypes
}

// HandledTypes tells which event types have a handler: Handles reports
// whether a dispatch of an event of eventType reaches one. *Mux and
// *Processor implement it, and so may a Dispatcher of the host's own (see
// Processor.Handles). A Receiver stores only the types it handles
// (WithProcessor, WithHandledTypes). Handles must be safe for concurrent
// use.
type HandledTypes interface {
	Handles(eventType string) bool
}

// WithProcessor connects the Receiver to the Processor running in the
// same process, p. After each new item the Receiver wakes p, so the item
// is handled at once rather than at the next poll. And a verified delivery
// of a type p has no handler for (p.Handles reports false: see
// Processor.Handles and Mux.Handles) is answered 200 with status "ignored"
// (or the provider's own answer), logged and not stored, so GitHub's ping
// and the types the host never handles do not fill the inbox, and the
// handler patterns are written once, on the Mux. A Mux's handlers are read
// at each request: a handler registered later takes effect at once.
// WithHandledTypes given after WithProcessor replaces what it ignores.
// NewReceiver refuses a nil *Processor. Defaults to no processor: nobody
// is woken, and every type is stored.
func WithProcessor(p LocalProcessor) ReceiverOption {
	return receiverOption(func(c *receiverConfig) {
		c.waker, c.handled = nil, nil
		if p != nil {
			c.waker, c.handled = p, p
		}
	})
}

// WithHandledTypes makes the Receiver ignore, as WithProcessor does, the
// verified deliveries of the types h does not handle, for a Receiver whose
// Processor runs in another process: give it the *Mux the processes
// build. nil stores every type, given after WithProcessor too, for a host
// that keeps unhandled types to replay them once it handles them; a nil
// *Mux is refused by NewReceiver. Defaults to what WithProcessor's
// processor handles, or every type.
func WithHandledTypes(h HandledTypes) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.handled = h })
}

// OrderingFunc returns an event's ordering key and version (see
// Ordering) from a verified request, for WithOrdering. v is the
// verification, with the catalog's ordering in v.Ordering. It must read
// signed content only (the body, when v.Unsigned says it is signed): an
// unsigned header would let anyone who holds one delivery choose the
// order of others. An error it returns is answered 503, so the provider
// delivers again.
type OrderingFunc func(req *Request, v Verification) (Ordering, error)

// WithOrdering replaces, for provider, the ordering key and version the
// verifier derives (the catalog's default, see CATALOG.md) with what f
// returns; a nil f gives the provider's events no key, so its ordered
// handlers run them in parallel. Keys apply to the jobs of Ordered
// handlers only (see Handler). Given twice for one provider, the last
// wins.
func WithOrdering(provider string, f OrderingFunc) ReceiverOption {
	return receiverOption(func(c *receiverConfig) {
		if c.ordering == nil {
			c.ordering = make(map[string]OrderingFunc)
		}
		c.ordering[provider] = f
	})
}

// WithDroppedHeaders adds headers that are not stored with items, for
// example one carrying a provider's shared token that a verifier of the
// host's own does not declare. Authorization, Proxy-Authorization and
// Cookie are always dropped, and so are the headers a verifier declares
// (SecretHeaderVerifier): its signature and credential headers. Defaults
// to none beyond those.
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

// WithTenants serves tenant path segments (POST
// {prefix}{provider}/{tenant}) for the named provider keys whatever their
// verifiers report, for hosts whose own CredentialResolver gives each
// tenant its own secrets, and an unknown tenant none, without reporting
// it (TenantScoped). Name a provider only then: with secrets shared by
// tenants, the path, which whoever sends a request chooses, would choose
// the tenant, and one delivery would be stored again under every tenant
// anyone writes. Defaults to none: a provider serves tenant segments only
// when its verifier reports PerTenant, as verifiers built on
// TenantSecrets do; its other tenant paths are answered 404.
func WithTenants(providers ...string) ReceiverOption {
	return receiverOption(func(c *receiverConfig) {
		for _, p := range providers {
			c.tenants[p] = true
		}
	})
}

// WithReceiverStoreTimeout bounds the credential lookup and the store
// calls of each receive, together: past it the answer is 503 with
// Retry-After and nothing is acknowledged, so a stalled database does not
// hold providers' requests. Defaults to DefaultReceiverStoreTimeout
// (2 seconds).
func WithReceiverStoreTimeout(d time.Duration) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.storeTimeout = d })
}

// WithStoredHeaderLimits bounds the request headers kept with an item: at
// most fields header fields and bytes bytes of names and values. Headers
// over either bound are left out (in order of name) and the number left out
// is logged; verification always sees every header. Defaults to 64 fields
// and 16 KiB.
func WithStoredHeaderLimits(fields, bytes int) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.maxHeaders, c.maxHeaderBytes = fields, bytes })
}

// NewReceiver returns a Receiver that looks verifiers up in resolver and
// stores webhooks with inbox. A resolver that lists its providers (as
// *Registry does) is checked against the options: without
// WithReplayStore, a provider whose verifier needs a ReplayStore
// (NeedsReplayStore) is an error naming it.
func NewReceiver(resolver Resolver, inbox Enqueuer, opts ...ReceiverOption) (*Receiver, error) {
	if resolver == nil || inbox == nil {
		return nil, errors.New("webhooks: NewReceiver needs a resolver and an inbox (memstore.NewInbox, pgstore.New)")
	}
	cfg := receiverConfig{
		maxBodyBytes: DefaultMaxBodyBytes,
		prefix:       DefaultPathPrefix,
		replayTTL:    defaultReplayTTL,
		retryAfter:   DefaultUnavailableRetryAfter,
		dropped:      make(map[string]bool),
		tenants:      make(map[string]bool),

		storeTimeout:   DefaultReceiverStoreTimeout,
		limits:         defaultInFlightConfig(),
		maxHeaders:     defaultMaxStoredHeaders,
		maxHeaderBytes: defaultMaxStoredHeaderBytes,
	}
	WithDroppedHeaders(droppedHeaders...).applyReceiver(&cfg)
	for _, o := range opts {
		o.applyReceiver(&cfg)
	}
	cfg.clock = clockOrSystem(cfg.clock)
	cfg.logger = loggerOrDefault(cfg.logger)
	cfg.linker, _ = cfg.observer.(TraceLinker)
	switch {
	case cfg.maxBodyBytes <= 0:
		return nil, fmt.Errorf("webhooks: WithMaxBodyBytes(%d): the limit must be positive", cfg.maxBodyBytes)
	case !strings.HasPrefix(cfg.prefix, "/") || !strings.HasSuffix(cfg.prefix, "/"):
		return nil, fmt.Errorf("webhooks: WithPathPrefix(%q): the prefix must start and end with '/'", cfg.prefix)
	case cfg.replayTTL <= 0:
		return nil, fmt.Errorf("webhooks: WithReplayTTL(%v): the TTL must be positive", cfg.replayTTL)
	case cfg.retryAfter < time.Second:
		return nil, fmt.Errorf("webhooks: WithUnavailableRetryAfter(%v): use at least one second", cfg.retryAfter)
	case cfg.storeTimeout <= 0:
		return nil, fmt.Errorf("webhooks: WithReceiverStoreTimeout(%v): the timeout must be positive", cfg.storeTimeout)
	case cfg.maxHeaders < 0 || cfg.maxHeaderBytes < 0:
		return nil, fmt.Errorf("webhooks: WithStoredHeaderLimits(%d, %d): the limits must not be negative", cfg.maxHeaders, cfg.maxHeaderBytes)
	case nilPointer(cfg.waker):
		return nil, fmt.Errorf("webhooks: WithProcessor was given a nil %T; give it the processor NewProcessor returned, or leave the option out", cfg.waker)
	case nilPointer(cfg.handled):
		return nil, fmt.Errorf("webhooks: WithHandledTypes was given a nil %T; give it the *Mux the processes build, or nil to store every type", cfg.handled)
	case nilPointer(cfg.replay):
		return nil, fmt.Errorf("webhooks: WithReplayStore was given a nil %T; give it a ReplayStore, or leave the option out", cfg.replay)
	}
	if err := checkReplayStore(resolver, cfg.replay); err != nil {
		return nil, err
	}
	cfg.fanOut = FanOutOf(inbox)
	if n, ok := cfg.handled.(fanOutNeeder); ok {
		var hs Handlers
		switch h := cfg.handled.(type) {
		case Handlers:
			hs = h.clone()
			cfg.handled = hs
		case *Processor:
			hs = h.handlers
		}
		for _, h := range hs {
			if err := checkTypePriorities(h.TypePriorities); err != nil {
				return nil, fmt.Errorf("webhooks: NewReceiver: handler %q: %w", h.Name, err)
			}
		}
		if err := checkFanOut("NewReceiver", inbox, n.needs(), hs); err != nil {
			return nil, err
		}
		if err := checkPriorities("NewReceiver", inbox, hs); err != nil {
			return nil, err
		}
		cfg.routerChecked = true
	}
	if err := cfg.limits.resolve(cfg.maxBodyBytes); err != nil {
		return nil, err
	}
	g := &Receiver{resolver: resolver, inbox: inbox, cfg: cfg, inFlight: newInFlight(cfg.limits)}
	return g, nil
}

// checkReplayStore refuses, without a ReplayStore, a resolver that lists
// providers whose verifiers need one, naming them all.
func checkReplayStore(resolver Resolver, replay ReplayStore) error {
	lister, ok := resolver.(interface{ Providers() []string })
	if replay != nil || !ok {
		return nil
	}
	var need []string
	for _, p := range lister.Providers() {
		if v, ok := resolver.Lookup(p); ok && NeedsReplayStore(v) {
			need = append(need, strconv.Quote(p))
		}
	}
	if len(need) == 0 {
		return nil
	}
	return fmt.Errorf("webhooks: NewReceiver: the verifiers of %s need a replay store (their replay keys, or the event types their signatures do not cover): "+
		"pass WithReplayStore(memstore.NewReplay()) or WithReplayStore(store) with a pgstore.Store", strings.Join(need, ", "))
}

// nilPointer reports whether v is a nil pointer in a non-nil interface,
// whose methods would panic when called.
func nilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// Receive verifies req for route and stores it in the inbox. It never
// panics: a panicking verifier or store yields StatusInternalError. The error
// is nil exactly when the status is StatusAccepted, StatusDuplicate,
// StatusIgnored or StatusHandshake; otherwise it says why (a *VerificationError,
// ErrUnknownProvider, ErrPayloadConflict, or the store's error) and is safe
// to log: it holds no secret. The store may keep req.Body as the item's
// payload: do not change it once Receive is called.
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
	var (
		traceLink string
		storeTime time.Duration
	)
	if obs := g.cfg.observer; obs != nil {
		ctx = obs.StartReceive(ctx, ReceiveStartData{Route: route})
		if g.cfg.linker != nil {
			traceLink = g.cfg.linker.TraceLink(ctx)
		}
		obsCtx := ctx // not the deadline's context below, cancelled first
		defer func() {
			obs.EndReceive(obsCtx, ReceiveEndData{Route: route, Result: res, Err: err, StoreTime: storeTime})
		}()
	}
	v, ok := g.resolver.Lookup(route.Provider)
	if !ok {
		return ReceiveResult{Status: StatusUnknownProvider}, fmt.Errorf("%w: %q", ErrUnknownProvider, route.Provider)
	}
	if err := g.checkTenant(route, v); err != nil {
		return ReceiveResult{Status: StatusNotFound}, err
	}
	if err := checkKey("tenant", route.Tenant); err != nil {
		return ReceiveResult{Status: StatusInvalid, Reason: ReasonInvalidKey}, err
	}
	// The credential lookup and the store calls share one deadline: past
	// it the answer is 503 and nothing is acknowledged.
	ctx, cancel := context.WithTimeoutCause(ctx, g.cfg.storeTimeout, errStoreTimeout)
	defer cancel()
	ver, err := v.Verify(ctx, route, req)
	if err != nil {
		var ve *VerificationError
		if errors.As(err, &ve) {
			return ReceiveResult{Status: StatusRejected, Reason: ve.Reason}, err
		}
		return ReceiveResult{Status: StatusUnavailable}, fmt.Errorf("webhooks: verifier for %q could not decide: %w", route.Provider, timeoutCause(ctx, err))
	}
	if ver.Handshake != nil {
		return ReceiveResult{Status: StatusHandshake, Handshake: ver.Handshake, EventType: ver.EventType}, nil
	}
	if req.Method == http.MethodGet && !deliversByGET(v) {
		// GET carries challenges only, but for a GETDeliverer; a
		// verifier that found an event in one is broken, and nothing is
		// stored.
		return ReceiveResult{Status: StatusInternalError}, fmt.Errorf("webhooks: the verifier for %q accepted a GET request without answering it as a challenge", route.Provider)
	}
	if ver.EventID == "" {
		err := Reject(ReasonMissingEventID, "the verifier returned no event ID")
		return ReceiveResult{Status: StatusRejected, Reason: err.Reason}, err
	}
	if err := errors.Join(checkKey("event ID", ver.EventID), checkKey("event type", ver.EventType), checkKey("replay key", ver.ReplayKey),
		checkKey("API version", ver.APIVersion), checkKey("key ID", ver.KeyID)); err != nil {
		return ReceiveResult{Status: StatusInvalid, Reason: ReasonInvalidKey}, err
	}
	if checkKey("trace link", traceLink) != nil {
		traceLink = "" // the observer's own; never a reason to refuse a webhook
	}
	res = ReceiveResult{
		Key:       InboxKey{Provider: route.Provider, Tenant: route.Tenant, EventID: ver.EventID},
		EventType: ver.EventType,
		Answer:    ver.Answer,
	}
	var jobs []Job
	if router, ok := g.cfg.handled.(JobRouter); ok {
		jobs = router.Jobs(route.Provider, ver.EventType)
		if len(jobs) == 0 {
			res.Status = StatusIgnored
			return res, nil
		}
		if len(jobs) == 1 && jobs[0] == (Job{}) {
			jobs = nil // the default handler's job, which every store keeps
		}
	} else if g.cfg.handled != nil && !g.cfg.handled.Handles(ver.EventType) {
		res.Status = StatusIgnored
		return res, nil
	}
	ordering := ver.Ordering
	if f, ok := g.cfg.ordering[route.Provider]; ok {
		ordering = Ordering{}
		if f != nil {
			if ordering, err = f(req, ver); err != nil {
				res.Status = StatusUnavailable
				return res, fmt.Errorf("webhooks: the ordering function for %q failed: %w", route.Provider, err)
			}
		}
	}
	if err := g.checkJobs(jobs, ordering); err != nil {
		res.Status = StatusInternalError
		return res, fmt.Errorf("webhooks: provider %q: %w", route.Provider, err)
	}
	// What is stored: the verifier's redacted payload when it has one,
	// never the signature headers (keptHeaders); the digest is of it.
	payload := req.Body
	if ver.Payload != nil {
		payload = ver.Payload
	}
	digest := ver.PayloadSHA256
	if digest == ([sha256.Size]byte{}) {
		digest = sha256.Sum256(payload)
	}
	now := g.cfg.clock.Now()

	if g.cfg.observer != nil {
		storeStart := time.Now()
		defer func() { storeTime = time.Since(storeStart) }()
	}
	ownKey := ver.ReplayKey != "" && ver.ReplayKey != ver.EventID
	if (ownKey || ver.Unsigned.guardsType()) && g.cfg.replay == nil {
		// Never stored unguarded: the provider retries the 500, and the
		// delivery is stored once the host configures a replay store.
		res.Status = StatusInternalError
		return res, fmt.Errorf("webhooks: the verifier for %q needs a replay store (a replay key of its own, or an event type its signature does not cover) and the Receiver has none: pass WithReplayStore to NewReceiver", route.Provider)
	}
	if ownKey {
		// A replay key of its own (a nonce, say) is guarded by the replay
		// store. The event ID itself needs no guard beside the inbox,
		// which deduplicates it for as long as it keeps the item: a second
		// registration would only cost a second commit per webhook.
		seen, err := g.register(ctx, route, ver.ReplayKey, digest, now)
		if err != nil {
			res.Status = StatusUnavailable
			return res, err
		}
		if seen == ReplayConflict {
			res.Status = StatusConflict
			return res, fmt.Errorf("%w: replay key %q", ErrPayloadConflict, ver.ReplayKey)
		}
		// ReplaySeen goes on to Enqueue: an earlier delivery may have
		// registered the key and then failed to store (503), and its
		// retry must be stored now. The inbox answers duplicate when it
		// was stored.
	}
	if ver.Unsigned.guardsType() {
		// The body is signed and its type is not: the body is registered
		// with its type, so that a copy of a captured delivery cannot be
		// handled as another kind of event.
		seen, err := g.register(ctx, route, bodyTypeKey(digest), sha256.Sum256([]byte(ver.EventType)), now)
		if err != nil {
			res.Status = StatusUnavailable
			return res, err
		}
		if seen == ReplayConflict {
			res.Status = StatusConflict
			return res, fmt.Errorf("%w: event %q of type %q", ErrTypeConflict, ver.EventID, ver.EventType)
		}
	}

	headers, over := g.keptHeaders(req.Header, v)
	if over > 0 {
		g.cfg.logger.WarnContext(ctx, "webhook headers over the stored-header limits were not stored", "provider", route.Provider, "tenant", route.Tenant,
			"event_id", ver.EventID, "headers_not_stored", over, "max_headers", g.cfg.maxHeaders, "max_header_bytes", g.cfg.maxHeaderBytes)
	}
	env := Envelope{
		Key:           res.Key,
		EventType:     ver.EventType,
		Payload:       payload,
		Headers:       headers,
		PayloadSHA256: digest,
		KeyID:         ver.KeyID,
		APIVersion:    ver.APIVersion,
		OccurredAt:    ver.OccurredAt,
		ReceivedAt:    now,
		TraceLink:     traceLink,
		ReplayIfDead:  g.cfg.redeliveryReplay,
		Jobs:          jobs,
		Ordering:      ordering,
	}
	enq, err := g.inbox.Enqueue(ctx, env)
	if err != nil {
		res.Status = StatusUnavailable
		return res, fmt.Errorf("webhooks: inbox store: %w", timeoutCause(ctx, err))
	}
	if enq.Outcome == EnqueueConflict && ver.Unsigned.EventID {
		// The ID is not signed, so the first item under it may be a
		// captured body sent ahead of this delivery under its ID: this
		// one is stored too, under a key of its own payload, and both are
		// flagged (the store counted the conflict on the first).
		alt := conflictKey(ver.EventID, digest)
		if checkKey("event ID", alt) == nil {
			env.Key.EventID, res.Key.EventID = alt, alt
			if enq, err = g.inbox.Enqueue(ctx, env); err != nil {
				res.Status = StatusUnavailable
				return res, fmt.Errorf("webhooks: inbox store: %w", timeoutCause(ctx, err))
			}
			g.cfg.logger.WarnContext(ctx, "webhook reused an unsigned event ID with another payload: both deliveries are kept, this one under its own key",
				"provider", route.Provider, "tenant", route.Tenant, "event_id", ver.EventID, "stored_as", alt, "outcome", enq.Outcome.String())
		}
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

// checkJobs refuses jobs the inbox cannot keep (from a JobRouter of the
// host's own, which NewReceiver cannot check) and an invalid ordering,
// so that nothing is stored with fewer jobs, or out of order, for want
// of a capability.
func (g *Receiver) checkJobs(jobs []Job, ordering Ordering) error {
	if g.cfg.routerChecked || jobs == nil {
		return CheckOrdering(ordering)
	}
	env := Envelope{Jobs: jobs, Ordering: ordering}
	if err := env.CheckJobs(); err != nil {
		return err
	}
	for _, j := range jobs {
		switch {
		case (j.Handler != "" || len(jobs) > 1) && !g.cfg.fanOut.Handlers:
			return fmt.Errorf("the JobRouter asks for handler %q's job, and the inbox (%T) keeps one job per event: use memstore or pgstore", j.Handler, g.inbox)
		case j.Ordered && !g.cfg.fanOut.OrderingKeys:
			return fmt.Errorf("the JobRouter asks for an ordered job of handler %q, and the inbox (%T) does not run ordering keys: use memstore or pgstore", j.Handler, g.inbox)
		case j.Priority != 0 && !FlowOf(g.inbox).Priorities:
			return fmt.Errorf("the JobRouter asks for a job of handler %q of priority %d, and the inbox (%T) does not keep jobs' priorities: use memstore or pgstore", j.Handler, j.Priority, g.inbox)
		}
	}
	return nil
}

// register registers key with the replay store, guarded per provider.
func (g *Receiver) register(ctx context.Context, route Route, key string, digest [sha256.Size]byte, now time.Time) (ReplayOutcome, error) {
	seen, err := g.cfg.replay.Register(ctx, ReplayRegistration{
		Provider:      route.Provider,
		Key:           key,
		PayloadSHA256: digest,
		Now:           now,
		ExpiresAt:     now.Add(g.cfg.replayTTL),
	})
	if err != nil {
		return 0, fmt.Errorf("webhooks: replay store: %w", timeoutCause(ctx, err))
	}
	return seen, nil
}

// bodyTypeKey is the replay key under which a body whose event type is
// not signed is registered with its type.
func bodyTypeKey(digest [sha256.Size]byte) string {
	return "body-type:" + hex.EncodeToString(digest[:])
}

// conflictSuffix joins an unsigned event ID to the payload digest of a
// conflicting delivery stored under a key of its own (see UnsignedFields).
const conflictSuffix = "#sha256:"

// conflictKey is the event ID a delivery that reused an unsigned event ID
// with another payload is stored under.
func conflictKey(eventID string, digest [sha256.Size]byte) string {
	return eventID + conflictSuffix + hex.EncodeToString(digest[:16])
}

// checkTenant refuses a route with a tenant for a provider that does not
// serve tenant routes (see TenantScoped and WithTenants).
func (g *Receiver) checkTenant(route Route, v Verifier) error {
	return checkTenant(g.cfg.tenants, route, v)
}

// checkTenant refuses a route with a tenant for a provider whose
// credentials are not per tenant (PerTenant) and that tenants does not
// name (WithTenants).
func checkTenant(tenants map[string]bool, route Route, v Verifier) error {
	if route.Tenant == "" || tenants[route.Provider] || PerTenant(v) {
		return nil
	}
	return fmt.Errorf("%w: provider %q, tenant %q", ErrTenantNotServed, route.Provider, route.Tenant)
}

// errStoreTimeout is the cause of a receive that ran out of time.
var errStoreTimeout = errors.New("webhooks: the store did not answer within the receive's store timeout (WithReceiverStoreTimeout)")

// timeoutCause adds the receive's own deadline to err when it is what
// ended the call.
func timeoutCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, errStoreTimeout) && !errors.Is(err, errStoreTimeout) {
		return fmt.Errorf("%w: %w", cause, err)
	}
	return err
}

// errReceivePanic is returned by Receive when a verifier or store panicked.
var errReceivePanic = errors.New("webhooks: a verifier or store panicked while receiving a webhook")

// keptHeaders copies h for storing: without the dropped headers and those
// v says carry secrets, and within the stored-header limits, taking names
// in sorted order so the same request always keeps the same headers. It
// returns how many header fields it left out for the limits.
func (g *Receiver) keptHeaders(h http.Header, v Verifier) (kept http.Header, over int) {
	var secret []string
	if sv, ok := v.(SecretHeaderVerifier); ok {
		secret = sv.SecretHeaders()
	}
	names := make([]string, 0, len(h))
	values := 0
	for k, vs := range h {
		if g.cfg.dropped[http.CanonicalHeaderKey(k)] || slices.ContainsFunc(secret, func(s string) bool { return strings.EqualFold(s, k) }) {
			continue
		}
		names = append(names, k)
		values += len(vs)
	}
	slices.Sort(names)
	kept = make(http.Header, min(len(names), g.cfg.maxHeaders))
	backing := make([]string, 0, values) // one allocation for every kept value
	size := 0
	for _, k := range names {
		vs := h[k]
		n := len(k)
		for _, v := range vs {
			n += len(v)
		}
		if len(kept) >= g.cfg.maxHeaders || size+n > g.cfg.maxHeaderBytes {
			over++
			continue
		}
		size += n
		start := len(backing)
		backing = append(backing, vs...)
		kept[k] = backing[start:len(backing):len(backing)]
	}
	return kept, over
}
