// Command server is a small host for hookinbox: it receives webhooks from
// every catalog provider whose secret is set in the environment and from a
// demo provider, stores them in an inbox, and logs one JSON line per
// handled event.
//
//	GITHUB_WEBHOOK_SECRET=... go run ./examples/server
//	STRIPE_WEBHOOK_SECRET=... SLACK_WEBHOOK_SECRET=... go run ./examples/server
//	DEMO_WEBHOOK_SECRET=... go run ./examples/server -addr :9000 -fail-types order.refund
//	DEMO_WEBHOOK_SECRET=... go run ./examples/server -dsn postgres://postgres@127.0.0.1:5432/test
//	DEMO_WEBHOOK_SECRET=... ADMIN_TOKEN=... go run ./examples/server -metrics
//	go run ./examples/server -list-providers
//
// Endpoints: POST /webhooks/{provider} (also with a /{tenant} suffix) for
// each provider registered, as the start-up log lists them; a provider
// named NAME in the catalog reads its secret from NAME_WEBHOOK_SECRET
// (upper case, other characters as '_'). Without -dsn (or DATABASE_URL) the
// inbox is in memory and is lost on exit; with it the inbox is in
// PostgreSQL, migrated at start.
//
// With -admin-token (or ADMIN_TOKEN) the admin page and API (package admin)
// are served at /admin/ to requests that present the token, as a bearer
// token (curl -H "Authorization: Bearer $ADMIN_TOKEN") or as the password
// of a browser's login prompt; replays and closings made through it are
// audited with the actor "admin-token". With -metrics, GET /metrics serves
// the OpenTelemetry metrics of package otelwebhooks in the Prometheus text
// format (webhooks_received_total, webhooks_dead_lettered_total, …),
// unauthenticated, as scrapers expect: keep the port private.
//
// The demo provider signs "timestamp.body" with HMAC-SHA256:
//
//	X-Demo-Timestamp:  Unix seconds
//	X-Demo-Signature:  sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">
//	X-Demo-Event-Id:   the event ID
//	X-Demo-Event-Type: the event type
//
// as in
//
//	ts=$(date +%s); body='{"order":42}'
//	sig=$(printf '%s.%s' "$ts" "$body" | openssl dgst -sha256 -hmac "$DEMO_WEBHOOK_SECRET" -hex | sed 's/^.* //')
//	curl -i localhost:8080/webhooks/demo -H "X-Demo-Timestamp: $ts" -H "X-Demo-Signature: sha256=$sig" \
//	  -H 'X-Demo-Event-Id: o-42' -H 'X-Demo-Event-Type: order.created' --data-binary "$body"
//
// Every event goes to two handlers, each with a job of its own: "ledger",
// which runs the events of one ordering key one at a time and in order,
// and "audit". Events whose type is in -fail-types are refused
// permanently by the audit handler only, so their audit job is
// dead-lettered at its first attempt while ledger handles them once. A
// demo event with an X-Demo-Order-Key header is in that ordering key (and
// X-Demo-Order-Version, a number, orders it within the key); the two
// headers are not signed, which a demo may allow and a real provider must
// not (the catalog reads keys from the signed body). Each handled event is
// logged with its handler, its key and its sequence number.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/admin"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/otelwebhooks"
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/providers"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// DemoOptions is the demo provider's scheme: HMAC-SHA256 over
// "timestamp.body", hex with a "sha256=" prefix, 5-minute tolerance.
func DemoOptions() webhooks.HMACOptions {
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

type stores interface {
	webhooks.InboxStore
	webhooks.ReplayStore
	ops.Store
}

// run starts the server and blocks until ctx is done. When ready is not nil it
// receives the listening address once the server accepts connections.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8080", "address to listen on")
	// The DSN's default is read from the environment after parsing, as the
	// admin token's is, so that -help and a flag error, which print every
	// flag's default, never print its password.
	dsn := fs.String("dsn", "", "PostgreSQL connection string; empty keeps the inbox in memory (default $DATABASE_URL)")
	schema := fs.String("schema", pgstore.DefaultSchema, "PostgreSQL schema for the inbox tables (with -dsn)")
	failTypes := fs.String("fail-types", "", "comma-separated event types the demo handler rejects permanently (to see dead letters)")
	workers := fs.Int("workers", webhooks.DefaultWorkers, "concurrent handlers")
	retention := fs.Duration("retention", 7*24*time.Hour, "how long succeeded items are kept; with -dsn expired replay keys are deleted too")
	closedRetention := fs.Duration("closed-retention", 30*24*time.Hour, "how long dead letters closed by an operator are kept")
	retentionEvery := fs.Duration("retention-every", time.Hour, "how often retention runs (also once at start)")
	publicURL := fs.String("public-url", getenv("PUBLIC_URL"), "public base URL providers call, for those that sign it (twilio, hubspot, square, trello) (default $PUBLIC_URL)")
	maxInFlight := fs.Int("max-in-flight", 128, "requests handled at once; more are answered 503 with Retry-After at once")
	maxInFlightBytes := fs.Int64("max-in-flight-bytes", 0, "bytes of request bodies held at once; more are answered 503 with Retry-After at once (0: the Receiver's default, 96 MiB)")
	clientShare := fs.Int("client-share", -1, "requests one client (IP address) may hold while the last of -max-in-flight are kept for others; 0 turns the share off, -1 is an eighth of -max-in-flight")
	providerShare := fs.Int("provider-share", -1, "requests one provider may hold while the last of -max-in-flight are kept for others; 0 turns the share off, -1 is an eighth of -max-in-flight")
	enqueueBatch := fs.Int("enqueue-batch", pgstore.DefaultEnqueueBatch, "with -dsn, the most webhooks one group commit stores; 1 turns grouping off")
	listProviders := fs.Bool("list-providers", false, "print the provider catalog's names, one a line, and exit")
	adminToken := fs.String("admin-token", "", "serve the admin page and API at /admin/ to requests bearing this token (default $ADMIN_TOKEN; off when empty)")
	metrics := fs.Bool("metrics", false, "serve Prometheus metrics at GET /metrics")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *retentionEvery <= 0 {
		return fmt.Errorf("-retention-every %v: it must be positive", *retentionEvery)
	}
	if *adminToken == "" {
		*adminToken = getenv("ADMIN_TOKEN") // read here, so -help never prints it
	}
	dsnGiven := false
	fs.Visit(func(f *flag.Flag) { dsnGiven = dsnGiven || f.Name == "dsn" })
	if !dsnGiven {
		*dsn = getenv("DATABASE_URL") // -dsn '' keeps the inbox in memory whatever the environment says
	}
	if *listProviders {
		for _, name := range providers.Names() {
			fmt.Fprintln(stdout, name)
		}
		return nil
	}

	// Events go to stdout, one JSON line each; the library's own logs to stderr.
	events := slog.New(slog.NewJSONHandler(stdout, nil))
	logger := slog.New(slog.NewJSONHandler(stderr, nil))

	// Every catalog provider whose secret is set in the environment, as
	// <NAME>_WEBHOOK_SECRET (GITHUB_WEBHOOK_SECRET, STRIPE_WEBHOOK_SECRET,
	// …; META_WEBHOOK_VERIFY_TOKEN too for providers that need one).
	registry := webhooks.NewRegistry()
	fromEnv, err := providers.FromEnv(getenv, providers.Config{
		PublicURL:  *publicURL,
		HTTPClient: &http.Client{Timeout: 10 * time.Second}, // fetches SNS signing certificates
	})
	if err != nil {
		return fmt.Errorf("configuring providers from the environment: %w", err)
	}
	var configured []string
	for _, c := range fromEnv {
		registry.MustRegister(c.Name, c.Verifier)
		configured = append(configured, c.Name)
		logger.Info("provider registered", "provider", c.Name, "path", webhooks.DefaultPathPrefix+c.Name, "secret_from", c.SecretEnv)
	}
	if secret := getenv("DEMO_WEBHOOK_SECRET"); secret != "" {
		v, err := webhooks.NewHMACVerifier(DemoOptions(), webhooks.StaticSecrets(secret))
		if err != nil {
			return err
		}
		registry.MustRegister("demo", v)
		configured = append(configured, "demo")
		logger.Info("provider registered", "provider", "demo", "path", webhooks.DefaultPathPrefix+"demo", "secret_from", "DEMO_WEBHOOK_SECRET")
	}
	if len(configured) == 0 {
		return errors.New("no webhook secret configured: set GITHUB_WEBHOOK_SECRET (for POST /webhooks/github), DEMO_WEBHOOK_SECRET (for POST /webhooks/demo), " +
			"or <NAME>_WEBHOOK_SECRET for any provider that -list-providers prints")
	}

	var store stores
	var procOpts []webhooks.ProcessorOption
	var cleanup func(context.Context) // retention, run hourly
	if *dsn == "" {
		inbox := memstore.NewInbox()
		store = struct {
			*memstore.Inbox
			webhooks.ReplayStore // not *memstore.Replay: that field's name would hide the Inbox's Replay method
		}{inbox, memstore.NewReplay()}
		logger.Info("inbox in memory; pass -dsn to keep it in PostgreSQL")
		cleanup = func(ctx context.Context) {
			// The replay store evicts expired keys by itself.
			now := time.Now()
			items, err := inbox.DeleteSucceeded(ctx, now.Add(-*retention))
			if err != nil {
				logger.ErrorContext(ctx, "retention: deleting succeeded items failed", "err", err)
			}
			closed, err := inbox.DeleteClosed(ctx, now.Add(-*closedRetention))
			if err != nil {
				logger.ErrorContext(ctx, "retention: deleting closed items failed", "err", err)
			}
			logger.InfoContext(ctx, "retention", "deleted_items", items, "deleted_closed", closed)
		}
	} else {
		pool, err := pgxpool.New(ctx, *dsn)
		if err != nil {
			return fmt.Errorf("connecting to PostgreSQL: %w", err)
		}
		defer pool.Close()
		pg, err := pgstore.New(pool, pgstore.WithSchema(*schema), pgstore.WithDatabaseClock(), pgstore.WithEnqueueBatch(*enqueueBatch))
		if err != nil {
			return err
		}
		if err := pg.Migrate(ctx); err != nil {
			return fmt.Errorf("migrating the inbox schema: %w", err)
		}
		store = pg
		procOpts = append(procOpts, webhooks.WithWakeSource(pg.Listener()))
		cleanup = func(ctx context.Context) {
			now := time.Now()
			items, err := pg.DeleteSucceeded(ctx, now.Add(-*retention), 1000)
			if err != nil {
				logger.ErrorContext(ctx, "retention: deleting succeeded items failed", "err", err)
			}
			closed, err := pg.DeleteClosed(ctx, now.Add(-*closedRetention), 1000)
			if err != nil {
				logger.ErrorContext(ctx, "retention: deleting closed items failed", "err", err)
			}
			keys, err := pg.DeleteExpiredReplayKeys(ctx, now, 1000)
			if err != nil {
				logger.ErrorContext(ctx, "retention: deleting expired replay keys failed", "err", err)
			}
			logger.InfoContext(ctx, "retention", "deleted_items", items, "deleted_closed", closed, "deleted_replay_keys", keys)
		}
		logger.Info("inbox in PostgreSQL", "schema", pg.Schema())
	}

	fail := map[string]bool{}
	for _, t := range strings.Split(*failTypes, ",") {
		if t = strings.TrimSpace(t); t != "" {
			fail[t] = true
		}
	}
	handled := func(ctx context.Context, ev webhooks.Event) {
		events.InfoContext(ctx, "event handled", "handler", ev.Handler, "provider", ev.Provider, "tenant", ev.Tenant, "event_id", ev.ID, "event_type", ev.Type,
			"ordering_key", ev.Ordering.Key, "seq", ev.Seq, "attempt", ev.Attempt, "bytes", len(ev.Payload))
	}
	ledger, audit := webhooks.NewMux(), webhooks.NewMux()
	ledger.MustHandleFunc("*", func(ctx context.Context, ev webhooks.Event) error {
		if ev.Ordering.Version > 0 && ev.Ordering.Version <= ev.Applied {
			return webhooks.Skip(fmt.Sprintf("version %d of %q is older than the applied %d", ev.Ordering.Version, ev.Ordering.Key, ev.Applied))
		}
		handled(ctx, ev)
		return nil
	})
	audit.MustHandleFunc("*", func(ctx context.Context, ev webhooks.Event) error {
		if fail[ev.Type] {
			return webhooks.Permanent(fmt.Errorf("demo handler rejects event type %q (-fail-types)", ev.Type))
		}
		handled(ctx, ev)
		return nil
	})
	handlers := webhooks.Handlers{
		{Name: "ledger", Dispatcher: ledger, Ordered: true},
		{Name: "audit", Dispatcher: audit},
	}

	httpMux := http.NewServeMux()
	rcvOpts := []webhooks.ReceiverOption{
		webhooks.WithLogger(logger),
		webhooks.WithMaxInFlight(*maxInFlight),
	}
	if *maxInFlightBytes > 0 {
		rcvOpts = append(rcvOpts, webhooks.WithMaxInFlightBytes(*maxInFlightBytes))
	}
	if *clientShare >= 0 {
		rcvOpts = append(rcvOpts, webhooks.WithClientInFlightShare(*clientShare))
	}
	if *providerShare >= 0 {
		rcvOpts = append(rcvOpts, webhooks.WithProviderInFlightShare(*providerShare))
	}
	if *metrics {
		// The OpenTelemetry SDK, read at each scrape: /metrics shows the
		// webhooks' metrics and nothing else (no target_info, no scope
		// labels), every name prefixed webhooks_ (metrics.go).
		reader := sdkmetric.NewManualReader()
		meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		defer meters.Shutdown(context.WithoutCancel(ctx))
		obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(meters), otelwebhooks.WithStats(store))
		if err != nil {
			return err
		}
		defer obs.Close()
		procOpts = append(procOpts, webhooks.WithObserver(obs))
		rcvOpts = append(rcvOpts, webhooks.WithObserver(obs))
		httpMux.Handle("GET /metrics", metricsHandler(reader))
	}
	if *adminToken != "" {
		h, err := admin.NewHandler(store,
			admin.WithPathPrefix("/admin/"),
			admin.WithLogger(logger),
			// Whoever holds the token acts as "admin-token": a host with
			// accounts would name the operator here.
			admin.WithActor(func(*http.Request) string { return "admin-token" }),
		)
		if err != nil {
			return err
		}
		httpMux.Handle("/admin/", requireToken(*adminToken, h))
	}

	proc, err := webhooks.NewProcessor(store, handlers, append(procOpts,
		webhooks.WithWorkers(*workers),
		webhooks.WithLogger(logger),
		webhooks.WithShutdownGrace(10*time.Second),
	)...)
	if err != nil {
		return err
	}
	receiver, err := webhooks.NewReceiver(registry, store, append(rcvOpts, webhooks.WithReplayStore(store), webhooks.WithProcessor(proc),
		webhooks.WithOrdering("demo", demoOrdering))...)
	if err != nil {
		return err
	}
	httpMux.Handle(webhooks.DefaultPathPrefix, receiver)
	srv := &http.Server{
		Handler:           httpMux,
		ReadHeaderTimeout: 10 * time.Second, // slow headers (slowloris)
		ReadTimeout:       30 * time.Second, // a whole slow body
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10, // headers do not count against the body limit
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	logger.Info("listening", "addr", ln.Addr().String(), "providers", configured)
	if *adminToken != "" {
		logger.Info("admin page and API", "url", baseURL(ln.Addr())+"/admin/", "auth", "Authorization: Bearer <-admin-token>, or the token as a browser login's password")
	}
	if *metrics {
		logger.Info("metrics", "url", baseURL(ln.Addr())+"/metrics")
	}
	if ready != nil {
		ready <- ln.Addr().String()
	}

	// The processor outlives the signal until the HTTP server has drained,
	// so webhooks accepted during the drain are handled before exit.
	runCtx, stopProcessor := context.WithCancel(context.WithoutCancel(ctx))
	defer stopProcessor()
	procDone := make(chan error, 1)
	go func() { procDone <- proc.Run(runCtx) }()
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	retentionDone := make(chan struct{})
	go func() {
		defer close(retentionDone)
		if cleanup == nil {
			return
		}
		tick := time.NewTicker(*retentionEvery)
		defer tick.Stop()
		for {
			cleanup(runCtx)
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	select {
	case err = <-serveDone:
	case <-ctx.Done():
	}
	// Stop taking requests first, then let the processor finish in-flight
	// handlers (within its shutdown grace) and abandon the rest.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdownCtx); serr != nil && err == nil {
		err = serr
	}
	stopProcessor()
	<-retentionDone
	if perr := <-procDone; perr != nil && err == nil {
		err = perr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	logger.Info("stopped")
	return err
}

// demoOrdering reads the demo's ordering key and version from the
// X-Demo-Order-Key and X-Demo-Order-Version headers. They are not signed:
// whoever holds one delivery could send it again under another key. A
// real provider's key comes from its signed body (see CATALOG.md), as
// the catalog's verifiers read it.
func demoOrdering(req *webhooks.Request, _ webhooks.Verification) (webhooks.Ordering, error) {
	key := req.Header.Get("X-Demo-Order-Key")
	if key == "" || webhooks.CheckOrdering(webhooks.Ordering{Key: key}) != nil {
		return webhooks.Ordering{}, nil
	}
	version, err := strconv.ParseInt(req.Header.Get("X-Demo-Order-Version"), 10, 64)
	if err != nil || version < 0 {
		version = 0
	}
	return webhooks.Ordering{Key: key, Version: version}, nil
}

// baseURL is where a browser on this machine reaches addr.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// requireToken serves next only to requests that present token: as a
// bearer token, or as the password of HTTP basic authentication (what a
// browser's login prompt sends; the user name is ignored). The comparison
// takes the same time whatever the token presented.
func requireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		presented, ok := "", false
		if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "Bearer ") {
			presented, ok = strings.TrimSpace(auth[7:]), true
		} else {
			_, presented, ok = r.BasicAuth()
		}
		got := sha256.Sum256([]byte(presented))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Add("WWW-Authenticate", `Bearer realm="hookinbox admin"`)
			w.Header().Add("WWW-Authenticate", `Basic realm="hookinbox admin", charset="UTF-8"`)
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			// The admin API's error shape (package admin, Errors).
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "unauthorized", "message": "present the admin token: Authorization: Bearer <token>"})
			return
		}
		next.ServeHTTP(w, r)
	})
}
