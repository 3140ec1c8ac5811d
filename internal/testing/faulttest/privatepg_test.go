//go:build unix

package faulttest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// envPGBin names the directory of initdb and pg_ctl for the tests that
// run a PostgreSQL cluster of their own; by default the newest
// /usr/lib/postgresql/*/bin (Debian's and Ubuntu's layout).
const envPGBin = "WEBHOOKS_TEST_PG_BIN"

// privatePostgres is a PostgreSQL cluster of the test's own, in a
// directory of its own, on a free port on loopback, which the test may
// stop and start. Tests never stop the shared server
// (WEBHOOKS_TEST_DATABASE_URL): other people's tests run on it.
type privatePostgres struct {
	bin  string // initdb, pg_ctl
	dir  string // the cluster's data directory is dir/data; its socket is in dir
	port int
	dsn  string
	// as runs a command as the cluster's owner: PostgreSQL refuses to run
	// as root, as .ci/run does, so root runs it as the user postgres.
	as []string
}

// startPrivatePostgres creates and starts a cluster, stopped and removed
// when t ends. It skips t (fails it under WEBHOOKS_TEST_REQUIRE_DB=1)
// where the binaries, or as root the user postgres, are missing.
func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv(pgtest.EnvRequireDB) == "1" {
			t.Fatalf("%s (%s=1)", msg, pgtest.EnvRequireDB)
		}
		t.Skip(msg)
	}
	bin := os.Getenv(envPGBin)
	if bin == "" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		slices.SortFunc(dirs, func(a, b string) int { return pgMajor(b) - pgMajor(a) })
		if len(dirs) > 0 {
			bin = dirs[0]
		}
	}
	for _, tool := range []string{"initdb", "pg_ctl"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			unavailable("a private PostgreSQL cluster needs %s (none in %q): install PostgreSQL's server package or set %s to its bin directory", tool, bin, envPGBin)
		}
	}
	pg := &privatePostgres{bin: bin}
	dir, err := os.MkdirTemp("", "hookinbox-pg-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	pg.dir = dir
	if os.Geteuid() == 0 {
		owner, err := user.Lookup("postgres")
		if err != nil {
			unavailable("running as root, a private PostgreSQL cluster needs the user postgres to own it: %v", err)
		}
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			unavailable("running as root, a private PostgreSQL cluster needs runuser to start it as postgres: %v", err)
		}
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		require.NoError(t, os.Chown(dir, uid, gid))
		pg.as = []string{runuser, "-u", "postgres", "--"}
	}
	require.NoError(t, os.Chmod(dir, 0o700))

	port, err := pgtest.FreePort()
	require.NoError(t, err)
	pg.port = port
	pg.dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.port)

	pg.run(t, "initdb", "-D", pg.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	pg.start(t)
	t.Cleanup(func() {
		_ = pg.command("pg_ctl", "stop", "-D", pg.data(), "-m", "immediate", "-w").Run()
	})
	return pg
}

func (pg *privatePostgres) data() string { return filepath.Join(pg.dir, "data") }

// start starts the cluster and waits until it accepts connections.
func (pg *privatePostgres) start(t *testing.T) {
	t.Helper()
	pg.run(t, "pg_ctl", "start", "-D", pg.data(), "-l", filepath.Join(pg.dir, "log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories=%s -c max_connections=50", pg.port, pg.dir))
}

// stop stops the cluster as a crash would (pg_ctl stop -m immediate: no
// checkpoint, every session cut; the next start recovers from the WAL).
func (pg *privatePostgres) stop(t *testing.T) {
	t.Helper()
	pg.run(t, "pg_ctl", "stop", "-D", pg.data(), "-m", "immediate", "-w", "-t", "60")
}

func (pg *privatePostgres) command(tool string, args ...string) *exec.Cmd {
	argv := append(slices.Clone(pg.as), append([]string{filepath.Join(pg.bin, tool)}, args...)...)
	return exec.Command(argv[0], argv[1:]...)
}

func (pg *privatePostgres) run(t *testing.T, tool string, args ...string) {
	t.Helper()
	start := time.Now()
	out, err := pg.command(tool, args...).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(pg.dir, "log"))
		t.Fatalf("%s %s: %v\n%s\nserver log:\n%s", tool, strings.Join(args, " "), err, out, strings.Join(tail(strings.Split(string(log), "\n"), 20), "\n"))
	}
	t.Logf("%s %s: %v", tool, args[0], time.Since(start).Round(time.Millisecond))
}

// pgMajor is the major version in a path /usr/lib/postgresql/N/bin.
func pgMajor(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}
