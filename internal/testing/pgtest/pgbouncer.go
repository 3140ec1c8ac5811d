package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvRequirePgBouncer set to 1 turns a missing pgbouncer program into a
// failure of the tests that start one (.ci/run installs it and sets this).
const EnvRequirePgBouncer = "WEBHOOKS_TEST_REQUIRE_PGBOUNCER"

// PoolMode is PgBouncer's pool_mode: when it gives a client's server
// connection back to its pool.
type PoolMode string

// The pool modes the tests run PgBouncer in.
const (
	// SessionPooling keeps a server connection for as long as its client
	// is connected: the client's session is the server's.
	SessionPooling PoolMode = "session"
	// TransactionPooling hands a server connection to a client for one
	// transaction (or one statement outside a transaction): no session
	// state (prepared statements, LISTEN, session settings) outlives it.
	TransactionPooling PoolMode = "transaction"
)

// PgBouncerPoolSize is the default PgBouncerConfig.PoolSize: fewer server
// connections than a test's clients usually hold, so that in transaction
// pooling they share them.
const PgBouncerPoolSize = 4

// PgBouncerConfig says how StartPgBouncer configures the pooler.
type PgBouncerConfig struct {
	// Mode is its pool_mode. Required.
	Mode PoolMode
	// PoolSize is its default_pool_size: the most server connections it
	// opens per database and user; clients beyond them wait. In session
	// pooling every client connection holds one for as long as it is
	// open, idle in its pool or not, so it must be at least as many as
	// the test's clients open at once. Defaults to PgBouncerPoolSize.
	PoolSize int
}

// PgBouncer is a PgBouncer process started by StartPgBouncer in front of
// the test database.
type PgBouncer struct {
	// DSN is DSN(t) with its host and port those of the pooler (and
	// sslmode=disable: the pooler speaks no TLS to its clients).
	DSN string
	// Addr is the loopback host:port the pooler listens on.
	Addr string
	// Mode is its pool_mode.
	Mode PoolMode
}

// pgbouncerPaths are where pgbouncer is looked for beyond PATH: Debian
// installs it in /usr/sbin, which an ordinary user's PATH lacks.
var pgbouncerPaths = []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer"}

// StartPgBouncer starts a PgBouncer configured by c in front of the test
// database, on a free loopback port, with its configuration in t's
// temporary directory, and stops it when t ends (after everything t
// registered later, such as the pools connected to it). It skips t when
// pgbouncer is not installed, or fails it when
// WEBHOOKS_TEST_REQUIRE_PGBOUNCER=1; and skips or fails as DSN does when
// there is no test database.
//
// The pooler trusts its clients (auth_type trust; the test database's
// user is its only one), ignores the startup parameter extra_float_digits,
// which libpq-based clients send, and fails a query that waited 15 seconds
// for a server connection (query_wait_timeout), so that a test short of
// them fails rather than hangs. PgBouncer refuses to run as root: when the
// test does, it runs as the postgres user (or nobody, where there is
// none), after reading its configuration. Its log is printed when t fails.
func StartPgBouncer(t testing.TB, c PgBouncerConfig) *PgBouncer {
	t.Helper()
	upstream := DSN(t)
	mode := c.Mode
	switch mode {
	case SessionPooling, TransactionPooling:
	default:
		t.Fatalf("pgtest: StartPgBouncer: Mode %q; want SessionPooling or TransactionPooling", mode)
	}
	poolSize := c.PoolSize
	switch {
	case poolSize == 0:
		poolSize = PgBouncerPoolSize
	case poolSize < 0:
		t.Fatalf("pgtest: StartPgBouncer: PoolSize %d; want a positive size, or 0 for PgBouncerPoolSize", poolSize)
	}
	bin, err := findPgBouncer()
	if err != nil {
		if os.Getenv(EnvRequirePgBouncer) == "1" {
			t.Fatalf("pgtest: %s=1 but %v", EnvRequirePgBouncer, err)
		}
		t.Skipf("pgtest: %v; install it (apt-get install pgbouncer) to run the PgBouncer tests", err)
	}
	cfg, err := pgx.ParseConfig(upstream)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	dir := t.TempDir()
	authFile := filepath.Join(dir, "userlist.txt")
	// With auth_type trust the password is not asked of clients; PgBouncer
	// uses it, when the test database has one, to log in upstream.
	if err := os.WriteFile(authFile, []byte(quoteUserlist(cfg.User)+" "+quoteUserlist(cfg.Password)+"\n"), 0o600); err != nil {
		t.Fatalf("pgtest: writing PgBouncer's auth file: %v", err)
	}
	var args []string
	if os.Geteuid() == 0 {
		args = append(args, "-u", unprivilegedUser())
	}

	// The free port is found by binding and closing it, so another process
	// may take it before PgBouncer binds it: then PgBouncer exits at once,
	// and the next try takes another port.
	var lastErr error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			t.Fatalf("pgtest: finding a free port for PgBouncer: %v", err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ini := filepath.Join(dir, "pgbouncer.ini")
		conf := pgbouncerConfig(cfg.Host, cfg.Port, port, mode, poolSize, authFile)
		if err := os.WriteFile(ini, []byte(conf), 0o600); err != nil {
			t.Fatalf("pgtest: writing PgBouncer's configuration: %v", err)
		}
		p, err := startPgBouncer(bin, append(args, ini), filepath.Join(dir, "pgbouncer.log"), addr)
		if err != nil {
			lastErr = err
			continue
		}
		t.Cleanup(func() {
			if err := p.stop(); err != nil {
				t.Errorf("pgtest: stopping PgBouncer: %v", err)
			}
			if t.Failed() {
				t.Logf("pgtest: PgBouncer's log (%s pooling, %s):\n%s", mode, addr, p.log())
			}
		})
		u, err := url.Parse(WithAddress(t, upstream, addr))
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		q := u.Query()
		q.Set("sslmode", "disable")
		u.RawQuery = q.Encode()
		return &PgBouncer{DSN: u.String(), Addr: addr, Mode: mode}
	}
	t.Fatalf("pgtest: starting PgBouncer: %v", lastErr)
	return nil
}

