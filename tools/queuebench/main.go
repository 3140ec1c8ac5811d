// Command queuebench measures hookinbox beside its references on the same
// PostgreSQL database, in one run, and prints each pair and its ratio: the
// table of issue 10 (docs/performance.md).
//
// The references are River (insert, and work with a no-op worker) and
// hand-written SQL floors: single-row INSERT … ON CONFLICT from 16
// goroutines, and FOR UPDATE SKIP LOCKED in batches of 10 with a batched
// completion. It is a module of its own so that River never enters the
// library's go.mod. Run it from this directory, against a database of its
// own (it creates and drops the schemas hookinbox_load, river_load and
// floor_load):
//
//	createdb hookinbox_load
//	go run . -dsn 'postgres://postgres@127.0.0.1:5432/hookinbox_load?sslmode=disable' -runs 3
//
// Every measurement runs once per run, all of them in turn, so a pair is
// measured under the same conditions; the medians of the runs are printed
// last. -only picks rows by name.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/tools/internal/loadscenario"
)

func main() {
	var (
		dsn          = flag.String("dsn", os.Getenv("LOAD_DATABASE_URL"), "PostgreSQL connection string (default $LOAD_DATABASE_URL)")
		runs         = flag.Int("runs", 3, "runs of every measurement; the medians are printed")
		duration     = flag.Duration("duration", 10*time.Second, "measured window of the rate measurements")
		items        = flag.Int("items", 20_000, "items to drain")
		conns        = flag.Int("conns", 50, "HTTP connections")
		enqueuers    = flag.Int("enqueuers", 16, "goroutines inserting (Enqueue, River Insert, hand INSERT)")
		tuned        = flag.Int("tuned-workers", 1000, "hookinbox's workers in the tuned drain")
		riverWorkers = flag.Int("river-workers", 1000, "River's MaxWorkers in the drains")
		mixedWorkers = flag.Int("mixed-workers", 100, "workers of both while inserting and processing at once")
		floorWorkers = flag.Int("floor-workers", 8, "goroutines of the SKIP LOCKED floor")
		body         = flag.Int("body", 2048, "bytes per webhook body")
		only         = flag.String("only", "", "comma-separated rows to run (default all): "+strings.Join(rowNames(), ", "))
	)
	flag.Parse()
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "queuebench: give -dsn or LOAD_DATABASE_URL: a PostgreSQL database of its own")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	pg := loadscenario.Config{DSN: *dsn, BodyBytes: *body}
	mem := loadscenario.Config{BodyBytes: *body}
	httpLoad := loadscenario.HTTPLoad{Duration: *duration, Conns: *conns}
	storeLoad := loadscenario.StoreLoad{Duration: *duration, Enqueuers: *enqueuers}
	withWorkers := func(n int) loadscenario.Config { c := pg; c.Workers = n; return c }

	// The measurements, each run once per run, in this order.
	measurements := []measurement{
		{"bare HMAC handler", func() (loadscenario.Result, error) { return loadscenario.Bare(ctx, mem, httpLoad) }},
		{"gateway on memstore", func() (loadscenario.Result, error) { return loadscenario.Receive(ctx, mem, httpLoad, false) }},
		{"gateway on pgstore", func() (loadscenario.Result, error) { return loadscenario.Receive(ctx, pg, httpLoad, false) }},
		{"hand INSERT", func() (loadscenario.Result, error) { return insertFloor(ctx, *dsn, *enqueuers, *duration, *body) }},
		{"Enqueue", func() (loadscenario.Result, error) { return loadscenario.Enqueue(ctx, pg, storeLoad, false) }},
		{"River Insert", func() (loadscenario.Result, error) { return riverInsert(ctx, *dsn, *enqueuers, *duration, *body) }},
		{"drain, default options", func() (loadscenario.Result, error) {
			return loadscenario.Drain(ctx, pg, loadscenario.DrainLoad{Items: *items})
		}},
		{"drain, tuned", func() (loadscenario.Result, error) {
			return loadscenario.Drain(ctx, withWorkers(*tuned), loadscenario.DrainLoad{Items: *items})
		}},
		{"River drain", func() (loadscenario.Result, error) { return riverDrain(ctx, *dsn, *riverWorkers, *items, *body) }},
		{"hand SKIP LOCKED", func() (loadscenario.Result, error) {
			return skipLockedFloor(ctx, *dsn, *floorWorkers, *items, *body)
		}},
		{"gateway and processor at once", func() (loadscenario.Result, error) { return loadscenario.Receive(ctx, pg, httpLoad, true) }},
		{"Enqueue and process at once", func() (loadscenario.Result, error) {
			return loadscenario.Enqueue(ctx, withWorkers(*mixedWorkers), storeLoad, true)
		}},
		{"River insert and work at once", func() (loadscenario.Result, error) {
			return riverInsertAndWork(ctx, *dsn, *enqueuers, *mixedWorkers, *duration, *body)
		}},
	}
	chosen := rows
	if *only != "" {
		chosen = nil
		for name := range strings.SplitSeq(*only, ",") {
			i := slices.IndexFunc(rows, func(r row) bool { return r.name == strings.TrimSpace(name) })
			if i < 0 {
				fmt.Fprintf(os.Stderr, "queuebench: no row %q; rows: %s\n", name, strings.Join(rowNames(), ", "))
				os.Exit(2)
			}
			chosen = append(chosen, rows[i])
		}
	}
	needed := map[string]bool{}
	for _, r := range chosen {
		for _, p := range r.pairs {
			needed[p.ours], needed[p.ref] = true, true
		}
	}

	results := map[string][]loadscenario.Result{}
	for run := 1; run <= *runs; run++ {
		for _, m := range measurements {
			if !needed[m.name] {
				continue
			}
			r, err := m.run()
			if err != nil {
				fmt.Fprintf(os.Stderr, "queuebench: run %d: %s: %v\n", run, m.name, err)
				os.Exit(1)
			}
			fmt.Printf("run %d  %-30s %s\n", run, m.name, r)
			results[m.name] = append(results[m.name], r)
		}
	}
	median := map[string]loadscenario.Result{}
	for name, rs := range results {
		median[name] = loadscenario.Median(rs)
	}

	fmt.Printf("\nmedians of %d runs (%s, GOMAXPROCS %d, default workers %d)\n\n", *runs, time.Now().Format(time.RFC3339), gomaxprocs(), webhooks.DefaultWorkers)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "row\thookinbox\treference\tratio of medians\tper-run ratios (median)")
	for _, r := range chosen {
		for _, p := range r.pairs {
			o, f := median[p.ours], median[p.ref]
			// Each run's pair was measured back to back, so its ratio is
			// less touched by load that came and went between runs.
			var perRun []float64
			for i := range min(len(results[p.ours]), len(results[p.ref])) {
				perRun = append(perRun, p.figure.of(results[p.ours][i])/p.figure.of(results[p.ref][i]))
			}
			sorted := slices.Sorted(slices.Values(perRun))
			var each []string
			for _, x := range perRun {
				each = append(each, fmt.Sprintf("%.2f", x))
			}
			fmt.Fprintf(tw, "%s\t%s: %s\t%s: %s\t%.2f×\t%s (%.2f×)\n", r.name, p.ours, p.figure.show(o), p.ref, p.figure.show(f),
				p.figure.of(o)/p.figure.of(f), strings.Join(each, " "), sorted[(len(sorted)-1)/2])
		}
	}
	_ = tw.Flush()
}

