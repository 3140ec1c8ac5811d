package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// ServeHTTP serves POST {prefix}{provider}[/{tenant}] (see WithPathPrefix
// for where else it finds the provider), GET there for
// providers whose verifier answers GET challenges (GETVerifier), and HEAD
// (200 for a registered provider, nothing stored). It answers
// 202 for a new webhook, 200 for a duplicate or an ignored event type (see
// WithProcessor), 409 for an event ID reused with another payload, 401
// when verification fails, 404 for an unknown provider or path, 400 for a
// tenant, event ID or type that cannot be stored (valid UTF-8 without NUL, at most 512 bytes), 405 for
// other methods (GET is handed to the verifier of a GETVerifier or a
// GETDeliverer only), 413 for bodies over the limit, 408 for a body that did not
// arrive in time (WithBodyTimeout), 503 with Retry-After when a store fails
// or the request is over the in-flight bounds (WithMaxInFlight,
// WithMaxInFlightBytes and the shares), and 500 if a verifier or store panics. A provider challenge
// the verifier answered (see Verification.Handshake) gets the verifier's
// response and stores nothing; a provider that expects its own answer to a
// delivery (Verification.Answer) gets it for 202 and 200. Other bodies are
// small JSON objects such as {"status":"rejected","reason":"bad_signature"}:
// the status is the ReceiveStatus's name, or for the answers HTTP alone
// gives, "method_not_allowed" (405, with Allow), "too_large" (413),
// "timeout" (408), "bad_request" (400, a body that could not be read) and
// "not_found" (404, a path outside the prefix).
func (g *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := g.route(r)
	if !ok {
		writeJSON(w, http.StatusNotFound, responseBody{Status: "not_found"})
		return
	}
	switch {
	case r.Method == http.MethodPost:
	case r.Method == http.MethodHead:
		// A check that the endpoint exists (Trello makes one before it
		// registers a callback URL): answered for registered providers,
		// with nothing read, verified or stored.
		if v, ok := g.resolver.Lookup(route.Provider); !ok || g.checkTenant(route, v) != nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Allow", "POST, HEAD")
		w.WriteHeader(http.StatusOK)
		return
	case r.Method == http.MethodGet && g.acceptsGET(route.Provider):
		// A provider's GET challenge, or its GET delivery (GETDeliverer):
		// no body to read.
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
	// The body's bytes are reserved before it is read: its length, or
	// the most it may be when it comes without one.
	reserve := r.ContentLength
	switch {
	case r.Body == http.NoBody:
		reserve = 0
	case reserve < 0:
		reserve = g.cfg.maxBodyBytes
	}
	client, provider := clientOf(r.RemoteAddr), route.Provider
	if _, ok := g.resolver.Lookup(provider); !ok {
		provider = "" // unregistered providers share one share
	}
	if bound, ok := g.inFlight.acquire(client, provider, reserve); !ok {
		g.shed(w, r, bound, client)
		return
	}
	defer g.inFlight.release(client, provider, reserve)

	var bodyReader io.Reader = r.Body
	if r.Body != http.NoBody {
		bodyReader = g.setBodyDeadline(w, r, reserve)
	}
	body, err := readBody(http.MaxBytesReader(w, readCloser{bodyReader, r.Body}, g.cfg.maxBodyBytes), r.ContentLength)
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			g.tooLarge(w, r, route)
		case errors.Is(err, os.ErrDeadlineExceeded):
			g.cfg.logger.WarnContext(r.Context(), "webhook body did not arrive within its deadline; answering 408", "provider", route.Provider, "tenant", route.Tenant,
				"client", client, "content_length", r.ContentLength, "read_bytes", len(body), "body_timeout", g.cfg.limits.bodyTimeout, "min_body_rate", g.cfg.limits.minBodyRate)
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusRequestTimeout, responseBody{Status: "timeout"})
		default:
			g.cfg.logger.WarnContext(r.Context(), "webhook body read failed", "provider", route.Provider, "tenant", route.Tenant, "err", err)
			writeJSON(w, http.StatusBadRequest, responseBody{Status: "bad_request"})
		}
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

// readCloser reads from one reader and closes another: a request body
// read through a deadline check, for http.MaxBytesReader.
type readCloser struct {
	io.Reader
	io.Closer
}

// acceptsGET reports whether the provider's verifier answers GET
// challenges (GETVerifier).
func (g *Receiver) acceptsGET(provider string) bool {
	v, ok := g.resolver.Lookup(provider)
	if !ok {
		return false
	}
	gv, ok := v.(GETVerifier)
	return ok && gv.AcceptsGET() || deliversByGET(v)
}

// shed answers a request over an in-flight bound: 503 at once, without
// reading the body, and the connection is closed so that nothing reads it
// after the answer either.
func (g *Receiver) shed(w http.ResponseWriter, r *http.Request, bound, client string) {
	l := g.cfg.limits
	g.cfg.logger.WarnContext(r.Context(), "webhook shed: too many requests in flight", "bound", bound, "client", client, "path", r.URL.Path,
		"max_in_flight", l.maxRequests, "max_in_flight_bytes", l.maxBytes, "client_share", l.clientShare, "provider_share", l.providerShare)
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", strconv.Itoa(int(g.cfg.retryAfter/time.Second)))
	writeJSON(w, http.StatusServiceUnavailable, responseBody{Status: StatusUnavailable.String()})
}

