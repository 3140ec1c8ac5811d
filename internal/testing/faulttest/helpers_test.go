package faulttest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// envLong set to 1 runs the long variants.
const envLong = "WEBHOOKS_TEST_LONG"

// scale returns short, or long under WEBHOOKS_TEST_LONG=1.
func scale[T any](short, long T) T {
	if os.Getenv(envLong) == "1" {
		return long
	}
	return short
}

// inbox is the test's own view of a schema's inbox, on a pool of its own.
type inbox struct {
	dsn    string
	schema string
	pool   *pgxpool.Pool
	store  *pgstore.Store
}

// newInbox creates and migrates a fresh schema, dropped when t ends.
func newInbox(t *testing.T, dsn string) *inbox {
	t.Helper()
	pool := newPool(t, dsn, 4)
	schema := pgtest.NewSchema(t, pool)
	store, err := pgstore.New(pool, pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, store.Migrate(ctx))
	return &inbox{dsn: dsn, schema: schema, pool: pool, store: store}
}

// newPool returns a pool of at most maxConns connections to dsn, closed
// when t ends.
func newPool(t *testing.T, dsn string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	require.NoError(t, err)
	cfg.MaxConns = maxConns
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	require.NoError(t, pool.Ping(ctx), "connecting to the database")
	t.Cleanup(pool.Close)
	return pool
}

func key(id string) webhooks.InboxKey { return webhooks.InboxKey{Provider: nodeProvider, EventID: id} }

// get returns the item of event id with its history.
func (in *inbox) get(t *testing.T, id string) ops.Detail {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := in.store.Get(ctx, key(id))
	require.NoError(t, err, "event %s is in the inbox", id)
	return d
}

// stats counts the inbox's items by state.
func (in *inbox) stats(t *testing.T) map[webhooks.State]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := in.store.Stats(ctx, ops.StatsRequest{Now: time.Now()})
	require.NoError(t, err)
	return s.States
}

// count counts every item in the inbox, whatever its state.
func (in *inbox) count(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, in.pool.QueryRow(context.Background(),
		"SELECT count(*) FROM "+pgx.Identifier{in.schema, "inbox_events"}.Sanitize()).Scan(&n))
	return n
}

