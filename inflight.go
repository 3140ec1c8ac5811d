package webhooks

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"
)

// Defaults of the Receiver's bounds on what it holds at once and on the
// time a body may take, which a host sizes its memory and its
// http.Server's timeouts by: a body the Receiver still waits for is cut
// off by a shorter ReadTimeout.
const (
	// DefaultMaxInFlightBytes bounds the bodies a Receiver holds at once
	// (WithMaxInFlightBytes), or WithMaxBodyBytes when that is larger.
	DefaultMaxInFlightBytes = 96 << 20
	// DefaultBodyTimeout is the fixed part of the time a body may take
	// (WithBodyTimeout).
	DefaultBodyTimeout = 5 * time.Second
	// DefaultMinBodyRate is the slowest rate, in bytes a second, a body is
	// waited for beyond DefaultBodyTimeout (WithMinBodyRate): a 1 MiB body
	// has 16 seconds more.
	DefaultMinBodyRate = 64 << 10
)

// defaultShareDivisor makes a client's and a provider's share of the
// in-flight bounds an eighth of them.
const defaultShareDivisor = 8

// inFlightConfig is the Receiver's bounds on the requests it handles at
// once and on the time their bodies may take.
type inFlightConfig struct {
	maxRequests   int
	maxBytes      int64 // unsetBytes: not set, see resolve
	clientShare   int   // unsetShare: not set; 0: off
	providerShare int   // unsetShare: not set; 0: off
	bodyTimeout   time.Duration
	minBodyRate   int64 // bytes a second
}

// Values of inFlightConfig's fields whose defaults depend on other options.
const (
	unsetBytes = math.MinInt64
	unsetShare = math.MinInt
)

func defaultInFlightConfig() inFlightConfig {
	return inFlightConfig{
		maxRequests:   DefaultMaxInFlight,
		maxBytes:      unsetBytes,
		clientShare:   unsetShare,
		providerShare: unsetShare,
		bodyTimeout:   DefaultBodyTimeout,
		minBodyRate:   DefaultMinBodyRate,
	}
}

// WithMaxInFlight bounds how many requests the Receiver handles at once.
// Past it, a request is answered 503 with Retry-After at once, without its
// body being read, so a flood of slow or large requests cannot exhaust
// memory or hold the process; the provider retries later. Defaults to
// DefaultMaxInFlight (128).
func WithMaxInFlight(n int) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.limits.maxRequests = n })
}

// WithMaxInFlightBytes bounds the bytes of the request bodies the Receiver
// holds at once. A request reserves its Content-Length before its body is
// read; a body sent without one (chunked) reserves WithMaxBodyBytes, the
// most it may be. A request whose reservation does not fit is answered 503
// with Retry-After at once, its body unread. Bodies are most, not all, of
// what requests cost: under a burst of 1 MiB bodies at the defaults, an
// example server on pgstore peaked at about two and a half times this
// (the statements being written and the garbage collector's headroom; see
// docs/faults.md). It must be at least WithMaxBodyBytes, so a body of the
// limit fits. Defaults to DefaultMaxInFlightBytes (96 MiB), or
// WithMaxBodyBytes when that is larger.
func WithMaxInFlightBytes(n int64) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.limits.maxBytes = n })
}

// WithClientInFlightShare keeps one client from holding every slot of
// WithMaxInFlight and WithMaxInFlightBytes, as a sender dribbling many
// slow bodies would: a client holding n requests (or n/WithMaxInFlight of
// the bytes) gets more only while n requests and as large a part of the
// bytes stay free for the others; past that its requests are answered 503
// with Retry-After at once, before anyone else's. A client alone can use
// the bounds but for one share.
//
// A client is the IP address of Request.RemoteAddr (an IPv6 address by its
// /64 network). Behind a proxy that connects for every sender, RemoteAddr
// is the proxy's: set it from the forwarded address your proxy writes, in a
// middleware before the Receiver, or turn the share off with 0. Defaults
// to an eighth of WithMaxInFlight, rounded up (16 of 128).
func WithClientInFlightShare(n int) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.limits.clientShare = n })
}

