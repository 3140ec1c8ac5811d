package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	webhooks "github.com/hookinbox/webhooks"
)

// pauseStore is the store as a webhooks.PauseStore (pgstore is one).
func pauseStore(c *opsContext) (webhooks.PauseStore, error) {
	ps, ok := c.store.(webhooks.PauseStore)
	if !ok {
		return nil, fmt.Errorf("the store (%T) cannot pause handlers", c.store)
	}
	return ps, nil
}

var pauseCmd = opsSpec{
	name:     "pause",
	summary:  "pause a handler, or some of its jobs, over every processor, audited with an actor and a reason",
	synopsis: "[-handler H|'*'] [-provider P [-tenant T]] [-types PATTERN] -actor WHO -reason WHY",
	about: []string{
		"Pauses the handler's jobs (-handler, default the default handler's; '*' every",
		"handler's) over every processor sharing the inbox: they keep being received and",
		"stored, keep their order and spend no attempts, and none starts until resume.",
		"-provider, -tenant and -types (an event-type pattern: invoice.paid, invoice.*)",
		"pause only the jobs of those events; the handler's others run. Jobs running when",
		"it is paused finish. A breaker's pause (a handler's webhooks.Breaker) is replaced",
		"by a whole handler's pause, which only resume ends; a handler paused already in",
		"that scope stays as it is. The pause and its end are kept, with who and why:",
		"pauses lists them.",
	},
	define: pauseOrResume(true),
}

var resumeCmd = opsSpec{
	name:     "resume",
	summary:  "resume a paused handler, or some of its jobs, audited with an actor and a reason",
	synopsis: "[-handler H|'*'] [-provider P [-tenant T]] [-types PATTERN] -actor WHO -reason WHY",
	about: []string{
		"Ends the handler's pause of the scope given (-provider, -tenant, -types as pause",
		"took them; none: the whole handler's), an operator's or a breaker's (then its",
		"jobs run again at once, without waiting for a probe). Exits 4 when the handler is",
		"not paused in that scope.",
	},
	define: pauseOrResume(false),
}

// pauseOrResume defines the flags and the run of pause, or of resume.
func pauseOrResume(pause bool) func(fs *flag.FlagSet) func(*opsContext) error {
	verb, done, audited := "resume", "resumed", "resumes"
	if pause {
		verb, done, audited = "pause", "paused", "pauses"
	}
	return func(fs *flag.FlagSet) func(*opsContext) error {
		handler := fs.String("handler", "", "the handler to "+verb+" (default the default handler; '*' every handler)")
		var scope webhooks.PauseScope
		fs.StringVar(&scope.Provider, "provider", "", "only the jobs of this provider's events")
		fs.StringVar(&scope.Tenant, "tenant", "", "only the jobs of this tenant's events (needs -provider)")
		fs.StringVar(&scope.Types, "types", "", "only the jobs of the event types this pattern matches (invoice.paid, invoice.*)")
		a := addAuditFlags(fs, audited)
		return func(c *opsContext) error {
			if err := a.check(); err != nil {
				return err
			}
			if *handler != webhooks.EveryHandler {
				if err := webhooks.CheckHandlerName(*handler); err != nil {
					return usagef("-handler: %v", err)
				}
			}
			if err := scope.Check(); err != nil {
				return usagef("%v", err)
			}
			ps, err := pauseStore(c)
			if err != nil {
				return err
			}
			if pause {
				err = ps.Pause(c.ctx, webhooks.PauseRequest{Handler: *handler, Scope: scope, Cause: webhooks.PauseOperator, Actor: a.actor, Reason: auditReason(a), Now: c.now})
			} else {
				err = ps.Resume(c.ctx, webhooks.ResumeRequest{Handler: *handler, Scope: scope, Cause: webhooks.PauseOperator, Actor: a.actor, Reason: auditReason(a), Now: c.now})
			}
			of := ""
			if !scope.IsZero() {
				of = " (" + clean(scope.String()) + ")"
			}
			if errors.Is(err, webhooks.ErrNotPaused) {
				return fmt.Errorf("handler %s%s is not paused (%w)", handlerName(*handler), of, err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "%s handler %s%s at %s\n", done, handlerName(*handler), of, when(c.now))
			return nil
		}
	}
}

var pausesCmd = opsSpec{
	name:     "pauses",
	summary:  "list the handlers' pauses in force, then those that ended: who paused, why, and who resumed",
	synopsis: "[-ended N] [-json]",
	about: []string{
		"Lists the pauses in force, by handler and scope (a breaker's with the end of its",
		"cool-down and its probe's lease while one runs), then the -ended latest that",
		"ended, with who ended them and why: the pauses' audit trail.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		ended := fs.Int("ended", 20, "how many of the pauses that ended to list, the latest first")
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *opsContext) error {
			if *ended < 0 {
				return usagef("-ended %d: give 0 or more", *ended)
			}
			ps, err := pauseStore(c)
			if err != nil {
				return err
			}
			pauses, err := ps.Pauses(c.ctx, *ended)
			if err != nil {
				return err
			}
			if *asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(pauses)
			}
			if len(pauses) == 0 {
				fmt.Fprintln(c.stdout, "no pause in force or on record")
				return nil
			}
			w := table(c.stdout)
			fmt.Fprintln(w, "HANDLER\tSCOPE\tCAUSE\tSINCE\tUNTIL\tBY\tREASON\tENDED\tENDED BY\tEND REASON")
			for _, p := range pauses {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", handlerName(p.Handler), oneLine(p.Scope.String(), 80), p.Cause, when(p.Since), when(p.Until),
					oneLine(p.Actor, 40), oneLine(p.Reason, 80), when(p.EndedAt), oneLine(p.EndedBy, 40), oneLine(p.EndReason, 80))
			}
			return w.Flush()
		}
	},
}

// auditReason is the reason, with the ticket when there is one.
func auditReason(a *auditFlags) string {
	if a.ticket == "" {
		return a.reason
	}
	return a.reason + " (ticket " + a.ticket + ")"
}