// heldLeases returns the event IDs of the items leased and held, their
// attempt not started (webhooks.LeaseStarter): pgstore leaves a held
// lease's lease_started_at NULL.
func (in *inbox) heldLeases(t *testing.T) map[string]bool {
	t.Helper()
	rows, err := in.pool.Query(context.Background(), "SELECT event_id FROM "+pgx.Identifier{in.schema, "inbox_jobs"}.Sanitize()+
		" WHERE state = 'leased' AND lease_started_at IS NULL AND lease_worker IS NOT NULL")
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// awaitSettled waits until no item is pending or leased: every item has
// succeeded or died.
func (in *inbox) awaitSettled(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := in.stats(t)
		if s[webhooks.StatePending] == 0 && s[webhooks.StateLeased] == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("items still pending or leased %v after %v: %v", deadline.Sub(time.Now().Add(-within)), within, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lineLog collects a process's output, line by line, and lets a test wait
// for a line instead of sleeping.
type lineLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	more    chan struct{}
}

func newLineLog() *lineLog { return &lineLog{more: make(chan struct{}, 1)} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
	return len(p), nil
}

// all returns the complete lines so far.
func (l *lineLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// matching returns the lines containing substr.
func (l *lineLog) matching(substr string) []string {
	var out []string
	for _, s := range l.all() {
		if strings.Contains(s, substr) {
			out = append(out, s)
		}
	}
	return out
}

// await waits until ok holds for the lines so far.
func (l *lineLog) await(t *testing.T, within time.Duration, what string, ok func(lines []string) bool) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for !ok(l.all()) {
		select {
		case <-l.more:
		case <-deadline.C:
			t.Fatalf("waited %v for %s", within, what)
		}
	}
}

// node is a child process running a Receiver and a Processor (node_test.go).
type node struct {
	cfg    nodeConfig
	cmd    *exec.Cmd
	url    string
	stdout *lineLog
	stderr *lineLog
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// startNode starts a node and waits until it listens. It is killed when t
// ends, if it still runs; its logs are shown when t failed.
func startNode(t *testing.T, cfg nodeConfig) *node {
	t.Helper()
	if cfg.Workers == 0 {
		cfg.Workers = 4
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 4
	}
	if cfg.Poll == 0 {
		cfg.Poll = 250 * time.Millisecond
	}
	if cfg.Lease == 0 {
		cfg.Lease = webhooks.DefaultLeaseDuration
	}
	conf, err := json.Marshal(cfg)
	require.NoError(t, err)
	n := &node{cfg: cfg, stdout: newLineLog(), stderr: newLineLog(), exited: make(chan struct{})}
	n.cmd = exec.Command(os.Args[0], "-test.run=^$")
	n.cmd.Env = append(os.Environ(), envNode+"="+string(conf))
	n.cmd.Stdout, n.cmd.Stderr = n.stdout, n.stderr
	require.NoError(t, n.cmd.Start())
	go func() {
		n.err = n.cmd.Wait()
		close(n.exited)
	}()
	t.Cleanup(func() {
		n.kill()
		if t.Failed() {
			for _, l := range tail(n.stderr.all(), 40) {
				t.Logf("node %s: %s", cfg.Name, l)
			}
		}
	})
	var addr string
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for addr == "" {
		for _, l := range n.stdout.all() {
			if a, ok := strings.CutPrefix(l, "listening "); ok {
				addr = a
			}
		}
		if addr != "" {
			break
		}
		select {
		case <-n.stdout.more:
		case <-n.exited:
			t.Fatalf("node %s exited before listening: %v\n%s", cfg.Name, n.err, strings.Join(n.stderr.all(), "\n"))
		case <-deadline.C:
			t.Fatalf("node %s did not listen within 60s\n%s", cfg.Name, strings.Join(n.stderr.all(), "\n"))
		}
	}
	n.url = "http://" + addr + "/webhooks/" + nodeProvider
	return n
}

func tail(lines []string, n int) []string { return lines[max(0, len(lines)-n):] }

func (n *node) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, n.cmd.Process.Signal(sig), "sending %v to node %s", sig, n.cfg.Name)
}

// awaitSessionsGone waits until the database has ended every session of
// the node. A statement running when the node died still runs to its end,
// and may commit: only then does the state the node left stop changing.
func (n *node) awaitSessionsGone(t *testing.T, in *inbox) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var sessions int
		require.NoError(t, in.pool.QueryRow(context.Background(),
			"SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", n.cfg.applicationName()).Scan(&sessions))
		if sessions == 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "node %s still has %d database sessions 30s after it died", n.cfg.Name, sessions)
		time.Sleep(10 * time.Millisecond)
	}
}

// kill kills the node with SIGKILL, if it still runs, and waits until it
// is gone.
func (n *node) kill() {
	select {
	case <-n.exited:
		return
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
}

// stop asks the node to shut down, as a service manager does, and
// requires that it exits cleanly.
func (n *node) stop(t *testing.T) {
	t.Helper()
	n.signal(t, syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("node %s did not stop within 60s of SIGTERM", n.cfg.Name)
	}
	require.NoError(t, n.err, "node %s exits cleanly", n.cfg.Name)
}

// cpu is the processor time the node has used so far, user and system,
// from /proc.
func (n *node) cpu(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n.cmd.Process.Pid))
	if err != nil {
		t.Skipf("reading a process's CPU time needs Linux's /proc: %v", err)
	}
	// Fields after the command name, which is in parentheses and may
	// hold spaces: state is the first, utime the 12th, stime the 13th.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	require.Greater(t, len(fields), 12, "/proc/pid/stat: %s", b)
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	require.NoError(t, err1)
	require.NoError(t, err2)
	// /proc counts in USER_HZ ticks, 100 a second on Linux.
	return time.Duration(utime+stime) * (time.Second / 100)
}

// rss is the node's resident memory, from /proc. The test skips where
// there is no /proc. It must be called from the test's goroutine; a
// sampler running beside the test calls readRSS.
func (n *node) rss(t *testing.T) int64 {
	t.Helper()
	r, err := n.readRSS()
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		t.Skipf("reading a process's resident memory needs Linux's /proc: %v", err)
	}
	require.NoError(t, err)
	return r
}

