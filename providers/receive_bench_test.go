//go:build unix

package providers_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// BenchmarkReceive measures the whole receive of a new delivery as a host
// runs it: a catalog entry's verifier (providers.New) and a Receiver on
// memstore serving an *http.Request to an
// httptest.ResponseRecorder (routing, the body read, verification, the
// event's fields, the headers kept, Enqueue, the answer). The requests and
// their signatures are made outside the timer, a batch at a time, as a
// server would have parsed them; each carries a new event ID. Beside the
// time, cpu-ns/op is the CPU time the whole process spent per receive
// (the garbage collector's included), which other work on a shared
// machine moves less than the time.
//
//   - provider=stripe: a 2 KiB Stripe-shaped body, the event's ID, type
//     and API version read from the body.
//   - provider=github: a GitHub push event, the ID and type read from
//     headers.
func BenchmarkReceive(b *testing.B) {
	b.Run("provider=stripe", func(b *testing.B) {
		const secret = "whsec_bench"
		ts := strconv.FormatInt(benchNow.Unix(), 10)
		benchReceive(b, "stripe", secret, stripeHeaders, func(i int) ([]byte, http.Header) {
			id := fmt.Sprintf("evt_%024d", i) // as long as Stripe's
			body := bytes.Replace(stripeBenchBody, []byte(stripeBenchID), []byte(id), 1)
			sig := hex.EncodeToString(hmacSHA256(secret, []byte(ts+"."), body))
			return body, http.Header{"Stripe-Signature": {"t=" + ts + ",v1=" + sig}}
		})
	})
	b.Run("provider=github", func(b *testing.B) {
		const secret = "github-bench-secret"
		sig := hex.EncodeToString(hmacSHA256(secret, githubPushBody))
		benchReceive(b, "github", secret, githubHeaders, func(i int) ([]byte, http.Header) {
			return githubPushBody, http.Header{
				"X-Hub-Signature-256": {"sha256=" + sig},
				"X-Github-Delivery":   {fmt.Sprintf("0a1b2c3d-e4f5-11f0-8e9a-%012x", i)},
				"X-Github-Event":      {"push"},
			}
		})
	})
}

// The other headers the providers send, beside the signature, ID and type.
var (
	stripeHeaders = http.Header{
		"Accept":          {"*/*; q=0.5, application/xml"},
		"Cache-Control":   {"no-cache"},
		"Content-Type":    {"application/json; charset=utf-8"},
		"User-Agent":      {"Stripe/1.0 (+https://stripe.com/docs/webhooks)"},
		"Accept-Encoding": {"gzip"},
		"X-Forwarded-For": {"54.187.174.169"},
	}
	githubHeaders = http.Header{
		"Accept":                                 {"*/*"},
		"Content-Type":                           {"application/json"},
		"User-Agent":                             {"GitHub-Hookshot/7d3b1f4"},
		"X-Github-Hook-Id":                       {"460328217"},
		"X-Github-Hook-Installation-Target-Id":   {"79929171"},
		"X-Github-Hook-Installation-Target-Type": {"repository"},
		"Accept-Encoding":                        {"gzip"},
		"X-Forwarded-For":                        {"140.82.115.54"},
	}
)

// stripeBenchBody is the Stripe-shaped body, with the event ID that each
// request replaces.
var stripeBenchBody = stripeShapedBody(benchBodySize)

const stripeBenchID = "evt_1NG8Du2eZvKYlo2CUI79vXWy"

