# hookinbox — build and test entry points. `make test` is the command CI runs.
GO ?= go

.PHONY: test run vet lint bench

# Vet and run every test with the race detector. The Postgres tests run when
# WEBHOOKS_TEST_DATABASE_URL points at a server (see README); .ci/run sets it.
test:
	$(GO) vet ./...
	$(GO) test -race ./...

# Run the example server (in-memory store unless -dsn is given via ARGS).
run:
	$(GO) run ./examples/server $(ARGS)

vet:
	$(GO) vet ./...

# staticcheck at the version the project is checked with.
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# Benchmarks, sized for a small machine, written to bench.txt in the form
# benchstat reads: every package's (verification of each provider, each
# beside its hand-written floor in the same run; the gateway, enqueue,
# acquire and settle), then the providers' own Go libraries beside the
# presets (internal/benchcmp, a module of its own so they never enter
# go.mod). BENCH narrows the benchmarks, COUNT sets the runs of each.
#   go run golang.org/x/perf/cmd/benchstat@latest old.txt bench.txt
#   go run golang.org/x/perf/cmd/benchstat@latest -filter .name:Verify -col /impl bench.txt
BENCH ?= .
COUNT ?= 6
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(COUNT) ./... | tee bench.txt
	cd internal/benchcmp && $(GO) run . -count $(COUNT) | tee -a ../../bench.txt
