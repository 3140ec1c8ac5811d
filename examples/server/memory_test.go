package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/admin"
	"github.com/hookinbox/webhooks/pgstore"
)

// TestPostgresListPagesOverLargeDeadLetters: the server, in a process of
// its own on PostgreSQL, pages dead letters of 1 MiB each through the
// admin API, page after page, without reading their payloads: its peak
// resident memory (VmHWM) grows by less than a page's worth of payloads.
// (Reading them, each page of 64 took 64 MiB and more.)
func TestPostgresListPagesOverLargeDeadLetters(t *testing.T) {
	dsn := requireDB(t)
	t.Parallel()
	const (
		deadLetters  = 64
		payloadBytes = 1 << 20
		pages        = 5
		token        = "tok-memory"
		// bound is what the peak may grow by while the pages are listed:
		// well under one page's payloads (64 MiB).
		bound = 24 << 20
	)
	schema := testSchema(t, dsn)
	seedLargeDeadLetters(t, dsn, schema, deadLetters, payloadBytes)

	srv := startProcess(t, buildServer(t), map[string]string{"DEMO_WEBHOOK_SECRET": "demo-secret"},
		"-dsn", dsn, "-schema", schema, "-admin-token", token)
	list := func() admin.Page {
		t.Helper()
		code, _, body := srv.get(t, http.MethodGet, "/admin/api/dead-letters?limit=500", "", "Authorization", "Bearer "+token)
		require.Equal(t, http.StatusOK, code, body)
		var p admin.Page
		require.NoError(t, json.Unmarshal([]byte(body), &p))
		return p
	}
	// A first listing, small, warms the server up (connections, templates
	// and buffers of its own), so the peak after it is the baseline.
	code, _, body := srv.get(t, http.MethodGet, "/admin/api/dead-letters?limit=1", "", "Authorization", "Bearer "+token)
	require.Equal(t, http.StatusOK, code, body)
	before := srv.memory(t)
	for range pages {
		p := list()
		require.Len(t, p.Items, deadLetters)
		for _, it := range p.Items {
			assert.Equal(t, payloadBytes, it.PayloadBytes, "the payload's length is listed, not its bytes: %s", it.EventID)
		}
	}
	after := srv.memory(t)
	t.Logf("server memory: peak %d MiB before %d pages of %d dead letters of %d KiB, %d MiB after (resident %d MiB → %d MiB)",
		before.hwm>>20, pages, deadLetters, payloadBytes>>10, after.hwm>>20, before.rss>>20, after.rss>>20)
	assert.Less(t, after.hwm-before.hwm, int64(bound), "the server's peak resident memory grew by %d MiB while listing", (after.hwm-before.hwm)>>20)
}

// seedLargeDeadLetters stores n dead letters of size bytes each in schema,
// through pgstore.
func seedLargeDeadLetters(t *testing.T, dsn, schema string, n, size int) {
	t.Helper()
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	defer pool.Close()
	s, err := pgstore.New(pool, pgstore.WithSchema(schema), pgstore.WithEnqueueBatch(1))
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	now := time.Now().Add(-time.Hour).UTC()
	filler := strings.Repeat("x", size-64)
	for i := range n {
		payload := []byte(fmt.Sprintf(`{"id":"large-%03d","filler":"%s`, i, filler))
		payload = append(payload, strings.Repeat(" ", size-len(payload)-2)+`"}`...)
		env := webhooks.Envelope{
			Key:           webhooks.InboxKey{Provider: "demo", EventID: fmt.Sprintf("large-%03d", i)},
			EventType:     "order.large",
			Payload:       payload,
			Headers:       http.Header{"Content-Type": {"application/json"}},
			PayloadSHA256: sha256.Sum256(payload),
			ReceivedAt:    now,
		}
		_, err := s.Enqueue(ctx, env)
		require.NoError(t, err)
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 1})
		require.NoError(t, err)
		require.Len(t, leases, 1)
		require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptDeadLettered,
			Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: "too large"}, Now: now}))
	}
}

// buildServer builds this example into a temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/hookinbox/webhooks/examples/server").CombinedOutput()
	require.NoError(t, err, "go build ./examples/server: %s", out)
	return bin
}

// process is the server running as a process of its own, whose memory a
// test reads.
type process struct {
	*server
	cmd *exec.Cmd
}

// startProcess runs bin with args and env (only those variables) on a free
// port, and waits for it to listen. It is interrupted, and waited for,
// when t ends.
func startProcess(t *testing.T, bin string, env map[string]string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &process{server: &server{stdout: newLines(), stderr: newLines()}, cmd: cmd}
	exited := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	addr := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			_, _ = p.stderr.Write([]byte(line + "\n"))
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "listening" {
				addr <- l.Addr
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-exited:
		t.Fatalf("the server exited before listening:\n%s", strings.Join(p.stderr.matching(""), "\n"))
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not listen within 30s")
	}
	return p
}

// memoryUse is a process's resident memory, now and at its peak.
type memoryUse struct{ rss, hwm int64 }

// memory reads the process's VmRSS and VmHWM from /proc, skipping the test
// where there is no /proc.
func (p *process) memory(t *testing.T) memoryUse {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if os.IsNotExist(err) {
		t.Skip("no /proc/<pid>/status on this system: the server's memory cannot be read")
	}
	require.NoError(t, err)
	var m memoryUse
	for line := range strings.Lines(string(b)) {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch name {
		case "VmRSS":
			require.NoError(t, err, line)
			m.rss = kb << 10
		case "VmHWM":
			require.NoError(t, err, line)
			m.hwm = kb << 10
		}
	}
	require.NotZero(t, m.hwm, "VmHWM in /proc/%d/status", p.cmd.Process.Pid)
	return m
}
