package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/testing/faultproxy"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/webhookstest"
)

// lines collects what the server writes, one JSON log line at a time, and
// lets a test wait for a line instead of sleeping.
type lines struct {
	mu   sync.Mutex
	all  []string
	more chan struct{}
}

func newLines() *lines { return &lines{more: make(chan struct{}, 1)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.all = append(l.all, strings.Split(strings.TrimRight(string(p), "\n"), "\n")...)
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *lines) matching(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.all {
		if strings.Contains(s, substr) {
			out = append(out, s)
		}
	}
	return out
}

// waitFor waits until a line containing substr was written.
func (l *lines) waitFor(t *testing.T, substr string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if m := l.matching(substr); len(m) > 0 {
			return m[0]
		}
		select {
		case <-l.more:
		case <-deadline:
			t.Fatalf("no log line containing %q within 10s", substr)
		}
	}
}

type server struct {
	url            string
	stdout, stderr *lines
	stop           func()
}

func start(t *testing.T, env map[string]string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: newLines(), stderr: newLines()}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), func(k string) string { return env[k] }, s.stdout, s.stderr, ready)
	}()
	select {
	case addr := <-ready:
		s.url = "http://" + addr
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("server did not start within 30s")
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(s.stop)
	return s
}

// testClient bounds every request of these tests: a server that queued or
// hung instead of answering fails the test instead of stalling the run.
var testClient = &http.Client{Timeout: 15 * time.Second}

func (s *server) post(t *testing.T, path, body string, headers map[string]string) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := testClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]string
	require.NoError(t, json.Unmarshal(raw, &out), "answer %q", raw)
	return resp.StatusCode, out
}

// GitHub's documented example from "Validating webhook deliveries".
const (
	githubSecret    = "It's a Secret to Everybody"
	githubPayload   = "Hello, World!"
	githubSignature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

func githubHeaders(delivery string) map[string]string {
	return map[string]string{"X-Hub-Signature-256": githubSignature, "X-GitHub-Event": "ping", "X-GitHub-Delivery": delivery}
}

func TestRefusesToStartWithoutSecrets(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0"}, func(string) string { return "" }, io.Discard, &stderr, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GITHUB_WEBHOOK_SECRET")
	assert.Contains(t, err.Error(), "DEMO_WEBHOOK_SECRET")
}

func TestGitHubDocumentedSample(t *testing.T) {
	t.Parallel()
	s := start(t, map[string]string{"GITHUB_WEBHOOK_SECRET": githubSecret})

	code, body := s.post(t, "/webhooks/github", githubPayload, githubHeaders("d1"))
	assert.Equal(t, http.StatusAccepted, code, "GitHub's documented signature is accepted")
	assert.Equal(t, "accepted", body["status"])

	code, body = s.post(t, "/webhooks/github", "Hello, World?", githubHeaders("d2"))
	assert.Equal(t, http.StatusUnauthorized, code, "a tampered body is refused")
	assert.Equal(t, "bad_signature", body["reason"])

	line := s.stdout.waitFor(t, `"event_id":"d1"`)
	code, _ = s.post(t, "/webhooks/github", githubPayload, githubHeaders("d1"))
	assert.Equal(t, http.StatusOK, code, "a repeat is a duplicate")

	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &ev))
	assert.Equal(t, "github", ev["provider"])
	assert.Equal(t, "ping", ev["event_type"])
	s.stop() // the processor has finished all work once Run returns
	assert.Len(t, s.stdout.matching(`"msg":"event handled"`), 2, "the event is logged once by each handler, the repeat not at all")
	assert.Len(t, s.stdout.matching(`"handler":"ledger"`), 1)
	assert.Len(t, s.stdout.matching(`"handler":"audit"`), 1)
	assert.Empty(t, s.stdout.matching("d2"))
	for _, l := range append(s.stdout.matching(""), s.stderr.matching("")...) {
		assert.NotContains(t, l, githubSecret, "no secret in any log line")
	}
}

func signDemo(secret, ts, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func demoHeaders(secret, id, typ, body string, at time.Time) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	return map[string]string{"X-Demo-Timestamp": ts, "X-Demo-Signature": signDemo(secret, ts, body), "X-Demo-Event-Id": id, "X-Demo-Event-Type": typ}
}

