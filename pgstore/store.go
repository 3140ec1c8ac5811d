package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// DefaultSchema is the schema the store's tables live in unless WithSchema
// says otherwise.
const DefaultSchema = "webhooks"

// maxIdentifierBytes is PostgreSQL's limit on identifier length
// (NAMEDATALEN-1). Longer names would be silently truncated by the server.
const maxIdentifierBytes = 63

// Store is the PostgreSQL inbox and replay store. It implements
// webhooks.InboxStore, ops.Store and webhooks.ReplayStore, and is safe for
// concurrent use by any number of goroutines and processes sharing one
// database.
//
// Create it with New, create or upgrade its tables with Migrate, and give
// Listener to the Processor as its webhooks.WakeSource.
type Store struct {
	pool       *pgxpool.Pool
	schema     string // as configured
	channel    string // NOTIFY channel
	dbClock    bool
	notifyInTx bool // EnqueueTx notifies inside the host's transaction
	logger     *slog.Logger
	notifier   *notifier
	committer  *committer // nil with WithEnqueueBatch(1)
	sql        statements
	// limitsClass is the first key of the advisory locks of Limits
	// (see lockLimitsSQL).
	limitsClass int32
	// hostNow reads the host's clock where a call gives no now of its own
	// (DeleteSucceeded with the database clock). Tests replace it.
	hostNow func() time.Time
}

var (
	_ webhooks.InboxStore   = (*Store)(nil)
	_ webhooks.BatchSettler = (*Store)(nil)
	_ ops.Store             = (*Store)(nil)
	_ webhooks.ReplayStore  = (*Store)(nil)
)

// Option configures New.
type Option func(*config)

type config struct {
	schema       string
	dbClock      bool
	noNotifyInTx bool
	logger       *slog.Logger
	enqueueBatch int
	enqueueBytes int64
}

// WithSchema sets the schema that holds the store's tables, so they can live
// beside a host's own. The name is used as is (case-sensitive, quoted), must
// not be empty and must fit PostgreSQL's 63-byte identifier limit. Defaults
// to DefaultSchema.
func WithSchema(name string) Option {
	return func(c *config) { c.schema = name }
}

// WithDatabaseClock makes the store use the database server's clock (now())
// instead of the now passed by the caller for every state time it compares
// or writes: due times, lease expiries, updated, completed, dead and closed
// times, error times, attempt and audit times and replay-key expiry. Times
// the caller passes as absolute instants in its own clock (a retry's
// Settlement.RetryAt, a replay key's expiresAt) are converted by keeping
// their distance from the caller's now; the olderThan of DeleteSucceeded
// and DeleteClosed keeps its distance from the host's time.Now. A new item
// becomes due at the database's now instead of its ReceivedAt, and so does
// a dead letter a redelivery replays; ReceivedAt, OccurredAt, LastSeenAt
// and a quarantined delivery's ReceivedAt keep the envelope's times.
//
// With it, the clocks of the application hosts do not matter for lease
// expiry; see the package documentation. Defaults to off: the caller's now is
// used, as the webhooks.InboxStore contract and the conformance suite expect.
func WithDatabaseClock() Option {
	return func(c *config) { c.dbClock = true }
}

// WithoutNotifyInTx makes EnqueueTx leave the wake-up out of the host's
// transaction. By default EnqueueTx sends NOTIFY inside it, so listeners are
// woken when, and only when, the host commits. The price is PostgreSQL's:
// a transaction that notifies takes the cluster-wide notification-queue lock
// when it commits and holds it until its commit record is flushed, so such
// commits in the whole cluster run one at a time (at the pace of the WAL
// flush), and a commit fails when the notification queue is full. With this
// option, call (*Store).Notify after the transaction commits, or leave the
// item to the Processor's polling.
func WithoutNotifyInTx() Option {
	return func(c *config) { c.noNotifyInTx = true }
}

// WithLogger sets the logger for events no call returns, such as the
// listener losing its connection or an unreadable row given back. Defaults
// to slog.Default(), as everywhere in the webhooks packages.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithEnqueueBatch sets the most envelopes one statement of Enqueue stores
// (see Enqueue): concurrent calls go together, up to n, in one statement
// and one commit. 1 turns grouping off: each call runs its own statement
// and commit. Defaults to DefaultEnqueueBatch.
func WithEnqueueBatch(n int) Option {
	return func(c *config) { c.enqueueBatch = n }
}

// WithEnqueueBatchBytes sets the most bytes of payloads and stored headers
// one statement of Enqueue stores (see Enqueue), so that large bodies make
// smaller batches: a statement carrying many large payloads would run past
// the callers' deadlines (a Receiver's 2-second store timeout), and every
// caller in it would fail. An envelope larger than n is stored in a
// statement of its own, and so is any envelope over 256 KiB, whatever n:
// grouping saves commits, which a large row hardly needs, and queues it
// behind the statements in flight. Defaults to DefaultEnqueueBatchBytes
// (4 MiB).
func WithEnqueueBatchBytes(n int64) Option {
	return func(c *config) { c.enqueueBytes = n }
}

