# hookinbox — build and test entry points. `make test` is the command CI runs.
GO ?= go

.PHONY: test run vet lint bench fuzz generate tidy

# Vet and run every test of the library's module with the race detector
# (the modules of their own, under examples/, tools/ and internal/testing/,
# are .ci/run's). The PostgreSQL tests (pgstore's, the CLI's, the example
# server's and the fault tests in internal/testing/faulttest, all through
# internal/testing/pgtest) run when WEBHOOKS_TEST_DATABASE_URL points at a server, and say once that
# they were skipped otherwise; .ci/run sets it and WEBHOOKS_TEST_REQUIRE_DB=1,
# so there they cannot be skipped. pgstore's PgBouncer tests start the
# pgbouncer program where it is installed and say they were skipped
# otherwise (.ci/run installs it and sets WEBHOOKS_TEST_REQUIRE_PGBOUNCER=1).
# WEBHOOKS_TEST_LONG=1 runs the fault tests' long variants (more load,
# longer outages, more rounds; about a minute more), and pgstore's
# conformance suites through session pooling as well as transaction pooling.
# Everything is built with -race, through GOFLAGS, so that vet and the go
# commands some tests run (internal/testing/readme vets the README's snippets,
# cmd/hookinbox builds the command) compile every package as the tests do
# and share the build cache instead of compiling the module a second time.
# A race-enabled program sleeps a second when it exits, to let late race
# reports print; every test binary, command and fault-test node here exits
# after its goroutines are done (goleak checks), so GORACE skips the sleep
# unless it says otherwise. go test vets nothing more: go vet ran every
# analyzer on every package just before.
# The allocation tests (testing.AllocsPerRun; the race detector changes
# their counts, so they skip under -race) then run again without -race, in
# the packages that have them: every test that counts allocations has
# "Alloc" in its name.
PGURL_EXAMPLE = postgres://postgres@127.0.0.1:5432/test?sslmode=disable
ALLOC_GOFLAGS = $(strip $(filter-out -race,$(GOFLAGS)))
test: export GOFLAGS := $(strip $(GOFLAGS) -race)
test: export GORACE := $(strip atexit_sleep_ms=0 $(GORACE))
test:
	$(GO) vet ./...
	@echo "$(GO) test -vet=off ./... (GOFLAGS=$$GOFLAGS)"; status=0; $(GO) test -vet=off ./... || status=$$?; \
	if [ -z "$$WEBHOOKS_TEST_DATABASE_URL" ]; then echo "make test: the PostgreSQL tests (pgstore, cmd/hookinbox, examples/server, internal/testing/faulttest) were SKIPPED: WEBHOOKS_TEST_DATABASE_URL is not set; run them with WEBHOOKS_TEST_DATABASE_URL='$(PGURL_EXAMPLE)' make test"; fi; \
	pkgs=$$($(GO) list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do if grep -qs 'testing.AllocsPerRun' "$$dir"/*_test.go; then echo "$$pkg"; fi; done); \
	echo "GOFLAGS='$(ALLOC_GOFLAGS)' $(GO) test -vet=off -count=1 -run Alloc $$pkgs"; \
	GOFLAGS='$(ALLOC_GOFLAGS)' $(GO) test -vet=off -count=1 -run Alloc $$pkgs || status=$$?; \
	exit $$status

# Run every fuzz target of the module briefly, FUZZTIME executions each (a
# count, not a duration, so a loaded machine runs the same inputs), from
# its seeds (f.Add and the package's testdata/fuzz). go test -list names
# the targets, package by package. An input that fails is written to the
# package's testdata/fuzz/<target>: commit it with the fix, so that every
# later `go test` runs it. .ci/run calls this after make test.
FUZZTIME ?= 2000x
fuzz:
	@set -e; targets=$$($(GO) test -vet=off -list '^Fuzz' ./...); \
	echo "$$targets" | awk '/^Fuzz/ { t = t " " $$1; next } /^ok/ { if (t != "") print $$2 t; t = "" }' | \
	while read -r pkg names; do \
		for target in $$names; do \
			echo "fuzz: $$pkg $$target -fuzztime $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done

# Rewrite the files generated from the code: the provider catalog page
# (providers/CATALOG.md) and the replay table of docs/security.md, both
# from the catalog's definitions. .ci/run fails when this changes the tree.
generate:
	$(GO) test -count=1 -run '^(TestCatalogPage|TestSecurityPage)$$' ./providers -update

# Tidy every module: the library's and the modules of their own (a change
# to the library's requirements changes their go.sum too).
# TIDYFLAGS=-diff changes nothing and fails when a module is not tidy, as
# .ci/run runs it.
MODULES = $(sort $(dir $(shell find . -name go.mod -not -path './.git/*')))
tidy:
	@set -e; for m in $(MODULES); do echo "go mod tidy $(TIDYFLAGS): $$m"; (cd $$m && $(GO) mod tidy $(TIDYFLAGS)); done

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
# presets (tools/verifybench, a module of its own so they never enter
# go.mod). BENCH narrows the benchmarks, COUNT sets the runs of each.
#   go run golang.org/x/perf/cmd/benchstat@latest old.txt bench.txt
#   go run golang.org/x/perf/cmd/benchstat@latest -filter .name:Verify -col /impl bench.txt
BENCH ?= .
COUNT ?= 6
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(COUNT) ./... | tee bench.txt
	cd tools/verifybench && $(GO) run . -count $(COUNT) | tee -a ../../bench.txt
