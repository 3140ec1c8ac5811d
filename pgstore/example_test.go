package pgstore_test

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore"
)

// A handler that writes to the same database completes its event in its
// own transaction: the business write and the item's completion commit
// together, or neither does. The Processor then finds the item settled and
// leaves it alone.
func ExampleStore_CompleteTx() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
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

	mux := webhooks.NewMux()
	mux.MustHandleFunc("invoice.paid", func(ctx context.Context, ev webhooks.Event) error {
		// BeginFunc commits when the function returns nil and rolls back
		// when it returns an error.
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx,
				`INSERT INTO paid_invoices (event_id, body) VALUES ($1, $2)`, ev.ID, ev.Payload); err != nil {
				return err
			}
			// Last, just before the commit. If another worker has taken
			// the item over, this fails with webhooks.ErrLeaseLost:
			// returning it rolls the insert back, and the other worker
			// runs the handler again.
			return store.CompleteTx(ctx, tx, ev)
		})
	})

	proc, err := webhooks.NewProcessor(store, mux, webhooks.WithWakeSource(store.Listener()))
	if err != nil {
		log.Fatal(err)
	}
	if err := proc.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
