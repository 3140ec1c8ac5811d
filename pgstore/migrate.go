package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// schemaPlaceholder is how the migration files name the schema.
const schemaPlaceholder = "{{schema}}"

// MigrationsTable is the table, in the store's schema, where Migrate records
// the migrations it applied: version, name and applied_at.
const MigrationsTable = "pgstore_migrations"

// Migration is one versioned schema change.
type Migration struct {
	// Version orders migrations; it starts at 1 and has no gaps.
	Version int
	// Name is the file name without the version and extension, such as
	// "init" for 0001_init.sql.
	Name string
	// SQL is the statements to run, with the schema name filled in. It
	// assumes the schema exists and does not record itself in
	// MigrationsTable.
	SQL string
}

// Migrations returns the store's migrations in order, with schema filled in,
// for hosts that apply migrations with their own tool. Run them in order, each
// in a transaction, after CREATE SCHEMA for schema. Migrate does all of this
// by itself.
func Migrations(schema string) ([]Migration, error) {
	if err := validateSchema(schema); err != nil {
		return nil, err
	}
	ms, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	q := quoteSchema(schema)
	for i := range ms {
		ms[i].SQL = strings.ReplaceAll(ms[i].SQL, schemaPlaceholder, q)
	}
	return ms, nil
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the embedded files, unrendered.
func loadMigrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("pgstore: reading the embedded migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("pgstore: embedded migration %q is not named NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("pgstore: reading embedded migration %s: %w", e.Name(), err)
		}
		ms = append(ms, Migration{Version: v, Name: m[2], SQL: string(b)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("pgstore: embedded migrations must be numbered 1, 2, … without gaps; found version %d at position %d", m.Version, i+1)
		}
	}
	return ms, nil
}

// Migrate creates the schema and its tables, or brings them up to date,
// applying each migration not yet recorded in MigrationsTable in its own
// transaction. It is idempotent and safe to call from several instances at
// once: each transaction first takes an advisory lock derived from the schema
// name (pg_advisory_xact_lock), so concurrent callers apply every migration
// exactly once, one after the other. A database with migrations newer than
// this version of the package knows is left alone.
//
// The database user needs the CREATE privilege on the database when the
// schema does not exist yet, and on the schema to create the tables.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := Migrations(s.schema)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := s.migrate(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) migrate(ctx context.Context, m Migration) error {
	q := quoteSchema(s.schema)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return wrapMigrateErr(m, err)
	}
	// After Commit, Rollback does nothing.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLockKey(s.schema)); err != nil {
		return wrapMigrateErr(m, err)
	}
	// CREATE SCHEMA needs the CREATE privilege on the database even with IF
	// NOT EXISTS, so only ask for it when the schema is missing: a schema
	// made by an administrator is enough.
	var schemaExists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", s.schema).Scan(&schemaExists); err != nil {
		return wrapMigrateErr(m, err)
	}
	if !schemaExists {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA "+q); err != nil {
			return wrapMigrateErr(m, err)
		}
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+q+"."+MigrationsTable+` (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return wrapMigrateErr(m, err)
	}
	var applied bool
	err = tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+q+"."+MigrationsTable+" WHERE version = $1)", m.Version).Scan(&applied)
	if err != nil {
		return wrapMigrateErr(m, err)
	}
	if applied {
		return nil
	}
	// Without arguments pgx sends the file with the simple protocol, which
	// runs several statements.
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return wrapMigrateErr(m, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+q+"."+MigrationsTable+" (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
		return wrapMigrateErr(m, err)
	}
	return wrapMigrateErr(m, tx.Commit(ctx))
}

func wrapMigrateErr(m Migration, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pgstore: migration %04d_%s: %w", m.Version, m.Name, err)
}

// migrationLockKey is the advisory lock key for migrating schema: a hash,
// so stores in different schemas migrate independently.
func migrationLockKey(schema string) int64 {
	return int64(fnv64("hookinbox/pgstore/migrate:" + schema))
}

// AppliedMigrations returns the versions recorded in MigrationsTable, in
// order; none when Migrate never ran.
func (s *Store) AppliedMigrations(ctx context.Context) ([]int, error) {
	var exists bool
	err := s.pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", quoteSchema(s.schema)+"."+MigrationsTable).Scan(&exists)
	if err != nil || !exists {
		if err != nil {
			return nil, wrapErr("applied migrations", err)
		}
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, "SELECT version FROM "+quoteSchema(s.schema)+"."+MigrationsTable+" ORDER BY version")
	if err != nil {
		return nil, wrapErr("applied migrations", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, wrapErr("applied migrations", err)
	}
	return versions, nil
}
