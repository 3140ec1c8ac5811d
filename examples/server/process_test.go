//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// process is the example server running as a process of its own: this
// test binary started again as a child (TestMain, envChild).
type process struct {
	*server // url, stdout and stderr; stop is (*process).stop
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error // of Wait, once exited is closed
}

// startProcess starts the server with args and waits until it listens.
// It is killed when t ends if it still runs.
func startProcess(t *testing.T, env map[string]string, args ...string) *process {
	t.Helper()
	raw, err := json.Marshal(append([]string{"-addr", "127.0.0.1:0"}, args...))
	require.NoError(t, err)
	p := &process{server: &server{stdout: newLines(), stderr: newLines()}, exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), envChild+"="+string(raw))
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for p.url == "" {
		for _, l := range p.stderr.matching(`"msg":"listening"`) {
			var line struct{ Addr string }
			require.NoError(t, json.Unmarshal([]byte(l), &line))
			p.url = "http://" + line.Addr
		}
		if p.url != "" {
			break
		}
		select {
		case <-p.stderr.more:
		case <-p.exited:
			t.Fatalf("the server exited before listening: %v\n%s", p.err, strings.Join(p.stderr.matching(""), "\n"))
		case <-deadline.C:
			t.Fatal("the server did not listen within 60s")
		}
	}
	return p
}

// stop sends SIGTERM, as a service manager does, and requires a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not stop within 60s of SIGTERM")
	}
	require.NoError(t, p.err, "the server exits cleanly")
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