func TestDemoProviderAndFailTypes(t *testing.T) {
	t.Parallel()
	const secret = "demo-secret"
	s := start(t, map[string]string{"DEMO_WEBHOOK_SECRET": secret}, "-fail-types", "order.refund, order.void")

	code, _ := s.post(t, "/webhooks/demo", `{"a":1}`, demoHeaders(secret, "o1", "order.created", `{"a":1}`, time.Now()))
	assert.Equal(t, http.StatusAccepted, code)
	code, _ = s.post(t, "/webhooks/demo", `{"a":2}`, demoHeaders(secret, "o2", "order.refund", `{"a":2}`, time.Now()))
	assert.Equal(t, http.StatusAccepted, code)
	code, body := s.post(t, "/webhooks/demo", `{"a":3}`, demoHeaders(secret, "o3", "order.created", `{"a":3}`, time.Now().Add(-time.Hour)))
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, "timestamp_expired", body["reason"])
	code, _ = s.post(t, "/webhooks/github", githubPayload, githubHeaders("g"))
	assert.Equal(t, http.StatusNotFound, code, "github is not registered without its secret")

	line := s.stdout.waitFor(t, `"event_id":"o1"`)
	assert.Contains(t, line, `"provider":"demo"`)
	// The demo secret is one for every tenant, so a tenant path would be
	// chosen by the sender: it is not served.
	code, _ = s.post(t, "/webhooks/demo/shop1", `{"a":4}`, demoHeaders(secret, "o4", "order.created", `{"a":4}`, time.Now()))
	assert.Equal(t, http.StatusNotFound, code)
	dead := s.stderr.waitFor(t, "event dead-lettered")
	assert.Contains(t, dead, `"event_id":"o2"`)
	assert.Contains(t, dead, `"handler":"audit"`, "-fail-types fails the audit handler only")
	assert.Contains(t, dead, `"failure_class":"permanent"`)
	s.stop()
	o2 := s.stdout.matching(`"event_id":"o2"`)
	require.Len(t, o2, 1, "ledger handled the rejected type once; audit did not")
	assert.Contains(t, o2[0], `"handler":"ledger"`)
	assert.Len(t, s.stderr.matching("event dead-lettered"), 1)
}

// TestDemoOrderKeys: demo events with an X-Demo-Order-Key are handled by
// the ledger handler one at a time and in the order they arrived, per
// key, with many workers, while audit takes them in parallel; events
// without a key have none.
func TestDemoOrderKeys(t *testing.T) {
	t.Parallel()
	const secret = "demo-secret"
	s := start(t, map[string]string{"DEMO_WEBHOOK_SECRET": secret}, "-workers", "64")
	const keys, perKey = 4, 25
	// The events of each key are sent by several senders at once, so
	// they arrive in an order the test does not know, and the handler
	// runs under 64 workers; each event's sequence number (its arrival
	// order, logged) says what the order was.
	var wg sync.WaitGroup
	for k := range keys {
		for sender := range 5 {
			wg.Go(func() {
				for n := sender; n < perKey; n += 5 {
					body := fmt.Sprintf(`{"key":%d,"n":%d}`, k, n)
					h := demoHeaders(secret, fmt.Sprintf("k%d-n%d", k, n), "order.updated", body, time.Now())
					h["X-Demo-Order-Key"] = fmt.Sprintf("order-%d", k)
					code, _ := s.post(t, "/webhooks/demo", body, h)
					assert.Equal(t, http.StatusAccepted, code)
				}
			})
		}
	}
	wg.Wait()
	code, _ := s.post(t, "/webhooks/demo", `{}`, demoHeaders(secret, "unkeyed", "order.updated", `{}`, time.Now()))
	require.Equal(t, http.StatusAccepted, code)
	s.stdout.waitFor(t, `"handler":"audit","provider":"demo","tenant":"","event_id":"unkeyed"`)
	deadline := time.Now().Add(10 * time.Second)
	for len(s.stdout.matching(`"handler":"ledger"`)) < keys*perKey+1 && time.Now().Before(deadline) {
		s.stdout.waitFor(t, `"handler":"ledger"`)
		select {
		case <-s.stdout.more:
		case <-time.After(time.Second):
		}
	}
	s.stop()
	for k := range keys {
		var seqs []float64
		ids := map[string]bool{}
		for _, l := range s.stdout.matching(fmt.Sprintf(`"ordering_key":"order-%d"`, k)) {
			var ev map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &ev))
			if ev["handler"] == "ledger" {
				ids[ev["event_id"].(string)] = true
				seqs = append(seqs, ev["seq"].(float64))
			}
		}
		assert.Len(t, ids, perKey, "key order-%d: every event handled once", k)
		assert.Len(t, seqs, perKey)
		assert.IsIncreasing(t, seqs, "key order-%d was handled out of arrival order", k)
	}
	unkeyed := s.stdout.matching(`"event_id":"unkeyed"`)
	require.Len(t, unkeyed, 2)
	assert.Contains(t, unkeyed[0], `"ordering_key":""`)
}

