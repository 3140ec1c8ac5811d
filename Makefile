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

# Benchmarks, sized for a small machine; compare runs with benchstat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./... | tee bench.txt
