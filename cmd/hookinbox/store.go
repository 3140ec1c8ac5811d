package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// opsSpec is a subcommand that works on a pgstore inbox: every one takes
// -dsn, -schema and -timeout besides its own flags.
type opsSpec struct {
	name     string
	summary  string
	synopsis string   // the flags after "hookinbox NAME"
	about    []string // lines of explanation
	// define adds the subcommand's flags and returns its body, which
	// reports a usage mistake with usagef.
	define func(fs *flag.FlagSet) func(c *opsContext) error
	// unmigrated lets the subcommand run on a schema that is not migrated
	// (migrate itself).
	unmigrated bool
}

// opsContext is what a subcommand's body works with.
type opsContext struct {
	ctx context.Context
	// store is what the operators' subcommands work on; pg is the same
	// store, for migrate and purge, which only pgstore has (nil in tests
	// that run a subcommand's body on another ops.Store).
	store  ops.Store
	pg     *pgstore.Store
	schema string
	fs     *flag.FlagSet
	stdout io.Writer
	stderr io.Writer // progress
	now    time.Time
}

// usageError is a mistake in the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// storeFlags are the flags every inbox subcommand takes.
type storeFlags struct {
	dsn, schema string
	timeout     time.Duration
}

func (s opsSpec) flags(w io.Writer) (*flag.FlagSet, *storeFlags, func(*opsContext) error) {
	fs := flag.NewFlagSet(s.name, flag.ContinueOnError)
	fs.SetOutput(w)
	sf := &storeFlags{}
	// The DSN's default is read from the environment after parsing, so
	// that help never prints a password.
	fs.StringVar(&sf.dsn, "dsn", "", "PostgreSQL connection string (default $DATABASE_URL)")
	fs.StringVar(&sf.schema, "schema", pgstore.DefaultSchema, "schema of the inbox tables")
	fs.DurationVar(&sf.timeout, "timeout", time.Minute, "how long the whole command may take")
	body := s.define(fs)
	return fs, sf, body
}

func (s opsSpec) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: hookinbox %s %s\n\n", s.name, s.synopsis)
	for _, l := range s.about {
		fmt.Fprintln(w, l)
	}
	if len(s.about) > 0 {
		fmt.Fprintln(w)
	}
	fs, _, _ := s.flags(w)
	fs.PrintDefaults()
}

func (s opsSpec) command() command {
	return command{name: s.name, summary: s.summary, run: s.run, usage: s.usage}
}