func TestPostgresDedupAcrossRestart(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	schema := pgtest.NewSchemaAt(t, dsn)
	env := map[string]string{"GITHUB_WEBHOOK_SECRET": githubSecret, "DATABASE_URL": dsn}

	first := start(t, env, "-schema", schema)
	first.stderr.waitFor(t, `"msg":"retention"`) // the hourly clean-up also runs at start
	code, _ := first.post(t, "/webhooks/github", githubPayload, githubHeaders("restart-1"))
	require.Equal(t, http.StatusAccepted, code)
	first.stdout.waitFor(t, `"handler":"ledger","provider":"github","tenant":"","event_id":"restart-1"`)
	first.stdout.waitFor(t, `"handler":"audit","provider":"github","tenant":"","event_id":"restart-1"`)
	first.stop()

	second := start(t, env, "-schema", schema)
	code, body := second.post(t, "/webhooks/github", githubPayload, githubHeaders("restart-1"))
	assert.Equal(t, http.StatusOK, code, "after a restart the repeat is still a duplicate")
	assert.Equal(t, "duplicate", body["status"])
	second.stop()
	assert.Empty(t, second.stdout.matching("event handled"), "the restarted server does not handle the event again")
}

func TestListProviders(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-list-providers"}, func(string) string { return "" }, &out, io.Discard, nil))
	names := strings.Fields(out.String())
	assert.GreaterOrEqual(t, len(names), 40, "the catalog's names, one a line")
	assert.Contains(t, names, "stripe")
	assert.Contains(t, names, "meta")
}

func TestRegistersCatalogProvidersFromTheEnvironment(t *testing.T) {
	t.Parallel()
	secret := webhookstest.NewSecret("stripe")
	s := start(t, map[string]string{"STRIPE_WEBHOOK_SECRET": secret, "SLACK_WEBHOOK_SECRET": webhookstest.NewSecret("slack")})
	line := s.stderr.waitFor(t, `"provider":"stripe"`)
	assert.Contains(t, line, "provider registered")
	assert.Contains(t, line, `"secret_from":"STRIPE_WEBHOOK_SECRET"`)
	assert.NotContains(t, line, secret)
	s.stderr.waitFor(t, `"provider":"slack"`)

	req := webhookstest.NewRequest(t, "stripe", s.url+"/webhooks/stripe", secret, webhookstest.Message{Type: "invoice.paid"})
	resp, err := testClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusAccepted, resp.StatusCode, "a Stripe delivery signed with STRIPE_WEBHOOK_SECRET is accepted")
	s.stdout.waitFor(t, `"event_type":"invoice.paid"`)

	code, _ := s.post(t, "/webhooks/github", githubPayload, githubHeaders("g"))
	assert.Equal(t, http.StatusNotFound, code, "only providers whose secret is set are registered")
}

