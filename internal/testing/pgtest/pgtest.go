// Package pgtest is the one PostgreSQL helper of the module's tests
// (pgstore's, the CLI's, the example server's, the fault tests'): it finds
// the test database, named by WEBHOOKS_TEST_DATABASE_URL, and skips the
// test with one line saying how to run it when there is none (or fails it,
// when WEBHOOKS_TEST_REQUIRE_DB=1, as in CI). Each test works in a schema
// of its own, dropped when it ends, so tests run in parallel on one
// database.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
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
	u := os.Getenv(EnvDatabaseURL)
	if u == "" {
		skip = EnvDatabaseURL + " is not set"
		return
	}
	if _, err := pgxpool.ParseConfig(u); err != nil {
		dsnErr = fmt.Errorf("%s is not a valid connection string: %w", EnvDatabaseURL, err)
		return
	}
	dsn = u
}

// Main runs the package's tests and then fails the run if any goroutine
// outlived them (a store's listener, notifier or pool left running). Call
// it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
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
	return NewPoolAt(t, DSN(t), maxConns, configure)
}

// NewPoolAt is NewPoolWith on dsn instead of the test database's own
// connection string (a pooler's in front of it, say).
func NewPoolAt(t testing.TB, dsn string, maxConns int32, configure func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
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

// ExecMode is one of pgx's query exec modes, by the name
// default_query_exec_mode gives it in a connection string.
type ExecMode struct {
	Name string
	Mode pgx.QueryExecMode
}

// ExecModes returns pgx's five query exec modes, the default
// (cache_statement) first. A host picks one for its pool
// (ConnConfig.DefaultQueryExecMode); exec and simple_protocol, which
// poolers in transaction mode need, send parameters as text typed by their
// Go types, or interpolated into the statement, where the others use the
// types the server describes.
func ExecModes() []ExecMode {
	return []ExecMode{
		{"cache_statement", pgx.QueryExecModeCacheStatement},
		{"cache_describe", pgx.QueryExecModeCacheDescribe},
		{"describe_exec", pgx.QueryExecModeDescribeExec},
		{"exec", pgx.QueryExecModeExec},
		{"simple_protocol", pgx.QueryExecModeSimpleProtocol},
	}
}

// InExecMode is a configure function for NewPoolWith: the pool's
// statements run in mode.
func InExecMode(mode pgx.QueryExecMode) func(*pgxpool.Config) {
	return func(cfg *pgxpool.Config) { cfg.ConnConfig.DefaultQueryExecMode = mode }
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

// Begin begins a transaction on pool and rolls it back when t ends, unless
// it ended before. A test that fails while it holds a transaction would
// otherwise keep its connection, and the pool's Close, when t ends, would
// wait for it until the test binary times out.
func Begin(t testing.TB, pool *pgxpool.Pool) pgx.Tx {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatalf("pgtest: beginning a transaction: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = tx.Rollback(ctx) // a no-op once it ended
	})
	return tx
}

// NewSchema returns a fresh random schema name, unused so far, and drops the
// schema (with everything in it) through pool when t ends. It does not
// create it. pool may be on any database, not only the test database's.
func NewSchema(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	return newSchema(t, func(ctx context.Context, sql string) error {
		_, err := pool.Exec(ctx, sql)
		return err
	})
}

// NewSchemaAt is NewSchema for a test that holds no pool, only the
// connection string of the database (to hand to a program it starts: a
// server, the CLI). The schema is dropped over a connection of its own.
func NewSchemaAt(t testing.TB, dsn string) string {
	t.Helper()
	return newSchema(t, func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	})
}

func newSchema(t testing.TB, exec func(ctx context.Context, sql string) error) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "webhooks_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("pgtest: dropping test schema %s: %v", name, err)
		}
	})
	return name
}

// Address returns the host:port dsn connects to: what a proxy in front of
// the database forwards to.
func Address(t testing.TB, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// WithAddress returns dsn with its host and port replaced by addr (a
// proxy's).
func WithAddress(t testing.TB, dsn, addr string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u.Host = addr
	return u.String()
}