func (s opsSpec) run(args []string, e env) int {
	fs, sf, body := s.flags(e.stderr)
	fs.Usage = func() { s.usage(e.stderr) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	fail := func(err error) int {
		// Errors quote what the inbox holds (keys, states): escaped like
		// every other output.
		fmt.Fprintf(e.stderr, "hookinbox %s: %s\n", s.name, cleanText(err.Error()))
		return exitCode(err)
	}
	if fs.NArg() > 0 {
		return fail(usagef("unexpected arguments %q (flags come as -name value)", fs.Args()))
	}
	if sf.dsn == "" {
		sf.dsn = e.getenv("DATABASE_URL")
	}
	if sf.dsn == "" {
		return fail(usagef("no database: give -dsn postgres://… or set DATABASE_URL"))
	}
	cfg, err := pgxpool.ParseConfig(sf.dsn)
	if err != nil {
		return fail(usagef("-dsn is not a PostgreSQL connection string: %v", err))
	}
	cfg.MaxConns = 2
	ctx, cancel := context.WithTimeout(context.Background(), sf.timeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fail(&unavailableError{fmt.Errorf("connecting to PostgreSQL: %w", err)})
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return fail(&unavailableError{fmt.Errorf("connecting to PostgreSQL: %w", err)})
	}
	store, err := pgstore.New(pool, pgstore.WithSchema(sf.schema))
	if err != nil {
		return fail(usagef("%v", err))
	}
	if !s.unmigrated {
		if err := checkMigrated(ctx, store); err != nil {
			return fail(err)
		}
	}
	if err := body(&opsContext{ctx: ctx, store: store, pg: store, schema: sf.schema, fs: fs, stdout: e.stdout, stderr: e.stderr, now: time.Now()}); err != nil {
		return fail(err)
	}
	return exitOK
}

// checkMigrated refuses a schema whose migrations are missing or behind,
// saying what to do, rather than failing later on a missing table.
func checkMigrated(ctx context.Context, store *pgstore.Store) error {
	applied, err := store.AppliedMigrations(ctx)
	if err != nil {
		return fmt.Errorf("reading the applied migrations of schema %q: %w", store.Schema(), err)
	}
	all, err := pgstore.Migrations(store.Schema())
	if err != nil {
		return err
	}
	latest := all[len(all)-1].Version
	switch {
	case len(applied) == 0:
		return fmt.Errorf("schema %q holds no inbox: run hookinbox migrate (or give the right -schema)", store.Schema())
	case applied[len(applied)-1] < latest:
		return fmt.Errorf("schema %q is at migration %d and this hookinbox needs %d: run hookinbox migrate", store.Schema(), applied[len(applied)-1], latest)
	}
	return nil
}

// keyFlags address one item.
type keyFlags struct {
	provider, tenant, eventID string
}

func addKeyFlags(fs *flag.FlagSet) *keyFlags {
	k := &keyFlags{}
	fs.StringVar(&k.provider, "provider", "", "provider of the item")
	fs.StringVar(&k.tenant, "tenant", "", "tenant of the item (default none: the item of no tenant)")
	fs.StringVar(&k.eventID, "event-id", "", "event ID of the item")
	return k
}

func (k *keyFlags) key() (webhooks.InboxKey, error) {
	if k.provider == "" || k.eventID == "" {
		return webhooks.InboxKey{}, usagef("-provider and -event-id are required to address an item (-tenant too when it has one)")
	}
	return webhooks.InboxKey{Provider: k.provider, Tenant: k.tenant, EventID: k.eventID}, nil
}

// describeKey names an item for messages, the empty tenant as "(none)".
func describeKey(k webhooks.InboxKey) string {
	return fmt.Sprintf("provider %s, tenant %s, event %s", clean(k.Provider), orNone(k.Tenant), clean(k.EventID))
}

// describeJob names a job for messages: its item, and its handler unless
// it is the default handler's.
func describeJob(k webhooks.InboxKey, handler string) string {
	if handler == "" {
		return describeKey(k)
	}
	return describeKey(k) + ", handler " + clean(handler)
}

// handlerName shows a handler's name, the default handler as "(default)".
func handlerName(h string) string {
	switch h {
	case "":
		return "(default)"
	case webhooks.EveryHandler:
		return "(every handler)"
	}
	return clean(h)
}

// storeError adds what an operator needs to know to the store's errors,
// keeping them (errors.Is) for the exit code.
func storeError(k webhooks.InboxKey, handler, schema string, err error) error {
	switch {
	case errors.Is(err, ops.ErrNotFound):
		return fmt.Errorf("no item with %s in schema %q: %w", describeJob(k, handler), schema, ops.ErrNotFound)
	case errors.Is(err, ops.ErrNotDead):
		return fmt.Errorf("%s: only dead letters can be closed (%w)", describeJob(k, handler), err)
	case errors.Is(err, ops.ErrNotFinished):
		return fmt.Errorf("%s: it is pending or running, so it runs anyway: there is nothing to replay (%w)", describeJob(k, handler), err)
	}
	return err
}

// unavailableError is a database that cannot be reached.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// exitCode is the exit code of a subcommand that failed with err (see the
// command's documentation).
func exitCode(err error) int {
	switch {
	case isUsage(err):
		return exitUsage
	case errors.Is(err, ops.ErrNotFound):
		return exitNotFound
	case errors.Is(err, ops.ErrNotDead), errors.Is(err, ops.ErrNotFinished), errors.Is(err, webhooks.ErrNotPaused):
		return exitRefused
	case unavailable(err):
		return exitUnavailable
	}
	return exitFail
}

// isUsage reports a mistake in the command line, or a value the store
// refused as such (a cursor it did not make, a request it cannot take).
func isUsage(err error) bool {
	_, ok := errors.AsType[*usageError](err)
	return ok || errors.Is(err, ops.ErrInvalidCursor) || errors.Is(err, ops.ErrInvalidRequest)
}

// unavailable reports a database that could not be reached or did not
// answer in time: trying again later may work.
func unavailable(err error) bool {
	if _, ok := errors.AsType[*unavailableError](err); ok {
		return true
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		// connection_exception, admin_shutdown, crash_shutdown,
		// cannot_connect_now, too_many_connections.
		return strings.HasPrefix(pgErr.Code, "08") || slices.Contains([]string{"57P01", "57P02", "57P03", "53300"}, pgErr.Code)
	}
	_, connect := errors.AsType[*pgconn.ConnectError](err)
	_, network := errors.AsType[net.Error](err)
	return connect || network || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err)
}

// filterFlags select dead letters.
type filterFlags struct {
	handler, provider, tenant, eventType, errorClass, apiVersion, from, to string
}