// X's challenge-response check answers the HMAC X signs deliveries with:
// it answers only X's opaque tokens, so a JSON body put in crc_token gets
// no signature, and nothing it does answer is accepted as the signature
// of a delivery.
func TestTwitterCRCIsNoSigningOracle(t *testing.T) {
	t.Parallel()
	secret := webhookstest.NewSecret("twitter")
	s := start(t, map[string]string{"TWITTER_WEBHOOK_SECRET": secret})
	s.stderr.waitFor(t, `"provider":"twitter"`)
	crc := func(token string) (int, string) {
		code, _, answer := s.get(t, http.MethodGet, "/webhooks/twitter?crc_token="+url.QueryEscape(token), "")
		var out struct {
			ResponseToken string `json:"response_token"`
		}
		_ = json.Unmarshal([]byte(answer), &out)
		return code, out.ResponseToken
	}
	forge := func(body, signature string) (int, string) {
		code, _, answer := s.get(t, http.MethodPost, "/webhooks/twitter", body, "Content-Type", "application/json", "X-Twitter-Webhooks-Signature", signature)
		var out struct {
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal([]byte(answer), &out)
		return code, out.Reason
	}

	forged := `{"for_user_id":"2244994945","tweet_create_events":[{"id_str":"1850000000000000001","text":"forged"}]}`
	code, answer := crc(forged)
	assert.Equal(t, http.StatusUnauthorized, code, "a JSON body is no crc_token")
	assert.Empty(t, answer, "no response_token for a JSON body")
	if answer != "" {
		code, _ = forge(forged, answer)
		assert.Equal(t, http.StatusUnauthorized, code, "the oracle's answer is refused as the body's signature")
	}

	const token = "9b4507b3-9040-4669-9ca3-6b94edb50553"
	code, answer = crc(token)
	require.Equal(t, http.StatusOK, code, "a token of X's shape is answered")
	require.NotEmpty(t, answer)
	for _, body := range []string{forged, token} {
		code, reason := forge(body, answer)
		assert.Equal(t, http.StatusUnauthorized, code, "the CRC answer is no signature of %q", body)
		assert.NotEmpty(t, reason)
	}

	req := webhookstest.NewRequest(t, "twitter", s.url+"/webhooks/twitter", secret, webhookstest.Message{})
	resp, err := testClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a delivery X signed is accepted")
	s.stdout.waitFor(t, `"provider":"twitter"`)
}

// heldRequest is a signed POST whose sender stalls inside its body.
type heldRequest struct {
	conn net.Conn
	r    *bufio.Reader
	rest string // the body not yet sent
}

// holdRequest opens a connection and sends a signed POST's headers with
// Expect: 100-continue. The server answers 100 Continue when the handler
// first reads the body, that is once the request holds one of
// -max-in-flight's slots; holdRequest waits for that, sends the start of
// the body and stalls, as a slow or hostile sender does.
func holdRequest(t *testing.T, addr, secret, id string) *heldRequest {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second))) // a bound on a broken test, not a timing
	body := fmt.Sprintf(`{"id":%q,"pad":"%s"}`, id, strings.Repeat("x", 1000))
	var req strings.Builder
	fmt.Fprintf(&req, "POST /webhooks/demo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n", len(body))
	for k, v := range demoHeaders(secret, id, "order.created", body, time.Now()) {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	_, err = io.WriteString(c, req.String())
	require.NoError(t, err)
	h := &heldRequest{conn: c, r: bufio.NewReader(c), rest: body[10:]}
	resp, err := http.ReadResponse(h.r, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusContinue, resp.StatusCode, "the handler reads the body: the request is in flight")
	_, err = io.WriteString(c, body[:10])
	require.NoError(t, err)
	return h
}

// release sends the rest of the body and returns the status of the answer.
func (h *heldRequest) release(t *testing.T) int {
	t.Helper()
	_, err := io.WriteString(h.conn, h.rest)
	require.NoError(t, err)
	resp, err := http.ReadResponse(h.r, nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestMaxInFlightShedsAFloodAtOnce: with -max-in-flight 4 and four
// requests stalled inside their bodies, a fifth is answered 503 with
// Retry-After while the four are still held, without waiting for them;
// once they are released (and answered 202) a new request is taken.
func TestMaxInFlightShedsAFloodAtOnce(t *testing.T) {
	t.Parallel()
	const secret = "demo-secret"
	// The shares off: four requests of one client to one provider would
	// otherwise leave a share free for others (see the Receiver's tests).
	s := start(t, map[string]string{"DEMO_WEBHOOK_SECRET": secret}, "-max-in-flight", "4", "-client-share", "0", "-provider-share", "0")
	addr := strings.TrimPrefix(s.url, "http://")
	held := make([]*heldRequest, 4)
	for i := range held {
		held[i] = holdRequest(t, addr, secret, fmt.Sprint("held-", i))
	}

	req, err := http.NewRequest(http.MethodPost, s.url+"/webhooks/demo", strings.NewReader(`{}`))
	require.NoError(t, err)
	for k, v := range demoHeaders(secret, "fifth", "order.created", `{}`, time.Now()) {
		req.Header.Set(k, v)
	}
	resp, err := testClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the fifth request is shed while four are held")
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))
	s.stderr.waitFor(t, "too many requests in flight")

	// The four were held all along: each is answered only now. The
	// Receiver frees its slot before the server writes the answer out, so
	// once the four answers are read the slots are free.
	for i, h := range held {
		assert.Equal(t, http.StatusAccepted, h.release(t), "held request %d, once its body arrived", i)
	}
	code, _ := s.post(t, "/webhooks/demo", `{}`, demoHeaders(secret, "after", "order.created", `{}`, time.Now()))
	assert.Equal(t, http.StatusAccepted, code, "a request after the flood is taken")
	s.stdout.waitFor(t, `"event_id":"after"`)
	assert.Empty(t, s.stdout.matching(`"event_id":"fifth"`), "the shed request was not stored")
}