// githubPushBody is a push event as GitHub sends it: compact JSON, about
// 3 KiB.
var githubPushBody = []byte(`{"ref":"refs/heads/main","before":"6113728f27ae82c7b1a177c8d03f9e96e0adf246",` +
	`"after":"76ae82a2d4f5a6b1c9e0f3d2b7a8c5e4f1d0a9b8","repository":{"id":79929171,"node_id":"MDEwOlJlcG9zaXRvcnk3OTkyOTE3MQ==",` +
	`"name":"webhooks","full_name":"acme/webhooks","private":true,"owner":{"name":"acme","email":null,"login":"acme","id":21031067,` +
	`"node_id":"MDQ6VXNlcjIxMDMxMDY3","avatar_url":"https://avatars.githubusercontent.com/u/21031067?v=4","gravatar_id":"",` +
	`"url":"https://api.github.com/users/acme","html_url":"https://github.com/acme","type":"Organization","site_admin":false},` +
	`"html_url":"https://github.com/acme/webhooks","description":"Inbound webhooks","fork":false,"url":"https://github.com/acme/webhooks",` +
	`"created_at":1713885437,"updated_at":"2026-03-04T05:06:07Z","pushed_at":1772600767,"git_url":"git://github.com/acme/webhooks.git",` +
	`"ssh_url":"git@github.com:acme/webhooks.git","clone_url":"https://github.com/acme/webhooks.git","homepage":null,"size":1042,` +
	`"stargazers_count":12,"watchers_count":12,"language":"Go","has_issues":true,"has_projects":false,"has_downloads":true,` +
	`"has_wiki":false,"has_pages":false,"forks_count":1,"archived":false,"disabled":false,"open_issues_count":3,"license":null,` +
	`"allow_forking":true,"is_template":false,"topics":["go","webhooks"],"visibility":"private","forks":1,"open_issues":3,` +
	`"watchers":12,"default_branch":"main","stargazers":12,"master_branch":"main","organization":"acme"},` +
	`"pusher":{"name":"jenny","email":"jenny@example.com"},"organization":{"login":"acme","id":21031067,` +
	`"node_id":"MDEyOk9yZ2FuaXphdGlvbjIxMDMxMDY3","url":"https://api.github.com/orgs/acme","description":""},` +
	`"sender":{"login":"jenny","id":583231,"node_id":"MDQ6VXNlcjU4MzIzMQ==","avatar_url":"https://avatars.githubusercontent.com/u/583231?v=4",` +
	`"url":"https://api.github.com/users/jenny","html_url":"https://github.com/jenny","type":"User","site_admin":false},` +
	`"created":false,"deleted":false,"forced":false,"base_ref":null,` +
	`"compare":"https://github.com/acme/webhooks/compare/6113728f27ae...76ae82a2d4f5",` +
	`"commits":[{"id":"76ae82a2d4f5a6b1c9e0f3d2b7a8c5e4f1d0a9b8","tree_id":"d3f0c1b2a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4",` +
	`"distinct":true,"message":"Receiver: read the body once\n\nThe verifier and the store see the same bytes.",` +
	`"timestamp":"2026-03-04T05:06:01+00:00","url":"https://github.com/acme/webhooks/commit/76ae82a2d4f5a6b1c9e0f3d2b7a8c5e4f1d0a9b8",` +
	`"author":{"name":"Jenny Rosen","email":"jenny@example.com","username":"jenny"},` +
	`"committer":{"name":"GitHub","email":"noreply@github.com","username":"web-flow"},` +
	`"added":[],"removed":[],"modified":["serve.go","serve_test.go"]}],` +
	`"head_commit":{"id":"76ae82a2d4f5a6b1c9e0f3d2b7a8c5e4f1d0a9b8","tree_id":"d3f0c1b2a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4",` +
	`"distinct":true,"message":"Receiver: read the body once\n\nThe verifier and the store see the same bytes.",` +
	`"timestamp":"2026-03-04T05:06:01+00:00","url":"https://github.com/acme/webhooks/commit/76ae82a2d4f5a6b1c9e0f3d2b7a8c5e4f1d0a9b8",` +
	`"author":{"name":"Jenny Rosen","email":"jenny@example.com","username":"jenny"},` +
	`"committer":{"name":"GitHub","email":"noreply@github.com","username":"web-flow"},` +
	`"added":[],"removed":[],"modified":["serve.go","serve_test.go"]}}`)

// receiveBatch is how many requests are made at a time, outside the
// timer.
const receiveBatch = 512

// benchReceive runs the whole receive for the catalog's provider with
// secret; delivery returns the i-th body and the headers that sign and
// name it, which are sent with the other headers.
func benchReceive(b *testing.B, provider, secret string, other http.Header, delivery func(i int) ([]byte, http.Header)) {
	v, err := providers.New(provider, providers.Config{Secrets: webhooks.StaticSecrets(secret), Clock: webhookstest.NewClock(benchNow)})
	if err != nil {
		b.Fatal(err)
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister(provider, v)
	rcv, err := webhooks.NewReceiver(registry, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(quietLogger))
	if err != nil {
		b.Fatal(err)
	}
	target := "/webhooks/" + provider
	batch := make([]*http.Request, 0, receiveBatch)
	next := 0
	fill := func() {
		batch = batch[:0]
		for range receiveBatch {
			body, h := delivery(next)
			next++
			req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
			for k, vs := range other {
				req.Header[k] = vs
			}
			for k, vs := range h {
				req.Header[k] = vs
			}
			req.Header.Set("Content-Length", strconv.Itoa(len(body)))
			batch = append(batch, req)
		}
	}
	body, _ := delivery(0)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	i := receiveBatch
	var cpu time.Duration
	mark := processCPU(b)
	for b.Loop() {
		if i == receiveBatch {
			cpu += processCPU(b) - mark
			b.StopTimer()
			fill()
			i = 0
			b.StartTimer()
			mark = processCPU(b)
		}
		rec := httptest.NewRecorder()
		rcv.ServeHTTP(rec, batch[i])
		i++
		if rec.Code != http.StatusAccepted {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	cpu += processCPU(b) - mark
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// processCPU returns the user and system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hmacSHA256 is the HMAC-SHA256 of the parts under secret.
func hmacSHA256(secret string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}
