package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

var migrateCmd = opsSpec{
	name:       "migrate",
	summary:    "create the inbox's tables, or bring them up to date",
	synopsis:   "[-dsn DSN] [-schema S]",
	unmigrated: true,
	about: []string{
		"Applies every migration the schema lacks, each in its own transaction under an",
		"advisory lock, so running it beside a starting server is safe. It is what",
		"pgstore's Migrate does at a server's start.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		return func(c *opsContext) error {
			before, err := c.pg.AppliedMigrations(c.ctx)
			if err != nil {
				return err
			}
			if err := c.pg.Migrate(c.ctx); err != nil {
				return err
			}
			after, err := c.pg.AppliedMigrations(c.ctx)
			if err != nil {
				return err
			}
			var applied []string
			for _, v := range after {
				if !slices.Contains(before, v) {
					applied = append(applied, fmt.Sprint(v))
				}
			}
			latest := 0
			if len(after) > 0 {
				latest = after[len(after)-1]
			}
			if len(applied) == 0 {
				fmt.Fprintf(c.stdout, "schema %s is up to date (migration %d)\n", c.schema, latest)
				return nil
			}
			fmt.Fprintf(c.stdout, "schema %s: applied migration %s; now at %d\n", c.schema, strings.Join(applied, ", "), latest)
			return nil
		}
	},
}

var purgeCmd = opsSpec{
	name:     "purge",
	summary:  "delete old succeeded items, old closed dead letters and expired replay keys (retention)",
	synopsis: "[-succeeded-older-than D] [-closed-older-than D] [-replay-keys] [-batch-size N]",
	about: []string{
		"Deletes what retention allows, in batches of short transactions, with each",
		"item's attempts, audit trail and quarantine. Give at least one of the three.",
		"Durations are as Go writes them (36h) or in days (30d). Once a succeeded item is",
		"deleted its event ID is forgotten: keep items longer than your providers",
		"redeliver. Pending, leased and dead items are never deleted.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		var succeeded, closed ageFlag
		fs.Var(&succeeded, "succeeded-older-than", "delete succeeded items that completed more than `age` ago (36h, 7d)")
		fs.Var(&closed, "closed-older-than", "delete closed dead letters closed more than `age` ago (90d, say)")
		replayKeys := fs.Bool("replay-keys", false, "delete expired replay keys")
		batch := fs.Int("batch-size", 1000, "rows per statement")
		return func(c *opsContext) error {
			if !succeeded.set && !closed.set && !*replayKeys {
				return usagef("nothing to purge: give -succeeded-older-than, -closed-older-than or -replay-keys")
			}
			if *batch < 1 {
				return usagef("-batch-size %d: give at least 1", *batch)
			}
			if succeeded.set {
				cutoff := c.now.Add(-succeeded.d)
				n, err := c.pg.DeleteSucceeded(c.ctx, cutoff, *batch)
				if err != nil {
					return fmt.Errorf("deleting succeeded items (%d deleted before the error): %w", n, err)
				}
				fmt.Fprintf(c.stdout, "deleted %d succeeded items completed before %s\n", n, when(cutoff))
			}
			if closed.set {
				cutoff := c.now.Add(-closed.d)
				n, err := c.pg.DeleteClosed(c.ctx, cutoff, *batch)
				if err != nil {
					return fmt.Errorf("deleting closed items (%d deleted before the error): %w", n, err)
				}
				fmt.Fprintf(c.stdout, "deleted %d closed dead letters closed before %s\n", n, when(cutoff))
			}
			if *replayKeys {
				n, err := c.pg.DeleteExpiredReplayKeys(c.ctx, c.now, *batch)
				if err != nil {
					return fmt.Errorf("deleting expired replay keys (%d deleted before the error): %w", n, err)
				}
				fmt.Fprintf(c.stdout, "deleted %d expired replay keys\n", n)
			}
			return nil
		}
	},
}
