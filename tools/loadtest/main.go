// Command loadtest puts hookinbox under load and prints what it measured: the
// real Receiver over loopback HTTP and a real Processor, on PostgreSQL
// (pgstore) or in memory (memstore), with 2 KiB Stripe-shaped webhooks
// signed as Stripe signs them (the catalog's stripe entry, through
// webhookstest).
//
//	go run ./tools/loadtest -scenario receive -dsn "$DSN" -conns 50 -duration 10s
//	go run ./tools/loadtest -scenario receive+process -dsn "$DSN"
//	go run ./tools/loadtest -scenario enqueue -dsn "$DSN" -enqueuers 16
//	go run ./tools/loadtest -scenario drain -dsn "$DSN" -items 20000 [-workers 1000]
//	go run ./tools/loadtest -scenario wake -dsn "$DSN"
//	go run ./tools/loadtest -scenario receive            # memstore
//	go run ./tools/loadtest -scenario bare               # net/http + HMAC only
//
// Scenarios:
//
//	receive          HTTP, -conns connections, each one request at a time:
//	                 acks/s and their latency percentiles
//	receive+process  the same with a Processor (no-op handler) running:
//	                 processed/s and the backlog at the start and the end
//	bare             the reference of receive: a bare net/http handler
//	                 that only checks the HMAC
//	enqueue          Enqueue called from -enqueuers goroutines
//	enqueue+process  the same with a Processor running
//	drain            -items pending items, then a Processor until all are
//	                 done: items/s, commits and WAL per item, peak heap
//	wake             an idle Processor's wake-up through LISTEN/NOTIFY,
//	                 from an Enqueue's commit to its handler's start
//
// -dsn names a PostgreSQL database of the scenario's own (each run drops
// and creates the schema -schema in it); without it, the store is memstore.
// -runs repeats the scenario and prints every run, then the median of
// each figure. The comparison with River and with hand-written SQL is
// tools/queuebench.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/hookinbox/webhooks/tools/internal/loadscenario"
)

func main() {
	var (
		scenario  = flag.String("scenario", "receive", "receive, receive+process, bare, enqueue, enqueue+process, drain or wake")
		dsn       = flag.String("dsn", os.Getenv("LOAD_DATABASE_URL"), "PostgreSQL connection string (default $LOAD_DATABASE_URL); empty: memstore")
		schema    = flag.String("schema", "hookinbox_load", "schema to create, fill and drop")
		poolConns = flag.Int("pool", 16, "connections in the pgx pool")
		batch     = flag.Int("enqueue-batch", 0, "pgstore's WithEnqueueBatch (0: its default; 1: no group commit)")
		workers   = flag.Int("workers", 0, "the Processor's workers (0: the library's default)")
		body      = flag.Int("body", 2048, "bytes per webhook body")
		duration  = flag.Duration("duration", 10*time.Second, "measured window of receive and enqueue")
		warmup    = flag.Duration("warmup", time.Second, "unmeasured start of receive and enqueue")
		conns     = flag.Int("conns", 50, "HTTP connections (receive, bare)")
		enqueuers = flag.Int("enqueuers", 16, "goroutines calling Enqueue (enqueue)")
		items     = flag.Int("items", 20_000, "pending items to drain (drain)")
		probes    = flag.Int("probes", 200, "enqueues one at a time (wake)")
		runs      = flag.Int("runs", 1, "runs of the scenario; with more than one, the medians are printed last")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cfg := loadscenario.Config{DSN: *dsn, Schema: *schema, PoolConns: *poolConns, EnqueueBatch: *batch, Workers: *workers, BodyBytes: *body}
	httpLoad := loadscenario.HTTPLoad{Duration: *duration, Warmup: *warmup, Conns: *conns}
	storeLoad := loadscenario.StoreLoad{Duration: *duration, Warmup: *warmup, Enqueuers: *enqueuers}
	run := func() (loadscenario.Result, error) {
		switch *scenario {
		case "receive":
			return loadscenario.Receive(ctx, cfg, httpLoad, false)
		case "receive+process":
			return loadscenario.Receive(ctx, cfg, httpLoad, true)
		case "bare":
			return loadscenario.Bare(ctx, cfg, httpLoad)
		case "enqueue":
			return loadscenario.Enqueue(ctx, cfg, storeLoad, false)
		case "enqueue+process":
			return loadscenario.Enqueue(ctx, cfg, storeLoad, true)
		case "drain":
			return loadscenario.Drain(ctx, cfg, loadscenario.DrainLoad{Items: *items})
		case "wake":
			return loadscenario.Wake(ctx, cfg, loadscenario.WakeLoad{Probes: *probes})
		}
		return loadscenario.Result{}, fmt.Errorf("unknown scenario %q", *scenario)
	}
	var results []loadscenario.Result
	for i := range *runs {
		r, err := run()
		if err != nil {
			fmt.Fprintf(os.Stderr, "load: run %d: %v\n", i+1, err)
			os.Exit(1)
		}
		fmt.Println(r)
		results = append(results, r)
	}
	if len(results) > 1 {
		fmt.Println("median:", loadscenario.Median(results))
	}
}