// TestStalledDatabaseAnswers503 runs the server on PostgreSQL through a
// proxy that stalls: requests are answered 503 within the store timeout
// instead of hanging, and the server recovers by itself once the database
// answers again.
func TestStalledDatabaseAnswers503(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	proxy, err := faultproxy.New(pgtest.Address(t, dsn))
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	schema := pgtest.NewSchemaAt(t, dsn)
	s := start(t, map[string]string{"DEMO_WEBHOOK_SECRET": "demo-secret"}, "-dsn", pgtest.WithAddress(t, dsn, proxy.Addr()), "-schema", schema)

	code, _ := s.post(t, "/webhooks/demo", `{}`, demoHeaders("demo-secret", "before", "order.created", `{}`, time.Now()))
	require.Equal(t, http.StatusAccepted, code)

	proxy.Stall()
	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, s.url+"/webhooks/demo", strings.NewReader(`{}`))
	require.NoError(t, err)
	for k, v := range demoHeaders("demo-secret", "during", "order.created", `{}`, time.Now()) {
		req.Header.Set(k, v)
	}
	resp, err := testClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	took := time.Since(start)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a stalled database is answered 503, not held")
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))
	// The Receiver's store timeout (WithReceiverStoreTimeout's default,
	// DefaultReceiverStoreTimeout), and a margin for a loaded two-core
	// machine, as internal/testing/faulttest allows.
	const storeTimeout = 2 * time.Second
	assert.Less(t, took, storeTimeout+2500*time.Millisecond, "answered within the store timeout, not after the stall (took %v)", took)

	proxy.Heal()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, _ = s.post(t, "/webhooks/demo", `{}`, demoHeaders("demo-secret", "during", "order.created", `{}`, time.Now()))
		if code == http.StatusAccepted || code == http.StatusOK {
			break
		}
		require.True(t, time.Now().Before(deadline), "the server did not recover within 20s of the database coming back (last %d)", code)
		time.Sleep(20 * time.Millisecond)
	}
	s.stdout.waitFor(t, `"event_id":"during"`)
}

func TestRetentionDeletesSucceededItems(t *testing.T) {
	t.Parallel()
	s := start(t, map[string]string{"GITHUB_WEBHOOK_SECRET": githubSecret}, "-retention", "1ns", "-retention-every", "5ms")
	code, _ := s.post(t, "/webhooks/github", githubPayload, githubHeaders("old"))
	require.Equal(t, http.StatusAccepted, code)
	s.stdout.waitFor(t, `"handler":"ledger","provider":"github","tenant":"","event_id":"old"`)
	s.stdout.waitFor(t, `"handler":"audit","provider":"github","tenant":"","event_id":"old"`)
	// Once retention removed both its jobs, and with the last the event,
	// the same delivery is new again.
	for deadline := time.Now().Add(10 * time.Second); ; {
		code, body := s.post(t, "/webhooks/github", githubPayload, githubHeaders("old"))
		if code == http.StatusAccepted {
			assert.Equal(t, "accepted", body["status"])
			break
		}
		require.Equal(t, http.StatusOK, code, "a duplicate until retention removes it")
		require.True(t, time.Now().Before(deadline), "retention did not remove the succeeded event within 10s")
		time.Sleep(10 * time.Millisecond)
	}
	assert.NotEmpty(t, s.stderr.matching(`"deleted_items":`))
}

// get fetches path with the headers given (name, value, …) and returns
// the status, the headers and the body.
func (s *server) get(t *testing.T, method, path, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := testClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(raw)
}

