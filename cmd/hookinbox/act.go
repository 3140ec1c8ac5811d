package main

import (
	"cmp"
	"flag"
	"fmt"
	"slices"
	"strings"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
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
	summary:  "replay one item, or the dead letters a query selects, audited with an actor and a reason",
	synopsis: "-actor WHO -reason WHY [-ticket T] (-provider P [-tenant T] -event-id ID [-handler H] | [-limit N] [filters] [-closed | -succeeded] [-after CURSOR]) [-to-handler H [-to-ordered] [-to-priority N]] [-dry-run] [-spread D | -rate R] [-keep-attempts] [-json]",
	about: []string{
		"With -event-id, replays that item: it becomes pending, due now, and runs again with",
		"the retry policy's whole budget (-keep-attempts: only what is left of it); the",
		"stored payload is never changed and its history keeps the earlier attempts. A dead",
		"letter, a closed one (the closing undone) and a succeeded item (run again) can be",
		"replayed so. Without -event-id, replays up to -limit dead letters matching the",
		"filters (-provider, -tenant, -type, -error-class, -api-version, -from, -to),",
		"newest first; closed or succeeded items only with -closed or -succeeded, never",
		"otherwise. A large replay goes a batch at a time, reporting its progress on",
		"stderr, and takes only the items it selected when it began: those replayed or",
		"closed by someone else meanwhile are skipped. Stopped halfway, it goes on with",
		"the -after cursor it printed (and the same flags); run again without it, it is",
		"a new replay of what is dead then (what it replayed is not, unless it died",
		"again). -dry-run lists what would be replayed and changes nothing. -spread 30m",
		"makes the replayed items fall due evenly over 30 minutes (at most 24h) instead of",
		"all at once, so their handlers' downstream is not stampeded; -rate 20 spaces them",
		"so that at most 20 a second fall due, however many processors run. Either way",
		"the replayed jobs go through their handlers' Limits like any other. Every replay is",
		"recorded in the item's audit trail with -actor, -reason and -ticket.",
		"",
		"An event has a job per handler, each replayed on its own: with -event-id,",
		"-handler names the job (default: the default handler's); a query replays the jobs",
		"of -handler only when it is given (-handler '' the default handler's). -to-handler",
		"replays the selected events to another handler instead, creating its job when the",
		"event has none (ordered with -to-ordered, of priority -to-priority among the",
		"handler's due jobs) or replaying it when it is finished: how",
		"old events reach a handler added after them. A query with -to-handler needs",
		"-handler, so that each event is taken once.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		f := addFilterFlags(fs, "replay only items")
		eventID := fs.String("event-id", "", "the one item to replay (with -provider and -tenant), dead, closed or succeeded")
		a := addAuditFlags(fs, "replays")
		limit := fs.Int("limit", ops.DefaultReplayLimit, fmt.Sprintf("the most items a query replays, at most %d", ops.MaxReplayLimit))
		closed := fs.Bool("closed", false, "replay closed dead letters instead of dead ones (undo closings)")
		succeeded := fs.Bool("succeeded", false, "replay succeeded items instead of dead letters (run them again; -from and -to bound when they completed)")
		after := fs.String("after", "", "go on with a replay stopped halfway: the cursor it printed")
		dryRun := fs.Bool("dry-run", false, "list what would be replayed, and change nothing")
		spread := fs.Duration("spread", 0, "spread the replayed items' due times evenly over this long from now (at most 24h)")
		rate := fs.Float64("rate", 0, "space the replayed items' due times so that at most this many a second fall due (not with -spread)")
		keep := fs.Bool("keep-attempts", false, "keep each item's attempt count: it gets only what is left of the retry policy's budget")
		asJSON := fs.Bool("json", false, "print JSON (the admin API's replay result)")
		toHandler := fs.String("to-handler", "", "replay the selected events to this handler, creating its job where the event has none")
		toOrdered := fs.Bool("to-ordered", false, "with -to-handler: the jobs it creates run in their ordering key's order")
		toPriority := fs.Int("to-priority", 0, "with -to-handler: the priority of the jobs it creates, from 0 to 1000: the one the handler's TypePriorities give their types")
		return func(c *opsContext) error {
			if err := a.check(); err != nil {
				return err
			}
			if err := webhooks.CheckHandlerName(*toHandler); err != nil {
				return usagef("-to-handler: %v", err)
			}
			switch {
			case *toHandler != "" && *keep:
				return usagef("-to-handler and -keep-attempts: a job replayed to another handler has no attempts of its own to keep")
			case *toOrdered && *toHandler == "":
				return usagef("-to-ordered needs -to-handler")
			case *toPriority != 0 && *toHandler == "":
				return usagef("-to-priority needs -to-handler")
			case *toPriority < 0 || *toPriority > webhooks.MaxTypePriority:
				return usagef("-to-priority %d: give a priority from 0 to %d", *toPriority, webhooks.MaxTypePriority)
			}
			if *spread < 0 || *spread > ops.MaxReplaySpread {
				return usagef("-spread %v: give a duration from 0 to %v", *spread, ops.MaxReplaySpread)
			}
			if *rate < 0 || *rate > webhooks.MaxLimitRate || *rate > 0 && *spread > 0 {
				return usagef("-rate %v: give items a second, above 0 and at most %g, and not with -spread", *rate, float64(webhooks.MaxLimitRate))
			}
			req := ops.ReplayRequest{Actor: a.actor, Reason: a.reason, Ticket: a.ticket, KeepAttempts: *keep, DryRun: *dryRun, Spread: *spread, Rate: *rate,
				ToHandler: *toHandler, ToOrdered: *toOrdered, ToPriority: *toPriority, Now: c.now}
			if *eventID != "" {
				if given := append(f.given(c.fs), givenFlags(c.fs, "limit", "closed", "succeeded", "after")...); len(given) > 0 {
					return usagef("-event-id replays one item: %s select the items of a query, without -event-id", strings.Join(given, ", "))
				}
				key, err := (&keyFlags{provider: f.provider, tenant: f.tenant, eventID: *eventID}).key()
				if err != nil {
					return err
				}
				if err := webhooks.CheckHandlerName(f.handler); err != nil {
					return usagef("-handler: %v", err)
				}
				if f.handler != "" && *toHandler != "" {
					return usagef("-handler and -to-handler: -to-handler names the job to replay (created when the event has none); leave -handler out")
				}
				req.Key, req.Handler = key, f.handler
				return replayOne(c, req, *asJSON)
			}
			if *limit < 1 || *limit > ops.MaxReplayLimit {
				return usagef("-limit %d: give 1 to %d", *limit, ops.MaxReplayLimit)
			}
			if *closed && *succeeded {
				return usagef("-closed and -succeeded: give one or the other")
			}
			q, err := f.query(c.fs, c.now)
			if err != nil {
				return err
			}
			if q.ErrorClass != "" && !knownClass(q.ErrorClass) {
				return usagef("-error-class %q: give one of error, permanent, panic, timeout, no_handler, lease_expired", q.ErrorClass)
			}
			q.Limit, q.After = *limit, *after
			switch {
			case *closed:
				q.State = webhooks.StateClosed
			case *succeeded:
				q.State = webhooks.StateSucceeded
			}
			if *toHandler != "" && q.Handler == nil {
				return usagef("-to-handler %s needs -handler: select the jobs of one handler, so that each event is taken once", *toHandler)
			}
			req.Query = &q
			return replayBulk(c, req, *asJSON)
		}
	},
}

