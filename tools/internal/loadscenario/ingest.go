package loadscenario

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// HTTPLoad is the client side of the HTTP scenarios.
type HTTPLoad struct {
	// Duration of the measured window. Defaults to 10s.
	Duration time.Duration
	// Warmup runs before the window and is not counted. Defaults to 1s.
	Warmup time.Duration
	// Conns is how many connections send requests, each one at a time
	// (closed loop, as wrk does). Defaults to 50.
	Conns int
}

func (l HTTPLoad) withDefaults() HTTPLoad {
	if l.Duration == 0 {
		l.Duration = 10 * time.Second
	}
	if l.Warmup == 0 {
		l.Warmup = time.Second
	}
	if l.Conns == 0 {
		l.Conns = 50
	}
	return l
}

// Receive sends signed 2 KiB Stripe-shaped webhooks to a Receiver on
// loopback HTTP, each a new event, and measures the acknowledgements
// (2xx). With process, a Processor with a no-op handler runs at the same
// time, and the result also reports what it processed and the backlog.
func Receive(ctx context.Context, cfg Config, load HTTPLoad, process bool) (Result, error) {
	cfg, load = cfg.withDefaults(), load.withDefaults()
	sys, err := open(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer sys.close()
	st, err := newStripe(cfg.BodyBytes)
	if err != nil {
		return Result{}, err
	}
	reg := webhooks.NewRegistry()
	if err := reg.Register("stripe", st.verifier); err != nil {
		return Result{}, err
	}
	var processed atomic.Int64
	var proc *webhooks.Processor
	opts := []webhooks.ReceiverOption{webhooks.WithLogger(cfg.Logger), webhooks.WithMaxInFlight(max(128, 2*load.Conns))}
	if process {
		proc, err = sys.processor(func(context.Context, webhooks.Event) error {
			processed.Add(1)
			return nil
		})
		if err != nil {
			return Result{}, err
		}
		opts = append(opts, webhooks.WithProcessor(proc))
	}
	rcv, err := webhooks.NewReceiver(reg, sys.store, append(opts, webhooks.WithReplayStore(sys.store))...)
	if err != nil {
		return Result{}, err
	}
	scenario := "receive"
	if process {
		scenario = "receive+process"
	}
	res := Result{Scenario: scenario, Store: cfg.storeName()}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var procDone chan error
	if proc != nil {
		procDone = make(chan error, 1)
		go func() { procDone <- proc.Run(runCtx) }()
	}
	var windowStart struct {
		processed int64
		backlog   int64
	}
	measured := func() {
		windowStart.processed = processed.Load()
		if process {
			windowStart.backlog, _ = sys.pending(ctx)
		}
	}
	out, err := sendLoad(ctx, rcv, load, st, measured)
	if err != nil {
		return res, err
	}
	if process {
		res.Processed = processed.Load() - windowStart.processed
		res.ProcessedPerSec = float64(res.Processed) / out.elapsed.Seconds()
		res.BacklogStart = windowStart.backlog
		if res.BacklogEnd, err = sys.pending(ctx); err != nil {
			return res, err
		}
		stop()
		if err := <-procDone; err != nil {
			return res, err
		}
	}
	out.fill(&res)
	return res, nil
}

// Bare serves the reference of the Receiver's: a bare net/http handler
// that reads the body and checks its Stripe signature (HMAC-SHA-256 of
// "t.body", hex) and nothing else, under the same load.
func Bare(ctx context.Context, cfg Config, load HTTPLoad) (Result, error) {
	cfg, load = cfg.withDefaults(), load.withDefaults()
	st, err := newStripe(cfg.BodyBytes)
	if err != nil {
		return Result{}, err
	}
	secret := []byte(st.signer.Credential())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !stripeSignatureValid(secret, r.Header.Get("Stripe-Signature"), body) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	})
	out, err := sendLoad(ctx, h, load, st, func() {})
	if err != nil {
		return Result{}, err
	}
	res := Result{Scenario: "bare-hmac", Store: "none"}
	out.fill(&res)
	return res, nil
}

// stripeSignatureValid is the hand-written Stripe check of Bare.
func stripeSignatureValid(secret []byte, header string, body []byte) bool {
	var t string
	var sigs []string
	for item := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(item, "=")
		switch k {
		case "t":
			t = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(t))
	mac.Write([]byte{'.'})
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// loadOutcome is what sendLoad measured in its window.
type loadOutcome struct {
	elapsed time.Duration
	acked   int64
	errors  int64
	lat     []time.Duration
}

func (o loadOutcome) fill(r *Result) {
	r.Elapsed = o.elapsed
	r.Acked, r.Errors = o.acked, o.errors
	r.AckedPerSec = float64(o.acked) / o.elapsed.Seconds()
	r.Latency = percentiles(o.lat)
}

// sendLoad serves h on a loopback port and sends it load's requests; it
// calls measured as the measured window begins.
func sendLoad(ctx context.Context, h http.Handler, load HTTPLoad, st *stripe, measured func()) (loadOutcome, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return loadOutcome{}, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
	}()
	url := "http://" + ln.Addr().String() + "/webhooks/stripe"
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: load.Conns, MaxIdleConnsPerHost: load.Conns, MaxConnsPerHost: load.Conns,
		DisableCompression: true,
	}}
	defer client.CloseIdleConnections()

	// One request first: a load that is refused is a setup mistake.
	if status, err := send(ctx, client, st, url); err != nil || status/100 != 2 {
		return loadOutcome{}, fmt.Errorf("loadscenario: the first request was answered %d (%v)", status, err)
	}

	begin := time.Now()
	from, end := begin.Add(load.Warmup), begin.Add(load.Warmup+load.Duration)
	var (
		all            latencies
		acked, errored atomic.Int64
		firstErr       error
		errOnce        sync.Once
		wg             sync.WaitGroup
	)
	for range load.Conns {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				start := time.Now()
				if !start.Before(end) {
					break
				}
				status, err := send(ctx, client, st, url)
				took := time.Since(start)
				if start.Before(from) || start.Add(took).After(end) {
					continue
				}
				if err != nil || status/100 != 2 {
					errored.Add(1)
					errOnce.Do(func() { firstErr = fmt.Errorf("status %d: %v", status, err) })
					continue
				}
				acked.Add(1)
				lat = append(lat, took)
			}
			all.add(lat)
		})
	}
	wait := time.NewTimer(time.Until(from))
	select {
	case <-wait.C:
		measured()
	case <-ctx.Done():
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return loadOutcome{}, err
	}
	out := loadOutcome{elapsed: end.Sub(from), acked: acked.Load(), errors: errored.Load(), lat: all.d}
	if out.acked == 0 && firstErr != nil {
		return out, errors.Join(errors.New("loadscenario: no request was acknowledged"), firstErr)
	}
	return out, nil
}

// send posts one new signed webhook and returns the status.
func send(ctx context.Context, client *http.Client, st *stripe, url string) (int, error) {
	d, err := st.next(url)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(d.Body))
	if err != nil {
		return 0, err
	}
	req.Header = d.Header
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