// WithParam returns dsn with the connection parameter key set to value
// (such as pgx's default_query_exec_mode).
func WithParam(t testing.TB, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

func findPgBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	for _, p := range pgbouncerPaths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("pgbouncer is not installed (not in PATH nor at %s)", strings.Join(pgbouncerPaths, ", "))
}

// unprivilegedUser is the user PgBouncer runs as when the test runs as root.
func unprivilegedUser() string {
	if _, err := user.Lookup("postgres"); err == nil {
		return "postgres"
	}
	return "nobody"
}

// FreePort returns a loopback TCP port free a moment ago, for a server a
// test starts (a pooler, a private cluster). Another process may take it
// before the server binds it: retry on "address in use".
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// pgbouncerConfig is the configuration of a pooler on port forwarding
// every database to host:upstreamPort. No Unix socket (it would clash
// between poolers on one port number), no pid file, the log on stderr.
func pgbouncerConfig(host string, upstreamPort uint16, port int, mode PoolMode, poolSize int, authFile string) string {
	return fmt.Sprintf(`[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
pidfile =
logfile =
pool_mode = %s
auth_type = trust
auth_file = %s
max_client_conn = 200
default_pool_size = %d
query_wait_timeout = 15
ignore_startup_parameters = extra_float_digits
`, host, upstreamPort, port, mode, authFile, poolSize)
}

// quoteUserlist quotes s for PgBouncer's auth file.
func quoteUserlist(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// pgbouncerProcess is a running pgbouncer.
type pgbouncerProcess struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd.Wait returns
	waitErr error         // cmd.Wait's, once exited is closed
	logPath string
}

// startPgBouncer starts bin with args, its output in logPath, and returns
// once it accepts connections on addr.
func startPgBouncer(bin string, args []string, logPath, addr string) (*pgbouncerProcess, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own copy
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running %s: %w", bin, err)
	}
	p := &pgbouncerProcess{cmd: cmd, exited: make(chan struct{}), logPath: logPath}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	// No signal says PgBouncer listens but the port answering: poll it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("pgbouncer exited (%v) before listening on %s:\n%s", p.waitErr, addr, p.log())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = p.stop()
			return nil, fmt.Errorf("pgbouncer did not listen on %s within 10s:\n%s", addr, p.log())
		}
	}
}

// stop ends PgBouncer (SIGTERM: its immediate shutdown, closing every
// connection) and waits for it, killing it if it lingers.
func (p *pgbouncerProcess) stop() error {
	select {
	case <-p.exited:
		return fmt.Errorf("pgbouncer had exited before the test ended: %v", p.waitErr)
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return errors.New("pgbouncer did not stop within 10s of SIGTERM; killed it")
}

// log returns what PgBouncer wrote, its last 8 KiB at most.
func (p *pgbouncerProcess) log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.logPath, err)
	}
	const max = 8 << 10
	if len(b) > max {
		b = b[len(b)-max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
