package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

var (
	buildOnce sync.Once
	binDir    string // removed by TestMain
	bin       string
	buildErr  error
)

// buildBinary builds the command once, into a temporary directory, for
// every test of the package.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "hookinbox-test-"); buildErr != nil {
			return
		}
		bin = filepath.Join(binDir, "hookinbox")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return bin
}

// runBinary runs the binary with extra environment variables.
func runBinary(t *testing.T, bin string, envv []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), envv...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("running %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// sendable reports whether send can sign for an entry: every shared
// secret scheme (HMAC, token, Twilio's signed URL).
func sendable(e providers.Entry) bool {
	switch e.Scheme {
	case providers.SchemeHMAC, providers.SchemeToken, providers.SchemeTwilioURL:
		return true
	}
	return false
}

// TestSendEveryEntry runs the built binary against a real Receiver with
// every shared-secret catalog entry registered: each sample is accepted.
func TestSendEveryEntry(t *testing.T) {
	bin := buildBinary(t)
	registry := webhooks.NewRegistry()
	inbox := memstore.NewInbox()
	receiver, err := webhooks.NewReceiver(registry, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	srv := httptest.NewServer(receiver)
	defer srv.Close()

	secrets := map[string]string{}
	n := 0
	for _, e := range providers.Entries() {
		if !sendable(e) {
			continue
		}
		n++
		secrets[e.Name] = webhookstest.NewSecret(e.Name)
		v, err := providers.New(e.Name, providers.Config{Secrets: webhooks.StaticSecrets(secrets[e.Name]), PublicURL: srv.URL, VerifyToken: "vt"})
		require.NoError(t, err, e.Name)
		require.NoError(t, registry.Register(e.Name, v))
	}
	require.GreaterOrEqual(t, n, 40, "send covers at least 40 entries")
	for _, e := range providers.Entries() {
		if !sendable(e) {
			continue
		}
		stdout, stderr, code := runBinary(t, bin, []string{e.SecretEnv() + "=" + secrets[e.Name]},
			"send", "-provider", e.Name, "-url", srv.URL+"/webhooks/"+e.Name)
		assert.Equal(t, 0, code, "%s: %s%s", e.Name, stdout, stderr)
		wantStatus := "202 Accepted"
		if e.Answer != nil {
			wantStatus = "" // the provider's own answer (Meta, X: 200; Graph: 202)
		}
		assert.Contains(t, stdout, wantStatus, e.Name)
	}
	assert.Equal(t, n, inbox.Len(), "every sample was stored")

	// -type, -file, -tenant and -secret-env.
	body := filepath.Join(t.TempDir(), "body.json")
	require.NoError(t, os.WriteFile(body, []byte(`{"id":"evt_file","type":"charge.refunded"}`), 0o644))
	stdout, stderr, code := runBinary(t, bin, []string{"MY_SECRET=" + secrets["stripe"]},
		"send", "-provider", "stripe", "-url", srv.URL+"/webhooks/stripe", "-secret-env", "MY_SECRET", "-file", body)
	assert.Equal(t, 0, code, stdout+stderr)
	assert.Contains(t, stdout, "event evt_file, type charge.refunded")
	stdout, stderr, code = runBinary(t, bin, []string{"GITHUB_WEBHOOK_SECRET=" + secrets["github"]},
		"send", "-provider", "github", "-url", srv.URL+"/webhooks/github", "-type", "pull_request")
	assert.Equal(t, 0, code, stdout+stderr)
	assert.Contains(t, stdout, "type pull_request")

	// A non-2xx answer exits 1: the wrong secret, or a tenant nobody configured.
	stdout, stderr, code = runBinary(t, bin, []string{"STRIPE_WEBHOOK_SECRET=whsec_wrong"},
		"send", "-provider", "stripe", "-url", srv.URL+"/webhooks/stripe")
	assert.Equal(t, 1, code, stdout+stderr)
	assert.Contains(t, stdout, "401 Unauthorized")
	assert.Contains(t, stdout, "bad_signature")
	assert.NotContains(t, stdout+stderr, "whsec_wrong", "the secret is never printed")
	stdout, _, code = runBinary(t, bin, []string{"STRIPE_WEBHOOK_SECRET=" + secrets["stripe"]},
		"send", "-provider", "stripe", "-url", srv.URL+"/webhooks", "-tenant", "acme")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "/webhooks/acme", "the tenant is appended to the path")
}

func TestUsageErrors(t *testing.T) {
	bin := buildBinary(t)
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{nil, nil, 2, "Usage: hookinbox SUBCOMMAND"},
		{[]string{"help"}, nil, 0, "send"},
		{[]string{"help", "send"}, nil, 0, "-secret-env"},
		{[]string{"help", "nope"}, nil, 2, `unknown subcommand "nope"`},
		{[]string{"frobnicate"}, nil, 2, `unknown subcommand "frobnicate"`},
		{[]string{"send"}, nil, 2, "-provider and -url are required"},
		{[]string{"send", "-provider", "strpe", "-url", "http://127.0.0.1:1/x"}, nil, 2, `unknown provider "strpe"`},
		{[]string{"send", "-provider", "discord", "-url", "http://127.0.0.1:1/x"}, nil, 2, "private key"},
		{[]string{"send", "-provider", "stripe", "-url", "http://127.0.0.1:1/x"}, []string{"STRIPE_WEBHOOK_SECRET="}, 2, "STRIPE_WEBHOOK_SECRET is empty"},
		{[]string{"send", "-provider", "stripe", "-url", "ftp://x"}, nil, 2, "not an http(s) URL"},
		{[]string{"send", "-bogus"}, nil, 2, "flag provided but not defined"},
		{[]string{"send", "-provider", "stripe", "-url", "http://127.0.0.1:1/x"}, []string{"STRIPE_WEBHOOK_SECRET=whsec_x"}, 1, "connection refused"},
	} {
		stdout, stderr, code := runBinary(t, bin, tc.env, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s%s", tc.args, stdout, stderr)
		assert.Contains(t, stdout+stderr, tc.want, "%v", tc.args)
		if tc.code == 2 && len(tc.args) > 0 && tc.args[0] == "send" {
			assert.True(t, strings.HasPrefix(stderr, "hookinbox send:") || strings.Contains(stderr, "flag provided"), "%v: %s", tc.args, stderr)
		}
	}
}

// TestSendToTheExampleServer runs the built binary against the example
// server, started as a process of its own with the secret of every
// shared-secret catalog entry in its environment, as a developer would:
// every entry's sample is accepted.
func TestSendToTheExampleServer(t *testing.T) {
	bin := buildBinary(t)
	server := filepath.Join(t.TempDir(), "server")
	if out, err := exec.Command("go", "build", "-o", server, "../../examples/server").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/server: %v: %s", err, out)
	}
	// The server signs and checks the public URL of some providers
	// (HubSpot, Square, Trello, Twilio): give it its own address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	base := "http://" + addr

	env := []string{}
	var names []string
	for _, e := range providers.Entries() {
		if !sendable(e) {
			continue
		}
		names = append(names, e.Name)
		env = append(env, e.SecretEnv()+"="+webhookstest.NewSecret(e.Name))
		if e.NeedsVerifyToken {
			env = append(env, e.VerifyTokenEnv()+"=vt")
		}
	}
	require.GreaterOrEqual(t, len(names), 40)
	cmd := exec.Command(server, "-addr", addr, "-public-url", base)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	// The server logs "listening" once it accepts connections.
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"msg":"listening"`) {
				close(listening)
				_, _ = io.Copy(io.Discard, stderr)
				return
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(60 * time.Second):
		t.Fatal("the example server did not start within 60s")
	}

	for _, name := range names {
		stdout, stderr, code := runBinary(t, bin, env, "send", "-provider", name, "-url", base+"/webhooks/"+name)
		assert.Equal(t, 0, code, "%s: %s%s", name, stdout, stderr)
	}
}