func (g *Receiver) tooLarge(w http.ResponseWriter, r *http.Request, route Route) {
	g.cfg.logger.WarnContext(r.Context(), "webhook body over the limit", "provider", route.Provider, "tenant", route.Tenant, "limit_bytes", g.cfg.maxBodyBytes)
	// The rest of the body is not read; close the connection rather than
	// leave it in an unknown state.
	w.Header().Set("Connection", "close")
	writeJSON(w, http.StatusRequestEntityTooLarge, responseBody{Status: "too_large"})
}

// route finds the provider and tenant of r, as WithPathPrefix describes:
// from the {provider} and {tenant} wildcards of a Go 1.22 route pattern
// when it has them, else from the escaped path after the prefix or after
// where the Receiver is mounted, so an encoded slash cannot split a
// segment. "." and ".." segments are refused.
func (g *Receiver) route(r *http.Request) (Route, bool) {
	if provider := r.PathValue("provider"); provider != "" {
		return checkRoute(provider, r.PathValue("tenant"))
	}
	path := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(path, g.cfg.prefix)
	if !ok {
		rest, ok = afterMount(r, path)
	}
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

// afterMount returns the escaped path after where the Receiver is mounted,
// for a path outside its prefix: after the ServeMux subtree pattern that
// routed r (mux.Handle("/hooks/", rcv)), or after the part of the path a
// handler before it cut off (http.StripPrefix, with or without the
// trailing slash), as r.RequestURI shows. When both could apply and they
// disagree, or neither does, it reports false.
func afterMount(r *http.Request, path string) (string, bool) {
	orig := requestPath(r.RequestURI)
	stripped := orig != path && strings.HasSuffix(orig, path)
	subtree, byPattern := subtreePattern(r.Pattern)
	var afterPattern string
	if byPattern {
		afterPattern, byPattern = strings.CutPrefix(path, subtree)
	}
	switch {
	case byPattern && (!stripped || !strings.HasPrefix(orig, subtree)):
		// The mux that routed r saw the path the Receiver sees: a
		// subtree, perhaps of a sub-router under http.StripPrefix.
		return afterPattern, true
	case stripped:
		rest := strings.TrimPrefix(path, "/")
		if byPattern && rest != afterPattern {
			// The subtree matched both the request's path and the cut
			// one: which one it routed is not known.
			return "", false
		}
		return rest, true
	}
	return "", false
}

// requestPath is the escaped path of a request URI, "" when it has none.
func requestPath(uri string) string {
	if strings.HasPrefix(uri, "/") {
		path, _, _ := strings.Cut(uri, "?")
		return path
	}
	u, err := url.ParseRequestURI(uri) // the absolute form a proxy is sent
	if err != nil {
		return ""
	}
	return u.EscapedPath()
}

// subtreePattern returns the path of a ServeMux pattern ([METHOD ][HOST]/path)
// that routes a subtree without wildcards, such as "POST /hooks/".
func subtreePattern(pattern string) (string, bool) {
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		pattern = strings.TrimLeft(pattern[i:], " \t")
	}
	i := strings.IndexByte(pattern, '/')
	if i < 0 {
		return "", false
	}
	path := pattern[i:]
	return path, strings.HasSuffix(path, "/") && !strings.Contains(path, "{")
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
		"The receiver reads {provider}[/{tenant}] after its prefix, after the http.ServeMux subtree or http.StripPrefix it is mounted under, "+
		"or from a pattern's {provider} wildcard; under another router, set WithPathPrefix to the path the receiver sees (for example \"/api/webhooks/\")",
		"path_prefix", g.cfg.prefix, "path", path, "request_uri_path", requestPath(r.RequestURI), "pattern", r.Pattern)
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
		g.cfg.logger.InfoContext(ctx, "webhook ignored: no handler takes its event type, so it is not stored", attrs...)
	case StatusRejected:
		g.cfg.logger.WarnContext(ctx, "webhook rejected", append(attrs, rejectionAttrs(res.Reason, err)...)...)
	case StatusUnavailable, StatusInternalError:
		g.cfg.logger.ErrorContext(ctx, "webhook not stored", append(attrs, "err", err)...)
	default:
		g.cfg.logger.WarnContext(ctx, "webhook refused", append(attrs, "err", err)...)
	}
}

// badSignatureCauses is what usually makes a well-formed signature match
// no secret. It goes to the log only: the provider's answer names the
// reason code and nothing else.
const badSignatureCauses = "the configured secret is not the one that signed (a wrong or rotated secret, or another credential such as an API key or access token pasted as the webhook secret); " +
	"a proxy or middleware changed the body before the receiver read it (re-encoded or re-indented JSON, a changed charset or line endings, a decompressed or trimmed body); " +
	"or the request reached the wrong provider entry (another provider's path, or the right provider with another scheme's options)"

// rejectionAttrs are the log attributes of a rejection: its reason, the
// error, and for a bad signature its likely causes.
func rejectionAttrs(reason Reason, err error) []any {
	attrs := []any{"reason", string(reason), "err", err}
	if reason == ReasonBadSignature {
		attrs = append(attrs, "likely_causes", badSignatureCauses)
	}
	return attrs
}

type responseBody struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	EventID string `json:"event_id,omitempty"`
}

// writeJSON answers code with body, as encoding/json encodes it.
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

// readBody reads a body that announced contentLength bytes (-1 when it
// did not): in one allocation when it did, since bytes.Buffer grows its
// buffer before each read that would leave less than bytes.MinRead free.
func readBody(r io.Reader, contentLength int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, max(contentLength, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