// New returns a store using pool. It does not touch the database: call
// Migrate once at start-up (or run the SQL of Migrations with your own
// migration tool) before using it. On a schema without the inbox, Enqueue
// and Acquire fail with an error wrapping webhooks.ErrStoreNotReady that
// says so (see CheckSchema).
func New(pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgstore: New needs a *pgxpool.Pool; got nil")
	}
	c := config{schema: DefaultSchema, enqueueBatch: DefaultEnqueueBatch, enqueueBytes: DefaultEnqueueBatchBytes}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if err := validateSchema(c.schema); err != nil {
		return nil, err
	}
	if c.enqueueBatch < 1 {
		return nil, fmt.Errorf("pgstore: WithEnqueueBatch(%d): a batch holds at least one envelope (1 turns grouping off)", c.enqueueBatch)
	}
	if c.enqueueBytes < 1 {
		return nil, fmt.Errorf("pgstore: WithEnqueueBatchBytes(%d): the bound must be positive (an envelope larger than it is stored alone)", c.enqueueBytes)
	}
	logger := c.logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &Store{
		pool:        pool,
		schema:      c.schema,
		channel:     notifyChannel(c.schema),
		dbClock:     c.dbClock,
		notifyInTx:  !c.noNotifyInTx,
		logger:      logger,
		sql:         renderStatements(quoteSchema(c.schema)),
		limitsClass: limitsClass(c.schema),
		hostNow:     time.Now,
	}
	s.notifier = newNotifier(s.sendNotify, logger, s.channel)
	if c.enqueueBatch > 1 {
		s.committer = newCommitter(s, c.enqueueBatch, c.enqueueBytes)
	}
	return s, nil
}

// Schema returns the name of the schema holding the store's tables.
func (s *Store) Schema() string { return s.schema }

// NotifyChannel returns the channel the store notifies when it makes an
// item due (see Notify). Listener listens on it; a host may LISTEN on it too.
func (s *Store) NotifyChannel() string { return s.channel }

// Notify asks for a wake-up of the listeners on NotifyChannel, such as the
// Processors' Listeners, soon after the call. Enqueue and Replay call it
// themselves once their statement has committed; call it after
// committing a transaction in which EnqueueTx stored new items under
// WithoutNotifyInTx.
//
// Notify never blocks and never fails. The store sends the notification on
// its own connection and statement, outside any enqueue's transaction: at
// once when none is in flight, and otherwise coalesced, at most one every few
// milliseconds however many items are stored meanwhile. A failure to send is
// logged (see WithLogger); it only delays work until the next poll.
func (s *Store) Notify() { s.notifier.signal() }

// sendNotify sends one notification in a statement of its own.
func (s *Store) sendNotify(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "SELECT pg_notify($1, '')", s.channel)
	return err
}

func validateSchema(name string) error {
	switch {
	case name == "":
		return errors.New("pgstore: the schema name is empty; pass a name to WithSchema or leave it out for the default " + DefaultSchema)
	case len(name) > maxIdentifierBytes:
		return fmt.Errorf("pgstore: the schema name %q is %d bytes; PostgreSQL identifiers hold at most %d", name, len(name), maxIdentifierBytes)
	case !utf8.ValidString(name) || strings.ContainsRune(name, 0):
		return fmt.Errorf("pgstore: the schema name %q must be valid UTF-8 without NUL bytes", name)
	}
	return nil
}

// quoteSchema returns name as a quoted SQL identifier.
func quoteSchema(name string) string { return pgx.Identifier{name}.Sanitize() }

// notifyChannel derives the NOTIFY channel from the schema, so stores in
// different schemas of one database do not wake each other. A channel name
// is an identifier, so it must fit 63 bytes too: long schema names are
// shortened, keeping a hash of the full name.
func notifyChannel(schema string) string {
	const suffix = ".inbox"
	ch := schema + suffix
	if len(ch) <= maxIdentifierBytes {
		return ch
	}
	h := fnv64(schema)
	tail := fmt.Sprintf(".%016x%s", h, suffix)
	head := schema[:maxIdentifierBytes-len(tail)]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return head + tail
}

// fnv64 is the 64-bit FNV-1a hash.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// checkText reports an error for a value PostgreSQL's text type cannot hold.
func checkText(what, v string) error {
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return fmt.Errorf("pgstore: the %s %q is not valid UTF-8 or contains a NUL byte; PostgreSQL text cannot store it, so reject it before it reaches the store", what, v)
	}
	return nil
}

func checkKey(k webhooks.InboxKey) error {
	if err := checkText("provider", k.Provider); err != nil {
		return err
	}
	if err := checkText("tenant", k.Tenant); err != nil {
		return err
	}
	return checkText("event ID", k.EventID)
}

// wrapErr describes a database error for operation op, adding what to do
// for the common mistake of a missing migration.
func wrapErr(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "42P01", "3F000": // undefined_table, invalid_schema_name
			return fmt.Errorf("pgstore: %s: the store's tables are missing; call (*Store).Migrate (or apply pgstore.Migrations) first: %w", op, err)
		}
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}

// querier is what the store's statements run on: the pool, or a host's
// transaction for EnqueueTx and CompleteTx.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
