// Command verifybench measures the verification of 2 KiB Stripe-shaped
// webhooks by hookinbox's presets beside the providers' own Go libraries
// and a hand-written HMAC check (the floor), all in one run, and prints
// each pair and its ratio.
//
// It is a module of its own so that the providers' libraries never enter
// the library's go.mod. Run it from this directory:
//
//	go run . -count 6 | tee verifybench.txt
//
// Every measurement is also printed as a benchmark line, so two runs
// compare with benchstat (-col /impl puts the implementations side by
// side).
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// impl is one implementation of one provider's verification; verify runs
// one verification and reports whether it accepted the request.
type impl struct {
	name   string
	verify func() bool
}

// comparison is one provider's implementations, hookinbox among them.
type comparison struct {
	provider string
	impls    []impl
}

func main() {
	count := flag.Int("count", 6, "runs of each implementation")
	benchtime := flag.Duration("benchtime", time.Second, "time of each run")
	testing.Init()
	flag.Parse()
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		fatal(err)
	}
	comparisons, err := comparisons()
	if err != nil {
		fatal(err)
	}
	for _, c := range comparisons {
		for _, im := range c.impls {
			if !im.verify() {
				fatal(fmt.Errorf("%s: %s does not accept its request", c.provider, im.name))
			}
		}
	}

	// Runs are interleaved (every implementation once, then again), so a
	// burst of load on the machine falls on all of them alike.
	results := map[string][]testing.BenchmarkResult{}
	fmt.Printf("goos: linux\ngoarch: amd64\npkg: github.com/hookinbox/webhooks/tools/verifybench\n")
	for range *count {
		for _, c := range comparisons {
			for _, im := range c.impls {
				r := testing.Benchmark(func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if !im.verify() {
							b.Fatal("rejected")
						}
					}
				})
				name := "BenchmarkVerify/provider=" + c.provider + "/impl=" + im.name
				results[name] = append(results[name], r)
				fmt.Printf("%s-%d\t%s\t%s\n", name, 2, r.String(), r.MemString())
			}
		}
	}

	// Each pair: hookinbox beside every other implementation.
	fmt.Println()
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "provider\thookinbox ns/op\tallocs\treference\tns/op\tallocs\thookinbox ÷ reference\t")
	for _, c := range comparisons {
		ours := median(results, c.provider, "hookinbox")
		for _, ref := range c.impls {
			if ref.name == "hookinbox" {
				continue
			}
			r := median(results, c.provider, ref.name)
			fmt.Fprintf(w, "%s\t%.0f\t%d\t%s\t%.0f\t%d\t%.2f×\t\n", c.provider, ours.ns, ours.allocs, ref.name, r.ns, r.allocs, ours.ns/r.ns)
		}
	}
	w.Flush()
}

type summary struct {
	ns     float64
	allocs int64
}

// median returns the median ns/op and allocs/op of an implementation's
// runs.
func median(results map[string][]testing.BenchmarkResult, provider, impl string) summary {
	rs := results["BenchmarkVerify/provider="+provider+"/impl="+impl]
	ns := make([]float64, len(rs))
	for i, r := range rs {
		ns[i] = float64(r.T.Nanoseconds()) / float64(r.N)
	}
	slices.Sort(ns)
	m := ns[len(ns)/2]
	if len(ns)%2 == 0 {
		m = (ns[len(ns)/2-1] + ns[len(ns)/2]) / 2
	}
	return summary{ns: m, allocs: rs[0].AllocsPerOp()}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "verifybench:", strings.TrimSpace(err.Error()))
	os.Exit(1)
}