// WithProviderInFlightShare is WithClientInFlightShare for the provider a
// request is addressed to, by its path: one provider's slow or large
// deliveries, or someone sending slow bodies to one provider's URL, cannot
// take the slots the other providers need. Requests for providers that
// are not registered share one provider's share. 0 turns it off. Defaults
// to an eighth of WithMaxInFlight, rounded up (16 of 128).
func WithProviderInFlightShare(n int) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.limits.providerShare = n })
}

// WithBodyTimeout sets the fixed part of the time a request body may take
// to arrive, counted from when the Receiver starts reading it; to it is
// added the time the body's length takes at WithMinBodyRate (the length is
// Content-Length, or WithMaxBodyBytes for a body sent without one). A body not read by then is answered 408 and its connection closed,
// so slow senders cannot hold WithMaxInFlight's slots for long. The
// deadline is set on the connection (http.ResponseController), never later
// than the server's ReadTimeout would allow; where the ResponseWriter
// cannot set one (a wrapper without Unwrap), it is checked between reads,
// and a body that stops altogether is bounded only by the server's
// ReadTimeout. Defaults to DefaultBodyTimeout (5 seconds).
func WithBodyTimeout(d time.Duration) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.limits.bodyTimeout = d })
}

// WithMinBodyRate sets the slowest rate, in bytes a second, at which a
// request body is waited for beyond WithBodyTimeout: a 1 MiB body at the
// default has 16 seconds more. Defaults to DefaultMinBodyRate (64 KiB a
// second).
func WithMinBodyRate(bytesPerSecond int64) ReceiverOption {
	return receiverOption(func(c *receiverConfig) { c.limits.minBodyRate = bytesPerSecond })
}

// resolve fills in the defaults that depend on other options and checks
// the configuration.
func (c *inFlightConfig) resolve(maxBodyBytes int64) error {
	if c.maxRequests < 1 {
		return fmt.Errorf("webhooks: WithMaxInFlight(%d): allow at least one request", c.maxRequests)
	}
	if c.maxBytes == unsetBytes {
		c.maxBytes = max(DefaultMaxInFlightBytes, maxBodyBytes)
	}
	if c.maxBytes < maxBodyBytes {
		return fmt.Errorf("webhooks: WithMaxInFlightBytes(%d) is below WithMaxBodyBytes(%d): a body of the limit could never be read; raise it, or leave it out for the default", c.maxBytes, maxBodyBytes)
	}
	for _, s := range []struct {
		name  string
		share *int
	}{{"WithClientInFlightShare", &c.clientShare}, {"WithProviderInFlightShare", &c.providerShare}} {
		if *s.share == unsetShare {
			*s.share = (c.maxRequests + defaultShareDivisor - 1) / defaultShareDivisor
		}
		if *s.share < 0 || *s.share > c.maxRequests {
			return fmt.Errorf("webhooks: %s(%d): a share is between 1 and WithMaxInFlight (%d), or 0 to turn it off", s.name, *s.share, c.maxRequests)
		}
		if *s.share == c.maxRequests {
			*s.share = 0 // all of it: no share to keep
		}
	}
	switch {
	case c.bodyTimeout <= 0:
		return fmt.Errorf("webhooks: WithBodyTimeout(%v): the timeout must be positive", c.bodyTimeout)
	case c.minBodyRate <= 0:
		return fmt.Errorf("webhooks: WithMinBodyRate(%d): the rate must be positive", c.minBodyRate)
	}
	return nil
}

// bodyDeadline is when a body of n bytes, read from now, must have
// arrived.
func (c *inFlightConfig) bodyDeadline(now time.Time, n int64) time.Time {
	rate := c.minBodyRate
	d := time.Duration(n/rate)*time.Second + time.Duration(n%rate)*time.Second/time.Duration(rate)
	return now.Add(c.bodyTimeout + d)
}

// inFlight admits requests within the in-flight bounds and the clients'
// and providers' shares of them.
type inFlight struct {
	cfg                                  inFlightConfig
	clientShareBytes, providerShareBytes int64

	mu         sync.Mutex
	requests   int
	bytes      int64
	byClient   map[string]*holding
	byProvider map[string]*holding
}

// holding is what one client or provider holds.
type holding struct {
	requests int
	bytes    int64
}