type measurement struct {
	name string
	run  func() (loadscenario.Result, error)
}

// figure is the number a pair compares.
type figure struct {
	of   func(loadscenario.Result) float64
	show func(loadscenario.Result) string
}

var (
	acks = figure{
		of: func(r loadscenario.Result) float64 { return r.AckedPerSec },
		show: func(r loadscenario.Result) string {
			return fmt.Sprintf("%.0f/s p99 %.1fms", r.AckedPerSec, float64(r.Latency.P99)/float64(time.Millisecond))
		},
	}
	processed = figure{
		of: func(r loadscenario.Result) float64 { return r.ProcessedPerSec },
		show: func(r loadscenario.Result) string {
			s := fmt.Sprintf("%.0f/s", r.ProcessedPerSec)
			if r.CommitsPerItem > 0 {
				s += fmt.Sprintf(", %.3f commits and %.0f B of WAL per item", r.CommitsPerItem, r.WALPerItem)
			}
			if r.PeakHeapBytes > 0 {
				s += fmt.Sprintf(", peak heap %.0f MB", float64(r.PeakHeapBytes)/(1<<20))
			}
			return s
		},
	}
	atOnce = figure{
		of: func(r loadscenario.Result) float64 { return r.ProcessedPerSec },
		show: func(r loadscenario.Result) string {
			return fmt.Sprintf("in %.0f/s, done %.0f/s, backlog %d→%d", r.AckedPerSec, r.ProcessedPerSec, r.BacklogStart, r.BacklogEnd)
		},
	}
)

// row is a line of the table: hookinbox's measurement beside each of its
// references.
type row struct {
	name  string
	pairs []pair
}

type pair struct {
	ours, ref string
	figure    figure
}

var rows = []row{
	{"gateway-mem", []pair{{"gateway on memstore", "bare HMAC handler", acks}}},
	{"gateway-pg", []pair{
		{"gateway on pgstore", "hand INSERT", acks},
		{"gateway on pgstore", "gateway on memstore", acks},
	}},
	{"enqueue", []pair{
		{"Enqueue", "hand INSERT", acks},
		{"Enqueue", "River Insert", acks},
	}},
	{"drain-default", []pair{{"drain, default options", "River drain", processed}}},
	{"drain-tuned", []pair{
		{"drain, tuned", "River drain", processed},
		{"drain, tuned", "hand SKIP LOCKED", processed},
	}},
	{"at-once", []pair{
		{"gateway and processor at once", "River insert and work at once", atOnce},
		{"Enqueue and process at once", "River insert and work at once", atOnce},
	}},
}

func rowNames() []string {
	var names []string
	for _, r := range rows {
		names = append(names, r.name)
	}
	return names
}

func gomaxprocs() int { return runtime.GOMAXPROCS(0) }
