package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
)

// BenchmarkGatewayGitHub measures one verified, stored delivery through the
// http.Handler (HMAC-SHA256 over a 1 KiB body, memstore).
func BenchmarkGatewayGitHub(b *testing.B) {
	v, err := webhooks.NewHMACVerifier(providers.GitHubOptions(), webhooks.StaticSecrets("bench-secret"))
	if err != nil {
		b.Fatal(err)
	}
	r := webhooks.NewRegistry()
	r.MustRegister("github", v)
	gw, err := webhooks.NewReceiver(r, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))
	if err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("x", 1024)
	sig := signGitHub("bench-secret", body)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		req := httptest.NewRequest(http.MethodPost, "/webhooks/github", strings.NewReader(body))
		req.Header.Set("X-Hub-Signature-256", sig)
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprint(i))
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkProcessorMemstore measures the lease loop per event: acquire (in
// batches), dispatch to a no-op handler, complete; memstore, 4 workers, a
// backlog of b.N due events.
func BenchmarkProcessorMemstore(b *testing.B) {
	store := memstore.NewInbox()
	var wg sync.WaitGroup
	mux := webhooks.NewMux()
	if err := mux.HandleFunc("*", func(context.Context, webhooks.Event) error { wg.Done(); return nil }); err != nil {
		b.Fatal(err)
	}
	// Four workers, as before DefaultWorkers became 100, so results stay
	// comparable with benchstat.
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithLogger(discard), webhooks.WithWorkers(4))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	now := time.Now()
	wg.Add(b.N)
	for i := range b.N {
		if _, err := store.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "p", EventID: fmt.Sprint(i)}, EventType: "t", ReceivedAt: now}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	wg.Wait()
	b.StopTimer()
	cancel()
	<-done
}

func signGitHub(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}
