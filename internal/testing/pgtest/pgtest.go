// Package pgtest gives pgstore's tests a PostgreSQL database: the one named
// by WEBHOOKS_TEST_DATABASE_URL; else, in a build with -tags testcontainers,
// a container started with testcontainers-go when a Docker engine is
// reachable; else the test is skipped with one line saying how to enable it
// (or fails, when WEBHOOKS_TEST_REQUIRE_DB=1). Each test works in its own
// schema, dropped when it ends, so tests run in parallel on one database.
//
// The container is behind a build tag because testcontainers-go and the
// Docker client it brings are a seventh of what the tests compile: without
// the tag, a cold `make test` does not build them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"
)

// Environment variables read by DSN.
const (
	// EnvDatabaseURL names the test database.
	EnvDatabaseURL = "WEBHOOKS_TEST_DATABASE_URL"
	// EnvRequireDB set to 1 turns a missing database into a failure.
	EnvRequireDB = "WEBHOOKS_TEST_REQUIRE_DB"
)

// ExampleURL is the value the skip message suggests.
const ExampleURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	once   sync.Once
	dsn    string
	dsnErr error // a database was expected but is broken
	skip   string
)

// DSN returns the connection string of the test database, skipping t (or
// failing it, with WEBHOOKS_TEST_REQUIRE_DB=1) when there is none.
func DSN(t testing.TB) string {
	t.Helper()
	once.Do(resolve)
	switch {
	case dsnErr != nil:
		t.Fatalf("pgtest: %v", dsnErr)
	case skip != "" && os.Getenv(EnvRequireDB) == "1":
		t.Fatalf("pgtest: %s=1 but %s", EnvRequireDB, skip)
	case skip != "":
		t.Skipf("pgtest: %s; set %s=%s to run the PostgreSQL tests", skip, EnvDatabaseURL, ExampleURL)
	}
	return dsn
}

func resolve() {
	if u := os.Getenv(EnvDatabaseURL); u != "" {
		if _, err := pgxpool.ParseConfig(u); err != nil {
			dsnErr = fmt.Errorf("%s is not a valid connection string: %w", EnvDatabaseURL, err)
			return
		}
		dsn = u
		return
	}
	dsn, skip, dsnErr = startContainer()
}

// Main runs the package's tests, stops the container DSN may have started,
// and then fails the run if any goroutine outlived the tests (a store's
// listener, notifier or pool left running). Call it from TestMain:
// os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if stopContainer() {
		// testcontainers keeps goroutines of its own (its reaper's
		// connection, the Docker client's) for the process's life.
		return code
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: goroutines outlived the tests: %v\n", err)
			return 1
		}
	}
	return code
}

// NewPool returns a pool of at most maxConns connections to the test
// database, closed when t ends.
func NewPool(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	return NewPoolWith(t, maxConns, nil)
}

// NewPoolWith is NewPool with configure, when not nil, applied to the
// pool's configuration before it connects (to wrap its connections, say).
func NewPoolWith(t testing.TB, maxConns int32, configure func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(DSN(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	cfg.MaxConns = maxConns
	cfg.MinConns = 0
	if configure != nil {
		configure(cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: connecting to the test database: %v", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		t.Fatalf("pgtest: connecting to the test database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// NewSlowCommitPool returns a pool of maxConns connections, all opened at
// once, whose commits wait commitDelay before flushing WAL (commit_delay
// with commit_siblings = 0), like a slow disk or a synchronous standby. It
// is closed when t ends. Setting commit_delay needs a superuser; without
// one t is skipped.
func NewSlowCommitPool(t testing.TB, maxConns int32, commitDelay time.Duration) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(DSN(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	cfg.MaxConns, cfg.MinConns = maxConns, maxConns
	cfg.ConnConfig.RuntimeParams["commit_delay"] = fmt.Sprint(commitDelay.Microseconds())
	cfg.ConnConfig.RuntimeParams["commit_siblings"] = "0"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: connecting to the test database: %v", err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
			t.Skipf("pgtest: the test database user may not set commit_delay: %v", err)
		}
		t.Fatalf("pgtest: connecting to the test database: %v", err)
	}
	return pool
}

// NewSchema returns a fresh random schema name, unused so far, and drops the
// schema (with everything in it) when t ends. It does not create it.
func NewSchema(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "pgstore_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("pgtest: dropping test schema %s: %v", name, err)
		}
	})
	return name
}