// readRSS is the node's resident memory, from /proc/PID/status; the error
// is an *fs.PathError when that file cannot be read.
func (n *node) readRSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS: %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", n.cmd.Process.Pid)
}

// handled returns the event IDs for which the node logged lines starting
// with prefix ("start " or "done "), with how many times each.
func (n *node) handled(prefix string) map[string]int {
	out := map[string]int{}
	for _, l := range n.stdout.all() {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			id, _, _ := strings.Cut(rest, " ")
			out[id]++
		}
	}
	return out
}

// delivery is one webhook a provider sends, perhaps several times.
type delivery struct {
	ID   string
	Type string
	Body []byte
}

func newDelivery(id, typ string) delivery {
	return delivery{ID: id, Type: typ, Body: fmt.Appendf(nil, `{"id":%q,"type":%q}`, id, typ)}
}

// answer is what one attempt to deliver got.
type answer struct {
	ID         string
	Code       int // 0 when the request failed
	RetryAfter string
	Err        error
	Start      time.Time
	Took       time.Duration
}

func (a answer) ok() bool { return a.Code >= 200 && a.Code < 300 }

// provider sends deliveries as a provider does: signed, on a client of its
// own, with a deadline.
type provider struct {
	client *http.Client
}

func newProvider(t *testing.T) *provider {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &provider{client: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
}

// send delivers d to the endpoint at url once.
func (p *provider) send(url string, d delivery) answer {
	return p.sendBody(url, d, bytes.NewReader(d.Body))
}

// sendBody delivers d to the endpoint at url once, its body read from
// body (d.Body, perhaps slowly).
func (p *provider) sendBody(url string, d delivery, body io.Reader) answer {
	a := answer{ID: d.ID, Start: time.Now()}
	ts := strconv.FormatInt(a.Start.Unix(), 10)
	m := hmac.New(sha256.New, []byte(nodeSecret))
	m.Write([]byte(ts + "."))
	m.Write(d.Body)
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		a.Err = err
		return a
	}
	req.ContentLength = int64(len(d.Body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Demo-Timestamp", ts)
	req.Header.Set("X-Demo-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
	req.Header.Set("X-Demo-Event-Id", d.ID)
	req.Header.Set("X-Demo-Event-Type", d.Type)
	resp, err := p.client.Do(req)
	a.Took = time.Since(a.Start)
	if err != nil {
		a.Err = err
		return a
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	a.Code, a.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	return a
}

// deliverUntilStored sends d until it is answered 2xx, as a provider
// retries, at most tries times. It may be called from any goroutine.
func (p *provider) deliverUntilStored(t *testing.T, url string, d delivery, tries int) answer {
	t.Helper()
	var a answer
	for range tries {
		if a = p.send(url, d); a.ok() {
			return a
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("event %s was not stored after %d deliveries; last answer %d %v", d.ID, tries, a.Code, a.Err)
	return a
}

// redeliver sends every delivery not in acked until it is stored, as the
// providers retry, several at a time, and returns how many it sent.
func (p *provider) redeliver(t *testing.T, url string, ds []delivery, acked map[string]bool) int {
	t.Helper()
	todo := make(chan delivery)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for d := range todo {
				a := p.deliverUntilStored(t, url, d, 100)
				assert.Contains(t, []int{200, 202}, a.Code, "event %s", d.ID)
			}
		})
	}
	n := 0
	for _, d := range ds {
		if !acked[d.ID] {
			todo <- d
			n++
		}
	}
	close(todo)
	wg.Wait()
	return n
}

// acked is the set of events some delivery of which was answered 2xx.
func acked(answers []answer) map[string]bool {
	out := map[string]bool{}
	for _, a := range answers {
		if a.ok() {
			out[a.ID] = true
		}
	}
	return out
}

// outcomes lists an item's attempt outcomes, oldest first.
func outcomes(d ops.Detail) []webhooks.AttemptOutcome {
	out := make([]webhooks.AttemptOutcome, len(d.History))
	for i, a := range d.History {
		out[i] = a.Outcome
	}
	return out
}