func addFilterFlags(fs *flag.FlagSet, what string) *filterFlags {
	f := &filterFlags{}
	fs.StringVar(&f.handler, "handler", "", what+" of this handler; -handler '' selects the default handler's (default every handler)")
	fs.StringVar(&f.provider, "provider", "", what+" of this provider")
	fs.StringVar(&f.tenant, "tenant", "", what+" of this tenant; -tenant '' selects those of no tenant (default every tenant)")
	fs.StringVar(&f.eventType, "type", "", what+" of this event type")
	fs.StringVar(&f.errorClass, "error-class", "", what+" whose last error has this class (error, permanent, panic, timeout, no_handler, lease_expired)")
	fs.StringVar(&f.apiVersion, "api-version", "", what+" of this provider API version")
	fs.StringVar(&f.from, "from", "", what+" that died at or after this time: RFC 3339, a date (UTC), or a duration ago such as 24h")
	fs.StringVar(&f.to, "to", "", what+" that died before this time, in the same forms")
	return f
}

// query is the filter as an ops.Query; -tenant selects a tenant only when
// given, even empty.
func (f *filterFlags) query(fs *flag.FlagSet, now time.Time) (ops.Query, error) {
	q := ops.Query{Provider: f.provider, EventType: f.eventType, ErrorClass: webhooks.FailureClass(f.errorClass), APIVersion: f.apiVersion}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "tenant":
			q.Tenant = &f.tenant
		case "handler":
			q.Handler = &f.handler
		}
	})
	if q.Handler != nil {
		if err := webhooks.CheckHandlerName(*q.Handler); err != nil {
			return ops.Query{}, usagef("-handler: %v", err)
		}
	}
	var err error
	if q.From, err = parseWhen("-from", f.from, now); err != nil {
		return ops.Query{}, err
	}
	if q.To, err = parseWhen("-to", f.to, now); err != nil {
		return ops.Query{}, err
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return ops.Query{}, usagef("-from %s is not before -to %s", q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	return q, nil
}

// given reports whether any filter flag was given.
func (f *filterFlags) given(fs *flag.FlagSet) []string {
	var names []string
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "type", "error-class", "api-version", "from", "to":
			names = append(names, "-"+fl.Name)
		}
	})
	return names
}

// parseWhen reads a time: RFC 3339, a date in UTC, or a duration before
// now.
func parseWhen(name, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := parseAge(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, usagef("%s %q: give a time (2006-01-02T15:04:05Z), a date (2006-01-02) or a duration ago (90m, 24h, 7d)", name, s)
}

// parseAge reads a duration as Go writes it, or a number of days ("30d").
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return d, nil
}

// ageFlag is a flag holding a duration that may be given in days.
type ageFlag struct {
	d   time.Duration
	set bool
}

func (a *ageFlag) String() string {
	if a == nil || !a.set {
		return ""
	}
	return a.d.String()
}

func (a *ageFlag) Set(s string) error {
	d, err := parseAge(s)
	if err != nil {
		return err
	}
	a.d, a.set = d, true
	return nil
}

// table writes aligned columns.
func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// when formats a time for tables: UTC to the second, "-" when unset.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// oneLine keeps a message on one table row, escaped, cut to n bytes.
func oneLine(s string, n int) string {
	s = clean(strings.Join(strings.Fields(s), " "))
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// orNone shows the empty tenant, and escapes another.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return clean(s)
}

// clean escapes what in s could drive a terminal, for a text field of one
// line: every control character (C0, DEL, C1; tabs and newlines too),
// the bidirectional controls that reorder what follows (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069) and bytes that are not UTF-8,
// written as Go writes them (\x1b, \u202e). Text that holds none is
// returned as it is. Everything the inbox holds comes from outside (a
// provider, a sender, a handler's error), so every text output of it goes
// through clean or cleanText; -json needs neither (JSON escapes controls,
// and the consumer is a program).
func clean(s string) string { return escape(s, false) }

// cleanText is clean for text of several lines (a payload, an error):
// newlines and tabs are kept.
func cleanText(s string) string { return escape(s, true) }

func escape(s string, multiline bool) string {
	var (
		b     strings.Builder
		dirty bool // b holds s up to i, escaped
	)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		esc, ok := escaped(r, multiline)
		if r == utf8.RuneError && size == 1 {
			esc, ok = fmt.Sprintf(`\x%02x`, s[i]), true
		}
		switch {
		case ok && !dirty:
			b.WriteString(s[:i])
			dirty = true
			fallthrough
		case ok:
			b.WriteString(esc)
		case dirty:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	if !dirty {
		return s
	}
	return b.String()
}

// escaped returns how r is written when it must be escaped.
func escaped(r rune, multiline bool) (string, bool) {
	switch {
	case multiline && (r == '\n' || r == '\t'):
		return "", false
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r), true
	case r >= 0x80 && r < 0xa0, r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return fmt.Sprintf(`\u%04x`, r), true
	}
	return "", false
}
