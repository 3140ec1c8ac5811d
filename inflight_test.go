package webhooks_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// inFlightServer is a Receiver on a real HTTP server, with providers
// named as given (each verified as headerVerifier verifies).
type inFlightServer struct {
	srv   *httptest.Server
	inbox *memstore.Inbox
	logs  *syncBuffer
}

func newInFlightServer(t *testing.T, providers []string, opts ...webhooks.ReceiverOption) *inFlightServer {
	t.Helper()
	s := &inFlightServer{inbox: memstore.NewInbox(), logs: &syncBuffer{}}
	r := webhooks.NewRegistry()
	for _, p := range providers {
		r.MustRegister(p, headerVerifier)
	}
	opts = append([]webhooks.ReceiverOption{webhooks.WithLogger(slog.New(slog.NewTextHandler(s.logs, nil)))}, opts...)
	rcv, err := webhooks.NewReceiver(r, s.inbox, append([]webhooks.ReceiverOption{webhooks.WithReplayStore(memstore.NewReplay())}, opts...)...)
	require.NoError(t, err)
	s.srv = httptest.NewServer(rcv)
	t.Cleanup(s.srv.Close)
	return s
}

// dialFrom connects to the server from a loopback address of its own, so
// that each test client is a client of its own to the Receiver. Linux
// routes all of 127.0.0.0/8 to the loopback interface; elsewhere the test
// is skipped.
func (s *inFlightServer) dialFrom(t *testing.T, client int) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(client))}}
	c, err := d.Dial("tcp", s.srv.Listener.Addr().String())
	if err != nil {
		t.Skipf("dialing from 127.0.0.%d (other loopback addresses than 127.0.0.1 need Linux): %v", client, err)
	}
	t.Cleanup(func() { c.Close() })
	// A bound on a broken test (a server that never answers), not a timing.
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	return c
}

// heldRequest is a signed POST whose sender stalls inside its body.
type heldRequest struct {
	conn net.Conn
	r    *bufio.Reader
	rest []byte // the body not yet sent
	// answer is the server's answer when it answered before the body was
	// asked for (shed); nil while the request is in flight.
	answer *http.Response
}

