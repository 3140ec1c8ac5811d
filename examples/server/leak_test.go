package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// envChild holds the server's arguments, as a JSON array, when the test
// binary is started as a child (startProcess): TestMain then runs the
// server, as main does, instead of the tests.
const envChild = "EXAMPLE_SERVER_ARGS"

// TestMain runs the server when the test binary was started as one, and
// the tests otherwise, failing them if any goroutine outlives them: a
// server whose context ended has stopped its HTTP server, processor,
// listener and retention loop.
func TestMain(m *testing.M) {
	if args := os.Getenv(envChild); args != "" {
		os.Exit(childMain(args))
	}
	goleak.VerifyTestMain(m)
}

func childMain(rawArgs string) int {
	var args []string
	if err := json.Unmarshal([]byte(rawArgs), &args); err != nil {
		fmt.Fprintln(os.Stderr, "server: bad", envChild, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, args, os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}