// givenFlags returns those of names given on the command line, as -name.
func givenFlags(fs *flag.FlagSet, names ...string) []string {
	var given []string
	fs.Visit(func(fl *flag.Flag) {
		if slices.Contains(names, fl.Name) {
			given = append(given, "-"+fl.Name)
		}
	})
	return given
}

// replayOne replays the item req.Key.
func replayOne(c *opsContext, req ops.ReplayRequest, asJSON bool) error {
	res, err := c.store.Replay(c.ctx, req)
	if err != nil {
		return storeError(req.Key, cmp.Or(req.ToHandler, req.Handler), c.schema, err)
	}
	if asJSON {
		return writeJSON(c.stdout, adminjson.NewReplayResult(&res, req.Actor, req.DryRun))
	}
	what := describeJob(req.Key, res.Items[0].Handler)
	if req.DryRun {
		fmt.Fprintf(c.stdout, "dry run, nothing changed: would replay %s, due %s\n", what, when(res.Items[0].DueAt))
	} else {
		fmt.Fprintf(c.stdout, "replayed %s, due %s\n", what, when(res.Items[0].DueAt))
	}
	return nil
}

// replayBulk runs the bulk replay req to its end, a call (a batch) at a
// time, reporting its progress on stderr when it takes more than one.
func replayBulk(c *opsContext, req ops.ReplayRequest, asJSON bool) error {
	q := req.Query
	noun := map[webhooks.State]string{"": "dead letter", webhooks.StateClosed: "closed item", webhooks.StateSucceeded: "succeeded item"}[q.State]
	resumed := q.After != ""
	var (
		items []ops.Replayed
		last  ops.ReplayResult
	)
	for calls := 1; ; calls++ {
		res, err := c.store.Replay(c.ctx, req)
		if err != nil {
			if len(items) > 0 || q.After != "" {
				return fmt.Errorf("%w\nstopped after going through %d of the %d items selected (%d replayed by this run); go on with -after %s, or run the same command again",
					err, last.Done, last.Total, len(items), q.After)
			}
			return err
		}
		items = append(items, res.Items...)
		last = res
		if res.Next == "" {
			break
		}
		if calls == 1 || calls%10 == 0 {
			fmt.Fprintf(c.stderr, "hookinbox replay: %d of %d gone through…\n", res.Done, res.Total)
		}
		q.After = res.Next
	}
	if asJSON {
		out := adminjson.NewReplayResult(&ops.ReplayResult{Items: items, Done: last.Done, Total: last.Total}, req.Actor, req.DryRun)
		return writeJSON(c.stdout, out)
	}
	if len(items) == 0 {
		fmt.Fprintf(c.stdout, "no %ss match: nothing replayed\n", noun)
		return nil
	}
	n := fmt.Sprintf("%d %ss", len(items), noun)
	if len(items) == 1 {
		n = "1 " + noun
	}
	if req.DryRun {
		fmt.Fprintf(c.stdout, "dry run, nothing changed: would replay %s as %s:\n", n, clean(req.Actor))
	} else {
		fmt.Fprintf(c.stdout, "replayed %s as %s:\n", n, clean(req.Actor))
	}
	tw := table(c.stdout)
	named := slices.ContainsFunc(items, func(it ops.Replayed) bool { return it.Handler != "" })
	if named {
		fmt.Fprintln(tw, "DUE\tHANDLER\tPROVIDER\tTENANT\tEVENT ID")
	} else {
		fmt.Fprintln(tw, "DUE\tPROVIDER\tTENANT\tEVENT ID")
	}
	for _, it := range items {
		if named {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", when(it.DueAt), handlerName(it.Handler), clean(it.Key.Provider), orNone(it.Key.Tenant), clean(it.Key.EventID))
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", when(it.DueAt), clean(it.Key.Provider), orNone(it.Key.Tenant), clean(it.Key.EventID))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if skipped := last.Total - len(items); skipped > 0 && !resumed {
		fmt.Fprintf(c.stdout, "%d of the %d selected were skipped: they were replayed, closed or deleted meanwhile\n", skipped, last.Total)
	}
	return nil
}

var closeCmd = opsSpec{
	name:     "close",
	summary:  "close one dead letter on purpose, audited with an actor and a reason",
	synopsis: "-provider P [-tenant T] -event-id ID [-handler H] -actor WHO -reason WHY [-ticket T]",
	about: []string{
		"Closes the dead letter: it is kept, with its closing in its audit trail, until",
		"purge -closed-older-than removes it, and no bulk replay of dead letters takes it",
		"again. A closing made by mistake is undone by replaying the item (replay",
		"-event-id, or replay -closed for many). -handler names the job to close, for an",
		"event with several (default: the default handler's).",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		k := addKeyFlags(fs)
		handler := fs.String("handler", "", "the handler of the job to close (default the default handler)")
		a := addAuditFlags(fs, "closes")
		return func(c *opsContext) error {
			key, err := k.key()
			if err != nil {
				return err
			}
			if err := a.check(); err != nil {
				return err
			}
			if err := webhooks.CheckHandlerName(*handler); err != nil {
				return usagef("-handler: %v", err)
			}
			if err := c.store.CloseDeadLetter(c.ctx, ops.CloseRequest{Key: key, Handler: *handler, Actor: a.actor, Reason: a.reason, Ticket: a.ticket, Now: c.now}); err != nil {
				return storeError(key, *handler, c.schema, err)
			}
			fmt.Fprintf(c.stdout, "closed %s at %s\n", describeJob(key, *handler), when(c.now))
			return nil
		}
	},
}