// hold sends a POST's headers with Expect: 100-continue from client, for a
// body of size bytes (chunked when size is negative, of -size bytes). The
// server answers 100 Continue when the Receiver first reads the body, that
// is once it admitted the request; hold then sends a few bytes of the body
// and stalls, as a slow sender does. A request the Receiver sheds gets its
// answer instead, in answer.
func (s *inFlightServer) hold(t *testing.T, client int, provider, id string, size int) *heldRequest {
	t.Helper()
	c := s.dialFrom(t, client)
	chunked := size < 0
	if chunked {
		size = -size
	}
	body := bytes.Repeat([]byte("x"), size)
	var req strings.Builder
	fmt.Fprintf(&req, "POST /webhooks/%s HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n", provider)
	if chunked {
		req.WriteString("Transfer-Encoding: chunked\r\n")
		body = fmt.Appendf(nil, "%x\r\n%s\r\n0\r\n\r\n", size, body)
	} else {
		fmt.Fprintf(&req, "Content-Length: %d\r\n", size)
	}
	for k, v := range okHeaders(id) {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	_, err := io.WriteString(c, req.String())
	require.NoError(t, err)
	h := &heldRequest{conn: c, r: bufio.NewReader(c)}
	resp, err := http.ReadResponse(h.r, nil)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusContinue {
		resp.Body.Close()
		h.answer = resp
		return h
	}
	n := min(4, len(body)-1)
	_, err = c.Write(body[:n])
	require.NoError(t, err)
	h.rest = body[n:]
	return h
}

// release sends the rest of the body and returns the answer.
func (h *heldRequest) release(t *testing.T) *http.Response {
	t.Helper()
	require.Nil(t, h.answer, "the request was in flight")
	_, err := h.conn.Write(h.rest)
	require.NoError(t, err)
	return h.wait(t)
}

// wait reads the answer without sending more of the body.
func (h *heldRequest) wait(t *testing.T) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(h.r, nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// postFrom sends a whole signed POST from client and returns its status.
func (s *inFlightServer) postFrom(t *testing.T, client int, provider, id string) int {
	t.Helper()
	c := s.dialFrom(t, client)
	body := `{}`
	var req strings.Builder
	fmt.Fprintf(&req, "POST /webhooks/%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n", provider, len(body))
	for k, v := range okHeaders(id) {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(&req, "\r\n%s", body)
	_, err := io.WriteString(c, req.String())
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func assertShed(t *testing.T, h *heldRequest, what string) {
	t.Helper()
	if assert.NotNil(t, h.answer, "%s is shed before its body is asked for", what) {
		assert.Equal(t, http.StatusServiceUnavailable, h.answer.StatusCode, what)
		assert.Equal(t, "5", h.answer.Header.Get("Retry-After"), what)
	}
}

// TestClientShareKeepsRoomForOthers: one client dribbling bodies cannot
// take every slot of WithMaxInFlight (4, so a client's share is 1): its
// request that would leave less than a share free is shed at once, and
// another client's request is taken while the first one's are held.
func TestClientShareKeepsRoomForOthers(t *testing.T) {
	t.Parallel()
	s := newInFlightServer(t, []string{"p1", "p2", "p3", "p4", "p5"}, webhooks.WithMaxInFlight(4))
	var held []*heldRequest
	for i, p := range []string{"p1", "p2", "p3"} { // one provider each: only the client's share counts
		h := s.hold(t, 2, p, fmt.Sprint("slow-", i), 100)
		require.Nil(t, h.answer, "the client's request %d is in flight", i)
		held = append(held, h)
	}
	assertShed(t, s.hold(t, 2, "p4", "slow-3", 100), "the slow client's fourth request")
	assert.Contains(t, s.logs.String(), "bound=client_share")

	assert.Equal(t, http.StatusAccepted, s.postFrom(t, 3, "p5", "other"), "another client's request gets through while the slow one holds its requests")
	for i, h := range held {
		assert.Equal(t, http.StatusAccepted, h.release(t).StatusCode, "held request %d, once its body arrived", i)
	}
	assert.Equal(t, 4, s.inbox.Len())
}

// TestProviderShareKeepsRoomForOthers: slow bodies sent to one provider's
// URL, from several clients, cannot take the slots another provider needs.
func TestProviderShareKeepsRoomForOthers(t *testing.T) {
	t.Parallel()
	s := newInFlightServer(t, []string{"slow", "other"}, webhooks.WithMaxInFlight(4))
	var held []*heldRequest
	for i := range 3 { // one client each: only the provider's share counts
		h := s.hold(t, 2+i, "slow", fmt.Sprint("slow-", i), 100)
		require.Nil(t, h.answer, "request %d to the slow provider is in flight", i)
		held = append(held, h)
	}
	assertShed(t, s.hold(t, 5, "slow", "slow-3", 100), "the slow provider's fourth request")
	assert.Contains(t, s.logs.String(), "bound=provider_share")

	assert.Equal(t, http.StatusAccepted, s.postFrom(t, 6, "other", "other"), "another provider's delivery gets through")
	for i, h := range held {
		assert.Equal(t, http.StatusAccepted, h.release(t).StatusCode, "held request %d", i)
	}

	// Unregistered providers share one share, so naming a new one for
	// each request does not make room.
	held = held[:0]
	for i := range 3 {
		h := s.hold(t, 2+i, fmt.Sprint("nobody-", i), "x", 100)
		require.Nil(t, h.answer, "request %d to an unregistered provider is in flight", i)
		held = append(held, h)
	}
	assertShed(t, s.hold(t, 5, "nobody-3", "x", 100), "the fourth request to an unregistered provider")
	for _, h := range held {
		assert.Equal(t, http.StatusNotFound, h.release(t).StatusCode)
	}
}

// TestBodyDeadlineCutsADribble: a body that stops arriving is answered 408
// once its deadline (WithBodyTimeout plus its length at WithMinBodyRate)
// passed, its connection closed and its slot freed, without waiting for
// the server's ReadTimeout (httptest's server has none).
func TestBodyDeadlineCutsADribble(t *testing.T) {
	t.Parallel()
	s := newInFlightServer(t, []string{"acme"}, webhooks.WithMaxInFlight(1),
		webhooks.WithBodyTimeout(50*time.Millisecond), webhooks.WithMinBodyRate(1<<20))
	h := s.hold(t, 2, "acme", "slow", 1000)
	require.Nil(t, h.answer, "the dribbling request is in flight")
	resp := h.wait(t) // the sender never sends the rest
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.True(t, resp.Close, "the connection is closed")
	s.logs.waitFor(t, "did not arrive within its deadline")
	assert.Zero(t, s.inbox.Len())

	// The slot is free again: the next request is taken. (Its body is
	// sent with its headers, so its deadline is not a race.)
	assert.Equal(t, http.StatusAccepted, s.postFrom(t, 3, "acme", "next"))
}

// TestBodyDeadlineKeepsConnectionsAlive: the deadline a body got does not
// stay on its connection: a kept-alive connection serves the next request.
func TestBodyDeadlineKeepsConnectionsAlive(t *testing.T) {
	t.Parallel()
	s := newInFlightServer(t, []string{"acme"})
	client := s.srv.Client()
	reused := false
	for i := range 2 {
		req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/webhooks/acme", strings.NewReader(`{}`))
		require.NoError(t, err)
		for k, v := range okHeaders(fmt.Sprint("e", i)) {
			req.Header.Set(k, v)
		}
		req = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		}))
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	}
	assert.True(t, reused, "the second request went on the first one's connection")
}

// slowBody hands out one byte a millisecond, as a dribbling sender does.
type slowBody struct{ left int }

func (b *slowBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	time.Sleep(time.Millisecond)
	b.left--
	p[0] = 'x'
	return 1, nil
}

// TestBodyDeadlineWithoutConnectionDeadline: where the ResponseWriter
// cannot set a read deadline (here httptest.ResponseRecorder), the
// deadline is checked between reads, and a dribbling body is still cut off.
func TestBodyDeadlineWithoutConnectionDeadline(t *testing.T) {
	t.Parallel()
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard),
		webhooks.WithBodyTimeout(20*time.Millisecond), webhooks.WithMinBodyRate(1<<30))
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/acme", &slowBody{left: 3000}) // 3 s at its rate
	for k, v := range okHeaders("slow") {
		req.Header.Set(k, v)
	}
	resp := serve(t, rcv, req)
	assert.Equal(t, http.StatusRequestTimeout, resp.Code)
	assert.Equal(t, "timeout", resp.Status)
}