func newInFlight(cfg inFlightConfig) *inFlight {
	share := func(n int) int64 { return cfg.maxBytes / int64(cfg.maxRequests) * int64(n) }
	return &inFlight{
		cfg:                cfg,
		clientShareBytes:   share(cfg.clientShare),
		providerShareBytes: share(cfg.providerShare),
		byClient:           make(map[string]*holding),
		byProvider:         make(map[string]*holding),
	}
}

// The bounds a request can be shed by, as its log line names them.
const (
	boundRequests      = "max_in_flight"
	boundBytes         = "max_in_flight_bytes"
	boundClientShare   = "client_share"
	boundProviderShare = "provider_share"
)

// acquire admits a request of client for provider reserving n body bytes,
// or returns the bound it would pass. An admitted request is released
// with the same arguments.
func (f *inFlight) acquire(client, provider string, n int64) (bound string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.requests >= f.cfg.maxRequests:
		return boundRequests, false
	case f.bytes+n > f.cfg.maxBytes:
		return boundBytes, false
	case !f.withinShare(f.byClient[client], f.cfg.clientShare, f.clientShareBytes, n):
		return boundClientShare, false
	case !f.withinShare(f.byProvider[provider], f.cfg.providerShare, f.providerShareBytes, n):
		return boundProviderShare, false
	}
	f.requests++
	f.bytes += n
	hold(f.byClient, client, 1, n)
	hold(f.byProvider, provider, 1, n)
	return "", true
}

func (f *inFlight) release(client, provider string, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests--
	f.bytes -= n
	hold(f.byClient, client, -1, -n)
	hold(f.byProvider, provider, -1, -n)
}

// withinShare reports whether one more request of n bytes may go to a
// client or provider holding h (nil: nothing), whose share is share
// requests and shareBytes bytes: within its share always; beyond it only
// while a whole share stays free for the others.
func (f *inFlight) withinShare(h *holding, share int, shareBytes int64, n int64) bool {
	if share == 0 {
		return true
	}
	var held holding
	if h != nil {
		held = *h
	}
	if held.requests+1 <= share && held.bytes+n <= shareBytes {
		return true
	}
	return f.cfg.maxRequests-(f.requests+1) >= share && f.cfg.maxBytes-(f.bytes+n) >= shareBytes
}

// hold adds requests and bytes to key's holding in m, forgetting holdings
// that come to nothing, so the map holds only who is in flight.
func hold(m map[string]*holding, key string, requests int, bytes int64) {
	h := m[key]
	if h == nil {
		h = new(holding)
		m[key] = h
	}
	h.requests += requests
	h.bytes += bytes
	if h.requests == 0 {
		delete(m, key)
	}
}

// clientOf names the client of a request for its share: the IP address of
// remoteAddr, an IPv6 address by its /64 network (what one subscriber
// usually holds).
func clientOf(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is4() {
		return addr.String()
	}
	p, _ := addr.Prefix(64)
	return p.String()
}

// errBodyDeadline ends the read of a body that did not arrive in time
// where the connection's deadline could not be set.
var errBodyDeadline = fmt.Errorf("webhooks: the request body did not arrive within its deadline (WithBodyTimeout, WithMinBodyRate): %w", os.ErrDeadlineExceeded)

// setBodyDeadline bounds the time the body of r may take to arrive,
// reserving n bytes, and returns the body to read. The deadline is set on
// the connection where w allows it (net/http lifts it once the body is in,
// when it starts reading the connection in the background); otherwise the
// body returned checks it before each read.
func (g *Receiver) setBodyDeadline(w http.ResponseWriter, r *http.Request, n int64) io.Reader {
	now := time.Now() // the connection's deadline is on the wall clock
	deadline := g.cfg.limits.bodyDeadline(now, n)
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 {
		deadline = minTime(deadline, now.Add(srv.ReadTimeout))
	}
	err := http.NewResponseController(w).SetReadDeadline(deadline)
	if err == nil {
		return r.Body
	}
	if !errors.Is(err, http.ErrNotSupported) {
		g.cfg.logger.WarnContext(r.Context(), "webhook body deadline could not be set on the connection; checking it between reads", "err", err)
	}
	return &deadlineReader{r: r.Body, deadline: deadline}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// deadlineReader fails reads once its deadline has passed.
type deadlineReader struct {
	r        io.Reader
	deadline time.Time
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if !time.Now().Before(d.deadline) {
		return 0, errBodyDeadline
	}
	return d.r.Read(p)
}