func TestAdminToken(t *testing.T) {
	t.Parallel()
	const secret, token = "demo-secret", "tok-3b6e0f"
	s := start(t, map[string]string{"DEMO_WEBHOOK_SECRET": secret}, "-admin-token", token, "-fail-types", "order.refund")
	line := s.stderr.waitFor(t, "admin page and API")
	assert.Contains(t, line, `"url":"http://127.0.0.1:`)
	assert.Contains(t, line, `/admin/"`)
	assert.NotContains(t, line, token, "the token is never logged")

	code, hdr, body := s.get(t, http.MethodGet, "/admin/", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Contains(t, hdr.Values("WWW-Authenticate"), `Basic realm="hookinbox admin", charset="UTF-8"`, "a browser asks for the token")
	assert.Contains(t, body, `"error":"unauthorized"`)
	code, _, _ = s.get(t, http.MethodGet, "/admin/api/stats", "", "Authorization", "Bearer wrong-token")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _, _ = s.get(t, http.MethodGet, "/admin/api/stats", "", "Authorization", "Bearer "+token+"x")
	assert.Equal(t, http.StatusUnauthorized, code)

	code, hdr, body = s.get(t, http.MethodGet, "/admin/", "", "Authorization", "Bearer "+token)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "text/html; charset=utf-8", hdr.Get("Content-Type"))
	assert.Contains(t, body, "Dead letters")
	req, err := http.NewRequest(http.MethodGet, s.url+"/admin/", nil)
	require.NoError(t, err)
	req.SetBasicAuth("anyone", token)
	resp, err := testClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the token as a browser login's password")

	// A dead letter in memstore, found, replayed as admin-token, run again.
	code, _ = s.post(t, "/webhooks/demo", `{"a":2}`, demoHeaders(secret, "o2", "order.refund", `{"a":2}`, time.Now()))
	require.Equal(t, http.StatusAccepted, code)
	s.stderr.waitFor(t, "event dead-lettered")
	auth := []string{"Authorization", "Bearer " + token}
	code, _, body = s.get(t, http.MethodGet, "/admin/api/dead-letters?provider=demo", "", auth...)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"event_id": "o2"`)
	code, _, body = s.get(t, http.MethodGet, "/admin/item?provider=demo&event_id=o2", "", auth...)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "dead_lettered")
	code, _, body = s.get(t, http.MethodPost, "/admin/api/replay", `{"provider":"demo","event_id":"o2","handler":"audit","reason":"retry after fix"}`,
		append(auth, "Content-Type", "application/json")...)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"actor": "admin-token"`)
	for deadline := time.Now().Add(10 * time.Second); len(s.stderr.matching("event dead-lettered")) < 2; {
		require.True(t, time.Now().Before(deadline), "the replayed event did not run again")
		select {
		case <-s.stderr.more:
		case <-time.After(time.Until(deadline)):
		}
	}
	code, _, body = s.get(t, http.MethodGet, "/admin/api/item?provider=demo&event_id=o2", "", auth...)
	require.Equal(t, http.StatusOK, code)
	var d struct {
		History []struct{ Number int }
		Audit   []struct{ Actor, Reason string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &d))
	assert.Len(t, d.History, 2, "it ran again")
	require.Len(t, d.Audit, 1)
	assert.Equal(t, "admin-token", d.Audit[0].Actor)
	assert.Equal(t, "retry after fix", d.Audit[0].Reason)
}

