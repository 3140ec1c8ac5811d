package pgtest_test

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// backendPID connects to dsn and returns the server process its first
// statement ran on, and the connection. It prepares no statement on the
// server (pgx's simple protocol), which transaction pooling would hand to
// the other client.
func backendPID(t *testing.T, dsn string) (int32, *pgx.Conn) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), pgtest.WithParam(t, dsn, "default_query_exec_mode", "simple_protocol"))
	if err != nil {
		t.Fatalf("connecting through PgBouncer: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	var pid int32
	if err := conn.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatalf("querying through PgBouncer: %v", err)
	}
	return pid, conn
}

// TestPgBouncerModes: two clients connected at once share a server
// connection in transaction pooling (one statement at a time each, so
// PgBouncer reuses the one it has) and have one each in session pooling.
// Once the test ends the pooler is gone.
func TestPgBouncerModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode  pgtest.PoolMode
		share bool
	}{
		{pgtest.TransactionPooling, true},
		{pgtest.SessionPooling, false},
	} {
		var addr string
		t.Run(string(tc.mode), func(t *testing.T) {
			b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: tc.mode})
			addr = b.Addr
			if b.Mode != tc.mode {
				t.Errorf("Mode = %q, want %q", b.Mode, tc.mode)
			}
			first, _ := backendPID(t, b.DSN)
			second, conn := backendPID(t, b.DSN)
			if shared := first == second; shared != tc.share {
				t.Errorf("two clients on server processes %d and %d; want shared=%v in %s pooling", first, second, tc.share, tc.mode)
			}
			var sum int
			if err := conn.QueryRow(t.Context(), "SELECT $1::int + 1", 41).Scan(&sum); err != nil || sum != 42 {
				t.Errorf("a statement with a parameter: %d, %v", sum, err)
			}
		})
		if addr == "" {
			continue // skipped
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("PgBouncer still listens on %s after its test ended", addr)
		}
	}
}

func TestWithParam(t *testing.T) {
	t.Parallel()
	got := pgtest.WithParam(t, "postgres://u@h:1/db?sslmode=disable", "default_query_exec_mode", "exec")
	if want := "postgres://u@h:1/db?default_query_exec_mode=exec&sslmode=disable"; got != want {
		t.Errorf("WithParam = %q, want %q", got, want)
	}
}