// TestMaxInFlightBytes: a request reserves its Content-Length (a chunked
// one, WithMaxBodyBytes) before its body is read; one that does not fit
// in WithMaxInFlightBytes is answered 503 with Retry-After, unread, and
// one that fits is taken.
func TestMaxInFlightBytes(t *testing.T) {
	t.Parallel()
	s := newInFlightServer(t, []string{"acme"}, webhooks.WithMaxBodyBytes(1000), webhooks.WithMaxInFlightBytes(1500),
		webhooks.WithClientInFlightShare(0), webhooks.WithProviderInFlightShare(0))
	big := s.hold(t, 2, "acme", "big", 1000)
	require.Nil(t, big.answer, "a body of the limit is taken")

	assertShed(t, s.hold(t, 2, "acme", "over", 600), "a body of 600 bytes beside 1000 of 1500")
	assertShed(t, s.hold(t, 2, "acme", "chunked", -10), "a chunked body, which reserves the limit")
	assert.Contains(t, s.logs.String(), "bound=max_in_flight_bytes")
	small := s.hold(t, 2, "acme", "small", 400)
	require.Nil(t, small.answer, "a body of 400 bytes fits")
	assert.Equal(t, http.StatusAccepted, small.release(t).StatusCode)
	assert.Equal(t, http.StatusAccepted, big.release(t).StatusCode)

	chunked := s.hold(t, 2, "acme", "chunked", -10)
	require.Nil(t, chunked.answer, "a chunked body, once the limit is free")
	assert.Equal(t, http.StatusAccepted, chunked.release(t).StatusCode)

	for _, opts := range [][]webhooks.ReceiverOption{
		{webhooks.WithMaxInFlightBytes(999), webhooks.WithMaxBodyBytes(1000)},
		{webhooks.WithClientInFlightShare(-1)},
		{webhooks.WithProviderInFlightShare(129)},
		{webhooks.WithBodyTimeout(0)},
		{webhooks.WithMinBodyRate(0)},
	} {
		_, err := webhooks.NewReceiver(webhooks.NewRegistry(), memstore.NewInbox(), append([]webhooks.ReceiverOption{webhooks.WithReplayStore(memstore.NewReplay())}, opts...)...)
		assert.Error(t, err)
	}
}

// slowInbox takes a while to store, as a loaded database does.
type slowInbox struct {
	webhooks.Enqueuer
	delay time.Duration
}

func (s slowInbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return webhooks.EnqueueResult{}, ctx.Err()
	}
	return s.Enqueuer.Enqueue(ctx, env)
}

// TestBodyDeadlineEndsWithTheBody: once the body is in, its deadline no
// longer counts: a store slower than the body's deadline still answers
// 202. (The server reads the connection in the background while the
// handler runs, to notice the client leave; a deadline passing then would
// cancel the request. net/http lifts the deadline when it starts that
// read.)
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	t.Parallel()
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, slowInbox{Enqueuer: memstore.NewInbox(), delay: 300 * time.Millisecond}, webhooks.WithReplayStore(memstore.NewReplay()),
		webhooks.WithLogger(discard), webhooks.WithBodyTimeout(20*time.Millisecond), webhooks.WithMinBodyRate(1<<30))
	require.NoError(t, err)
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/acme", strings.NewReader(`{}`))
	require.NoError(t, err)
	for k, v := range okHeaders("e1") {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusAccepted, resp.StatusCode, "stored after the body's deadline, which ended with the body")
}
