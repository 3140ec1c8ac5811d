package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/hookinbox/webhooks/admin"
	"github.com/hookinbox/webhooks/ops"
)

// auditFlags say who acts and why.
type auditFlags struct {
	actor, reason, ticket string
}

func addAuditFlags(fs *flag.FlagSet, action string) *auditFlags {
	a := &auditFlags{}
	fs.StringVar(&a.actor, "actor", "", "who "+action+", for the audit trail: your name or your service's (required)")
	fs.StringVar(&a.reason, "reason", "", "why, for the audit trail (required)")
	fs.StringVar(&a.ticket, "ticket", "", "a reference such as an incident or ticket number")
	return a
}

func (a *auditFlags) check() error {
	if strings.TrimSpace(a.actor) == "" || strings.TrimSpace(a.reason) == "" {
		return usagef("-actor and -reason are required: every replay and closing is audited with who and why")
	}
	return nil
}

var replayCmd = opsSpec{
	name:     "replay",
	summary:  "replay one dead letter, or those a query selects, audited with an actor and a reason",
	synopsis: "-actor WHO -reason WHY [-ticket T] (-provider P [-tenant T] -event-id ID | -limit N [filters]) [-dry-run] [-spread D] [-reset-attempts] [-json]",
	about: []string{
		"With -event-id, replays that dead letter: it becomes pending, due now, and runs",
		"again; the stored payload is never changed. Without it, replays up to -limit dead",
		"letters matching the filters (-provider, -tenant, -type, -error-class,",
		"-api-version, -from, -to), newest first; closed dead letters are never replayed.",
		"-dry-run lists what would be replayed and changes nothing. -spread 30m makes the",
		"replayed items fall due evenly over 30 minutes instead of all at once, so their",
		"handlers' downstream is not stampeded. Every replay is recorded in the item's",
		"audit trail with -actor, -reason and -ticket.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		f := addFilterFlags(fs, "replay only dead letters")
		eventID := fs.String("event-id", "", "the one dead letter to replay (with -provider and -tenant)")
		a := addAuditFlags(fs, "replays")
		limit := fs.Int("limit", 0, "the most dead letters a query replays (required without -event-id)")
		dryRun := fs.Bool("dry-run", false, "list what would be replayed, and change nothing")
		spread := fs.Duration("spread", 0, "spread the replayed items' due times evenly over this long from now")
		reset := fs.Bool("reset-attempts", false, "give each item the retry policy's full budget of attempts again")
		asJSON := fs.Bool("json", false, "print JSON (the admin API's replay result)")
		return func(c *opsContext) error {
			if err := a.check(); err != nil {
				return err
			}
			if *spread < 0 {
				return usagef("-spread %v: it must not be negative", *spread)
			}
			req := ops.ReplayRequest{Actor: a.actor, Reason: a.reason, Ticket: a.ticket, ResetAttempts: *reset, DryRun: *dryRun, Spread: *spread, Now: c.now}
			what := ""
			if *eventID != "" {
				if given := f.given(c.fs); len(given) > 0 || *limit != 0 {
					return usagef("-event-id replays one item: %s filter a query, without -event-id", strings.Join(append(given, "-limit"), ", "))
				}
				key, err := (&keyFlags{provider: f.provider, tenant: f.tenant, eventID: *eventID}).key()
				if err != nil {
					return err
				}
				req.Key = key
				what = describeKey(key)
			} else {
				if *limit < 1 {
					return usagef("give -event-id to replay one dead letter, or -limit N to replay up to N matching the filters")
				}
				q, err := f.query(c.fs, c.now)
				if err != nil {
					return err
				}
				if q.ErrorClass != "" && !knownClass(q.ErrorClass) {
					return usagef("-error-class %q: give one of error, permanent, panic, timeout, no_handler, lease_expired", q.ErrorClass)
				}
				q.Limit = *limit
				req.Query = &q
			}
			res, err := c.store.Replay(c.ctx, req)
			if err != nil {
				if req.Query == nil {
					return storeError(req.Key, c.schema, err)
				}
				return err
			}
			if *asJSON {
				out := admin.ReplayResult{DryRun: *dryRun, Actor: a.actor, Count: len(res.Items), Items: make([]admin.Replayed, 0, len(res.Items))}
				for _, it := range res.Items {
					out.Items = append(out.Items, admin.Replayed{Key: admin.Key{Provider: it.Key.Provider, Tenant: it.Key.Tenant, EventID: it.Key.EventID}, DueAt: it.DueAt.UTC()})
				}
				return writeJSON(c.stdout, out)
			}
			switch {
			case len(res.Items) == 0:
				fmt.Fprintln(c.stdout, "no dead letters match: nothing replayed")
				return nil
			case what != "" && *dryRun:
				fmt.Fprintf(c.stdout, "dry run, nothing changed: would replay %s, due %s\n", what, when(res.Items[0].DueAt))
				return nil
			case what != "":
				fmt.Fprintf(c.stdout, "replayed %s, due %s\n", what, when(res.Items[0].DueAt))
				return nil
			}
			n := fmt.Sprintf("%d dead letters", len(res.Items))
			if len(res.Items) == 1 {
				n = "1 dead letter"
			}
			if *dryRun {
				fmt.Fprintf(c.stdout, "dry run, nothing changed: would replay %s as %s:\n", n, a.actor)
			} else {
				fmt.Fprintf(c.stdout, "replayed %s as %s:\n", n, a.actor)
			}
			tw := table(c.stdout)
			fmt.Fprintln(tw, "DUE\tPROVIDER\tTENANT\tEVENT ID")
			for _, it := range res.Items {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", when(it.DueAt), it.Key.Provider, orNone(it.Key.Tenant), it.Key.EventID)
			}
			return tw.Flush()
		}
	},
}

var closeCmd = opsSpec{
	name:     "close",
	summary:  "close one dead letter on purpose, audited with an actor and a reason",
	synopsis: "-provider P [-tenant T] -event-id ID -actor WHO -reason WHY [-ticket T]",
	about: []string{
		"Closes the dead letter: it is kept, with its closing in its audit trail, until",
		"purge -closed-older-than removes it, and no bulk replay ever takes it again.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		k := addKeyFlags(fs)
		a := addAuditFlags(fs, "closes")
		return func(c *opsContext) error {
			key, err := k.key()
			if err != nil {
				return err
			}
			if err := a.check(); err != nil {
				return err
			}
			if err := c.store.Close(c.ctx, ops.CloseRequest{Key: key, Actor: a.actor, Reason: a.reason, Ticket: a.ticket, Now: c.now}); err != nil {
				return storeError(key, c.schema, err)
			}
			fmt.Fprintf(c.stdout, "closed %s at %s\n", describeKey(key), when(c.now))
			return nil
		}
	},
}
