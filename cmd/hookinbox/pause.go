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
	summary:  "pause a handler over every processor, audited with an actor and a reason",
	synopsis: "[-handler H] -actor WHO -reason WHY",
	about: []string{
		"Pauses the handler's jobs (-handler, default the default handler's) over every",
		"processor sharing the inbox: they keep being received and stored, keep their",
		"order and spend no attempts, and none starts until resume. Jobs running when it",
		"is paused finish. A breaker's pause (a handler's webhooks.Breaker) is replaced by",
		"this one, which only resume ends; a handler paused already stays as it is. The",
		"pause and its end are kept, with who and why: pauses lists them.",
	},
	define: pauseOrResume(true),
}

var resumeCmd = opsSpec{
	name:     "resume",
	summary:  "resume a paused handler, audited with an actor and a reason",
	synopsis: "[-handler H] -actor WHO -reason WHY",
	about: []string{
		"Ends the handler's pause, an operator's or a breaker's (then its jobs run again",
		"at once, without waiting for a probe). Exits 4 when the handler is not paused.",
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
		handler := fs.String("handler", "", "the handler to "+verb+" (default the default handler)")
		a := addAuditFlags(fs, audited)
		return func(c *opsContext) error {
			if err := a.check(); err != nil {
				return err
			}
			if err := webhooks.CheckHandlerName(*handler); err != nil {
				return usagef("-handler: %v", err)
			}
			ps, err := pauseStore(c)
			if err != nil {
				return err
			}
			if pause {
				err = ps.Pause(c.ctx, webhooks.PauseRequest{Handler: *handler, Cause: webhooks.PauseOperator, Actor: a.actor, Reason: auditReason(a), Now: c.now})
			} else {
				err = ps.Resume(c.ctx, webhooks.ResumeRequest{Handler: *handler, Cause: webhooks.PauseOperator, Actor: a.actor, Reason: auditReason(a), Now: c.now})
			}
			if errors.Is(err, webhooks.ErrNotPaused) {
				return fmt.Errorf("handler %s is not paused (%w)", handlerName(*handler), err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "%s handler %s at %s\n", done, handlerName(*handler), when(c.now))
			return nil
		}
	}
}

var pausesCmd = opsSpec{
	name:     "pauses",
	summary:  "list the handlers' pauses in force, then those that ended: who paused, why, and who resumed",
	synopsis: "[-ended N] [-json]",
	about: []string{
		"Lists the pauses in force, by handler (a breaker's with the end of its cool-down",
		"and its probe's lease while one runs), then the -ended latest that ended, with who",
		"ended them and why: the pauses' audit trail.",
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
			fmt.Fprintln(w, "HANDLER\tCAUSE\tSINCE\tUNTIL\tBY\tREASON\tENDED\tENDED BY\tEND REASON")
			for _, p := range pauses {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", handlerName(p.Handler), p.Cause, when(p.Since), when(p.Until),
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
