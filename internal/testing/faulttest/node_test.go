package faulttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore"
)

// envNode holds a node's configuration, as JSON, when the test binary is
// started as a child: TestMain then runs the node instead of the tests.
const envNode = "FAULTTEST_NODE"

// nodeConfig configures a node: a host as a service would run it, with a
// Receiver on HTTP and a Processor, both on one pgstore.Store.
type nodeConfig struct {
	DSN    string
	Schema string
	// Name is the processor's worker identity in the attempt history.
	Name    string
	Workers int
	Lease   time.Duration
	Poll    time.Duration
	// MaxConns sizes the pool.
	MaxConns int32
	// StoreTimeout is the Receiver's WithReceiverStoreTimeout and the
	// Processor's WithProcessorStoreTimeout; zero keeps their defaults.
	StoreTimeout time.Duration
	// MaxInFlight is the Receiver's WithMaxInFlight; zero keeps the
	// default (128).
	MaxInFlight int
	// HandlerDelay is how long each handler works before it succeeds.
	HandlerDelay time.Duration
	// BlockFirstAttempt makes handlers of events of type "block" wait, on
	// their first attempt, until their context ends: they are in flight
	// whenever the test kills or pauses the node.
	BlockFirstAttempt bool
	// PoisonType, when set, makes the handler of events of that type kill
	// the node with SIGKILL, on every attempt: a crash loop.
	PoisonType string
	// PoisonBeside, when set, makes the poison's first attempt wait,
	// before it kills the node, until that many other handlers run in it
	// (for at most 30 seconds), so that they run beside it at the crash.
	PoisonBeside int
}

// applicationName names the node's database sessions.
func (cfg nodeConfig) applicationName() string { return "faulttest/" + cfg.Schema + "/" + cfg.Name }

// The node's standard output has one line per fact, each written in one
// write so that lines never interleave and none is half written when the
// node is killed:
//
//	listening <addr>
//	start <event ID> <attempt>   a handler started
//	done <event ID> <attempt>    a handler returned nil
//
// The library's logs go to standard error as JSON.

// The demo scheme every node verifies: HMAC-SHA256 over
// "<timestamp>.<body>", with the event's ID and type in headers.
const (
	nodeSecret   = "faulttest-secret"
	nodeProvider = "demo"
)

func nodeHMACOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Demo-Signature",
			SignaturePrefix: "sha256=",
			SignedContent:   "{timestamp}.{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Demo-Timestamp"},
			Event:           webhooks.EventSource{IDHeader: "X-Demo-Event-Id", TypeHeader: "X-Demo-Event-Type"},
		},
	}
}

// nodeMain runs the node the environment describes until SIGTERM and
// returns the process's exit code.
func nodeMain() int {
	var cfg nodeConfig
	if err := json.Unmarshal([]byte(os.Getenv(envNode)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "node: bad configuration:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := runNode(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 1
	}
	return 0
}

func runNode(ctx context.Context, cfg nodeConfig, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	poolCfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return err
	}
	poolCfg.MaxConns = cfg.MaxConns
	// Named, so a test can tell when a killed node's sessions are gone.
	poolCfg.ConnConfig.RuntimeParams["application_name"] = cfg.applicationName()
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	store, err := pgstore.New(pool, pgstore.WithSchema(cfg.Schema), pgstore.WithLogger(logger))
	if err != nil {
		return err
	}

	var (
		others    atomic.Int32  // handlers started, the poison's excepted
		besideRun chan struct{} // closed once PoisonBeside of them started
	)
	if cfg.PoisonBeside > 0 {
		besideRun = make(chan struct{})
	}
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(ctx context.Context, ev webhooks.Event) error {
		fmt.Fprintf(stdout, "start %s %d\n", ev.ID, ev.Attempt)
		if cfg.PoisonType != "" && ev.Type == cfg.PoisonType {
			if besideRun != nil && ev.Attempt == 1 {
				select {
				case <-besideRun:
				case <-time.After(30 * time.Second):
				}
			}
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		if besideRun != nil && others.Add(1) == int32(cfg.PoisonBeside) {
			close(besideRun)
		}
		delay := cfg.HandlerDelay
		if cfg.BlockFirstAttempt && ev.Type == "block" && ev.Attempt == 1 {
			delay = time.Hour
		}
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		fmt.Fprintf(stdout, "done %s %d\n", ev.ID, ev.Attempt)
		return nil
	})
	shared := []webhooks.ProcessorOption{webhooks.WithLogger(logger)}
	if cfg.StoreTimeout > 0 {
		shared = append(shared, webhooks.WithProcessorStoreTimeout(cfg.StoreTimeout))
	}
	proc, err := webhooks.NewProcessor(store, mux, append(shared,
		webhooks.WithWorkers(cfg.Workers),
		webhooks.WithLeaseDuration(cfg.Lease),
		webhooks.WithPollInterval(cfg.Poll),
		webhooks.WithWakeSource(store.Listener()),
		webhooks.WithWorkerIdentity(cfg.Name, "faulttest"),
	)...)
	if err != nil {
		return err
	}

	verifier, err := webhooks.NewHMACVerifier(nodeHMACOptions(), webhooks.StaticSecrets(nodeSecret))
	if err != nil {
		return err
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister(nodeProvider, verifier)
	rcvOpts := []webhooks.ReceiverOption{webhooks.WithLogger(logger), webhooks.WithProcessor(proc)}
	if cfg.StoreTimeout > 0 {
		rcvOpts = append(rcvOpts, webhooks.WithReceiverStoreTimeout(cfg.StoreTimeout))
	}
	if cfg.MaxInFlight > 0 {
		rcvOpts = append(rcvOpts, webhooks.WithMaxInFlight(cfg.MaxInFlight))
	}
	receiver, err := webhooks.NewReceiver(registry, store, append(rcvOpts, webhooks.WithReplayStore(store))...)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           receiver,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening %s\n", ln.Addr())

	procCtx, stopProc := context.WithCancel(context.WithoutCancel(ctx))
	defer stopProc()
	procDone := make(chan error, 1)
	go func() { procDone <- proc.Run(procCtx) }()
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	select {
	case err = <-serveDone:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(err, srv.Shutdown(sctx))
	stopProc()
	err = errors.Join(err, <-procDone)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