func TestNoAdminWithoutToken(t *testing.T) {
	t.Parallel()
	s := start(t, map[string]string{"DEMO_WEBHOOK_SECRET": "demo-secret"})
	code, _, _ := s.get(t, http.MethodGet, "/admin/", "")
	assert.Equal(t, http.StatusNotFound, code)
	code, _, _ = s.get(t, http.MethodGet, "/metrics", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Empty(t, s.stderr.matching("admin page"))
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	const secret = "demo-secret"
	s := start(t, map[string]string{"DEMO_WEBHOOK_SECRET": secret}, "-metrics", "-fail-types", "order.refund")
	s.stderr.waitFor(t, `"msg":"metrics"`)
	code, _ := s.post(t, "/webhooks/demo", `{"a":1}`, demoHeaders(secret, "m1", "order.created", `{"a":1}`, time.Now()))
	require.Equal(t, http.StatusAccepted, code)
	code, _ = s.post(t, "/webhooks/demo", `{"a":2}`, demoHeaders(secret, "m2", "order.refund", `{"a":2}`, time.Now()))
	require.Equal(t, http.StatusAccepted, code)
	code, _ = s.post(t, "/webhooks/demo", `{"a":3}`, demoHeaders("wrong-secret", "m3", "order.created", `{"a":3}`, time.Now()))
	require.Equal(t, http.StatusUnauthorized, code)
	s.stderr.waitFor(t, "event dead-lettered")
	s.stdout.waitFor(t, `"event_id":"m1"`)

	// The handler logs m1 before the Processor records the attempt, and
	// the server says nothing after it: no signal crosses the process, so
	// /metrics is read again until the attempt shows, within a deadline.
	handled := regexp.MustCompile(`(?m)^webhooks_handler_duration_seconds_count\{event_type="order.created",handler="audit"[^}]*outcome="succeeded"[^}]*\} 1$`)
	ledgerHandled := regexp.MustCompile(`(?m)^webhooks_handler_duration_seconds_count\{event_type="order.created",handler="ledger"[^}]*outcome="succeeded"[^}]*\} 1$`)
	var (
		hdr  http.Header
		body string
	)
	for deadline := time.Now().Add(10 * time.Second); ; {
		code, hdr, body = s.get(t, http.MethodGet, "/metrics", "")
		require.Equal(t, http.StatusOK, code)
		if handled.MatchString(body) && ledgerHandled.MatchString(body) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Contains(t, hdr.Get("Content-Type"), "text/plain")
	for _, want := range []string{
		`(?m)^webhooks_received_total\{[^}]*provider="demo"[^}]*status="accepted"[^}]*\} 2$`,
		`(?m)^webhooks_received_total\{[^}]*provider="demo"[^}]*status="rejected"[^}]*\} 1$`,
		`(?m)^webhooks_verification_failures_total\{[^}]*reason="bad_signature"[^}]*\} 1$`,
		`(?m)^webhooks_dead_lettered_total\{error_class="permanent",event_type="order.refund"[^}]*provider="demo"[^}]*\} 1$`,
		`(?m)^webhooks_handler_duration_seconds_count\{event_type="order.created",handler="ledger"[^}]*outcome="succeeded"[^}]*\} 1$`,
		`(?m)^webhooks_handler_duration_seconds_count\{event_type="order.created",handler="audit"[^}]*outcome="succeeded"[^}]*\} 1$`,
		`(?m)^webhooks_enqueue_duration_seconds_bucket\{`,
		`(?m)^webhooks_items\{[^}]*state="dead"[^}]*\} 1$`,
		`(?m)^webhooks_dead_letters\{event_type="order.refund"[^}]*provider="demo"[^}]*\} 1$`,
		`(?m)^webhooks_backlog(\{[^}]*\})? 0$`,
		`(?m)^webhooks_oldest_due_age_seconds(\{[^}]*\})? 0$`,
	} {
		assert.Regexp(t, want, body)
	}
	assert.NotContains(t, body, "target_info", "no resource metric")
	assert.NotContains(t, body, "otel_scope_", "no scope labels")
	for _, l := range strings.Split(body, "\n") {
		if l == "" {
			continue
		}
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "#" && (f[1] == "HELP" || f[1] == "TYPE") {
			assert.True(t, strings.HasPrefix(f[2], "webhooks_"), "every metric is prefixed webhooks_: %s", l)
			continue
		}
		assert.True(t, strings.HasPrefix(l, "webhooks_"), "every metric is prefixed webhooks_: %s", l)
	}
}

// TestHelpHidesTheDatabasePassword runs the built server as an operator
// would, with DATABASE_URL holding a password: neither -help nor a flag
// error prints it, nor any other part of the connection string's secret.
func TestHelpHidesTheDatabasePassword(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	for _, args := range [][]string{{"-help"}, {"-h"}, {"-no-such-flag"}, {"-workers", "many"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL=postgres://u:secretpw@db.internal:5432/inbox?sslmode=require&password=secretpw2", "ADMIN_TOKEN=secret-token")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		all := stdout.String() + stderr.String()
		assert.Contains(t, all, "-dsn", "%v prints the flags", args)
		assert.NotContains(t, all, "secretpw", "%v", args)
		assert.NotContains(t, all, "secret-token", "%v", args)
	}
	// A connection string that does not parse is refused without its
	// password.
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DATABASE_URL=postgres://u:secretpw@db.internal:notaport/inbox", "DEMO_WEBHOOK_SECRET=x")
	out, err = cmd.CombinedOutput()
	require.Error(t, err, "the server refuses to start: %s", out)
	assert.Contains(t, string(out), "connecting to PostgreSQL")
	assert.NotContains(t, string(out), "secretpw")
}
