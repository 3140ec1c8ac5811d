package pgstore_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/providers"
)

// A host on PostgreSQL: one pool for the store, the schema migrated at
// start-up, the Receiver mounted on the host's server and the Processor
// woken by the store's listener. Several instances may run this against one
// database. On SIGTERM the server stops taking webhooks, the Processor lets
// running handlers finish (WithShutdownGrace) and gives back the leases of
// the others, and Run returns.
func ExampleNew() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dsn := os.Getenv("DATABASE_URL")
	if dsn == "" { // pgx takes "" for PostgreSQL's defaults: the local socket, the user's own database
		log.Fatal("DATABASE_URL is not set")
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := pgstore.New(pool)
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	github, err := providers.New("github", providers.Config{Secrets: webhooks.StaticSecrets(os.Getenv("GITHUB_WEBHOOK_SECRET"))})
	if err != nil {
		log.Fatal(err)
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister("github", github)

	mux := webhooks.NewMux()
	mux.MustHandleFunc("push", func(ctx context.Context, ev webhooks.Event) error {
		return nil // the host's business logic
	})
	proc, err := webhooks.NewProcessor(store, mux, webhooks.WithWakeSource(store.Listener()))
	if err != nil {
		log.Fatal(err)
	}
	// The store is the replay store too; the receiver wakes the processor
	// of its own process, and others through the listener.
	receiver, err := webhooks.NewReceiver(registry, store, webhooks.WithReplayStore(store), webhooks.WithProcessor(proc))
	if err != nil {
		log.Fatal(err)
	}

	routes := http.NewServeMux()
	routes.Handle("/webhooks/", receiver)
	srv := &http.Server{Addr: ":8080", Handler: routes, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()
	served := make(chan struct{})
	go func() {
		defer close(served)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown) // the receives in flight finish first
	}()
	if err := proc.Run(ctx); err != nil {
		log.Fatal(err) // such as webhooks.ErrStoreNotReady: the host must act first
	}
	<-served // then the pool closes
}

// Rows are never deleted by the store's normal operation: a host runs the
// deletions periodically, keeping succeeded items longer than its providers
// redeliver (a redelivery of a deleted item is stored as new).
func ExampleStore_DeleteSucceeded() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dsn := os.Getenv("DATABASE_URL")
	if dsn == "" { // pgx takes "" for PostgreSQL's defaults: the local socket, the user's own database
		log.Fatal("DATABASE_URL is not set")
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, err := pgstore.New(pool)
	if err != nil {
		log.Fatal(err)
	}

	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		now := time.Now()
		if n, err := store.DeleteSucceeded(ctx, now.Add(-7*24*time.Hour), 1000); err != nil {
			log.Printf("retention: deleted %d succeeded items, then: %v", n, err)
		}
		if _, err := store.DeleteClosed(ctx, now.Add(-30*24*time.Hour), 1000); err != nil {
			log.Printf("retention: %v", err)
		}
		if _, err := store.DeleteExpiredReplayKeys(ctx, now, 1000); err != nil {
			log.Printf("retention: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
