package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/ops"
)

// writeJSON prints v indented, in the admin API's shapes.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var statsCmd = opsSpec{
	name:     "stats",
	summary:  "count the inbox's items by state, the backlog, and dead letters by provider and type",
	synopsis: "[-json]",
	about: []string{
		"Prints items by state (the succeeded count is estimated beyond a thousand),",
		"how many are due now and how long the oldest has waited, retries, leases held,",
		"the pending jobs a scoped pause holds, the pauses in force,",
		"and dead letters by provider and event type. -json prints the admin API's stats.",
		"With named handlers it counts each handler's jobs (waiting ones: queued behind",
		"their ordering key's head) and lists the held ordering keys, whose failing head",
		"holds the jobs behind it back: the deepest first, with the head's attempts and",
		"error, the next job and how long it has waited.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		asJSON := fs.Bool("json", false, "print JSON (the admin API's api/stats)")
		return func(c *opsContext) error {
			st, err := c.store.Stats(c.ctx, ops.StatsRequest{Now: c.now})
			if err != nil {
				return err
			}
			s := adminjson.NewStats(&st, c.now)
			if *asJSON {
				return writeJSON(c.stdout, s)
			}
			tw := table(c.stdout)
			fmt.Fprintln(tw, "STATE\tITEMS")
			for _, state := range []webhooks.State{webhooks.StatePending, webhooks.StateWaiting, webhooks.StateLeased, webhooks.StateSucceeded, webhooks.StateDead, webhooks.StateClosed} {
				note := ""
				if state == webhooks.StateSucceeded && st.SucceededEstimated {
					note = " (estimated)"
				}
				fmt.Fprintf(tw, "%s\t%d%s\n", state, st.States[state], note)
			}
			fmt.Fprintln(tw)
			oldest := "none due"
			if !st.OldestDue.IsZero() {
				oldest = "the oldest waiting " + roundAge(s.OldestDueAgeSeconds)
			}
			fmt.Fprintf(tw, "due now\t%d\t(%s)\n", st.Due, oldest)
			fmt.Fprintf(tw, "retrying\t%d\n", st.Retrying)
			fmt.Fprintf(tw, "leases held\t%d\n", st.LeasesHeld)
			if st.Parked > 0 {
				fmt.Fprintf(tw, "held by a pause\t%d\n", st.Parked)
			}
			named := slices.ContainsFunc(st.Handlers, func(h ops.HandlerStats) bool { return h.Handler != "" })
			if len(st.DeadLetters) > 0 {
				fmt.Fprintln(tw)
				if named {
					fmt.Fprintln(tw, "DEAD LETTERS\tHANDLER\tPROVIDER\tEVENT TYPE")
				} else {
					fmt.Fprintln(tw, "DEAD LETTERS\tPROVIDER\tEVENT TYPE")
				}
				for _, g := range st.DeadLetters {
					if named {
						fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", g.N, handlerName(g.Handler), clean(g.Provider), clean(g.EventType))
					} else {
						fmt.Fprintf(tw, "%d\t%s\t%s\n", g.N, clean(g.Provider), clean(g.EventType))
					}
				}
				if more := st.MoreDeadLetters; more.Groups > 0 {
					fmt.Fprintf(tw, "%d\t(%d more groups)\t\n", more.N, more.Groups)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if named {
				fmt.Fprintln(c.stdout)
				tw = table(c.stdout)
				fmt.Fprintln(tw, "HANDLER\tPENDING\tWAITING\tLEASED\tDEAD\tCLOSED\tDUE\tOLDEST DUE\tRETRYING")
				for _, h := range s.Handlers {
					oldest := "-"
					if !h.OldestDue.IsZero() {
						oldest = roundAge(h.OldestDueAgeSeconds) + " ago"
					}
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\n", handlerName(h.Handler), h.States["pending"], h.States["waiting"],
						h.States["leased"], h.States["dead"], h.States["closed"], h.Due, oldest, h.Retrying)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if len(s.HeldKeys) > 0 {
				fmt.Fprintln(c.stdout)
				tw = table(c.stdout)
				fmt.Fprintln(tw, "HELD KEY\tHANDLER\tPROVIDER\tTENANT\tDEPTH\tHEAD\tATTEMPTS\tNEXT\tWAITING\tHEAD ERROR")
				for _, k := range s.HeldKeys {
					next, waiting, last := "-", "-", ""
					if k.NextEventID != "" {
						next = oneLine(k.NextEventID, 40)
					}
					if !k.NextReceivedAt.IsZero() {
						waiting = roundAge(k.WaitingSeconds)
					}
					if e := k.HeadError; e != nil {
						last = clean(e.Class) + ": " + oneLine(e.Message, 80)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\n", oneLine(k.Key, 40), handlerName(k.Handler), clean(k.Provider), orNone(k.Tenant),
						k.Depth, oneLine(k.HeadEventID, 40), k.HeadAttempts, next, waiting, last)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if s.MoreHeldKeys > 0 {
				fmt.Fprintf(c.stdout, "and %d more held keys\n", s.MoreHeldKeys)
			}
			if len(s.Paused) > 0 {
				fmt.Fprintln(c.stdout)
				tw = table(c.stdout)
				fmt.Fprintln(tw, "PAUSED\tSCOPE\tCAUSE\tSINCE\tBY\tUNTIL\tREASON")
				for _, p := range s.Paused {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", handlerName(p.Handler), oneLine(p.PauseScope().String(), 80), clean(p.Cause), when(p.Since),
						oneLine(p.Actor, 40), when(p.Until), oneLine(p.Reason, 80))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			return nil
		}
	},
}

var deadLettersCmd = opsSpec{
	name:     "dead-letters",
	summary:  "list dead letters (or closed ones), newest first, with filters and paging",
	synopsis: "[-handler H] [-provider P] [-tenant T] [-type TYPE] [-error-class C] [-api-version V] [-from TIME] [-to TIME] [-closed] [-limit N] [-after CURSOR] [-json]",
	about: []string{
		"Lists dead letters newest first, -limit at a time; when more match, the last line",
		"gives the -after cursor of the next page. -closed lists the dead letters operators",
		"closed instead. -json prints the admin API's page of items. Each dead letter is",
		"one handler's job: -handler lists one handler's (-handler '' the default",
		"handler's), and a HANDLER column shows when the page holds named handlers' jobs.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		f := addFilterFlags(fs, "only dead letters")
		closed := fs.Bool("closed", false, "list closed dead letters (filtered by when they were closed)")
		limit := fs.Int("limit", 50, "items per page (1 to 500)")
		after := fs.String("after", "", "the cursor the previous page ended with")
		asJSON := fs.Bool("json", false, "print JSON (the admin API's api/dead-letters)")
		return func(c *opsContext) error {
			q, err := f.query(c.fs, c.now)
			if err != nil {
				return err
			}
			if *limit < 1 || *limit > 500 {
				return usagef("-limit %d: give 1 to 500", *limit)
			}
			if q.ErrorClass != "" && !knownClass(q.ErrorClass) {
				return usagef("-error-class %q: give one of error, permanent, panic, timeout, no_handler, lease_expired", q.ErrorClass)
			}
			q.Limit, q.After = *limit, *after
			if *closed {
				q.State = webhooks.StateClosed
			}
			page, err := c.store.List(c.ctx, q)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(c.stdout, adminjson.NewPage(&page))
			}
			if len(page.Items) == 0 {
				if *closed {
					fmt.Fprintln(c.stdout, "no closed dead letters match")
				} else {
					fmt.Fprintln(c.stdout, "no dead letters match")
				}
				return nil
			}
			tw := table(c.stdout)
			at := "DIED"
			if *closed {
				at = "CLOSED"
			}
			named := slices.ContainsFunc(page.Items, func(s ops.Summary) bool { return s.Handler != "" })
			if named {
				at += "\tHANDLER"
			}
			fmt.Fprintf(tw, "%s\tPROVIDER\tTENANT\tEVENT ID\tTYPE\tATTEMPTS\tLAST ERROR\n", at)
			for _, it := range page.Items {
				t, last := it.DeadAt, ""
				if *closed {
					t = it.ClosedAt
				}
				if it.LastError != nil {
					last = clean(string(it.LastError.Class)) + ": " + oneLine(it.LastError.Message, 80)
				}
				if it.Overtook != "" {
					last += " (ran past dead letter " + oneLine(it.Overtook, 40) + ")"
				}
				lead := when(t)
				if named {
					lead += "\t" + handlerName(it.Handler)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", lead, clean(it.Key.Provider), orNone(it.Key.Tenant), clean(it.Key.EventID), clean(it.EventType), it.Attempts, last)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if page.Next != "" {
				fmt.Fprintf(c.stdout, "\nmore: the next page is -after %s\n", page.Next)
			}
			return nil
		}
	},
}

func knownClass(c webhooks.FailureClass) bool {
	return slices.Contains([]webhooks.FailureClass{webhooks.FailureError, webhooks.FailurePermanent, webhooks.FailurePanic,
		webhooks.FailureTimeout, webhooks.FailureNoHandler, webhooks.FailureLeaseExpired}, c)
}

var showCmd = opsSpec{
	name:     "show",
	summary:  "show one item: its state, attempts, audit trail and quarantined deliveries",
	synopsis: "-provider P [-tenant T] -event-id ID [-payloads] [-json]",
	about: []string{
		"Shows the item with its attempt history, its audit trail (replays, closings,",
		"provider redeliveries) and the deliveries quarantined for reusing its event ID",
		"with another payload. Payloads and stored headers hold customers' data: they are",
		"shown only with -payloads (sizes and SHA-256 digests otherwise), as the admin",
		"page shows them only with admin.WithPayloads. An event with named handlers' jobs",
		"shows each job after it (JOBS): its state, ordering key, the dead letter it ran",
		"past if any, its attempts and audit trail.",
	},
	define: func(fs *flag.FlagSet) func(*opsContext) error {
		k := addKeyFlags(fs)
		payloads := fs.Bool("payloads", false, "show payloads and stored headers (customers' data)")
		asJSON := fs.Bool("json", false, "print JSON (the admin API's api/item)")
		return func(c *opsContext) error {
			key, err := k.key()
			if err != nil {
				return err
			}
			d, err := c.store.Get(c.ctx, key)
			if err != nil {
				return storeError(key, "", c.schema, err)
			}
			v := adminjson.NewDetail(&d, *payloads)
			if *asJSON {
				return writeJSON(c.stdout, v)
			}
			printDetail(c.stdout, &v)
			return nil
		}
	},
}

func printDetail(w io.Writer, d *adminjson.Detail) {
	tw := table(w)
	field := func(name, value string) { fmt.Fprintf(tw, "%s\t%s\n", name, value) }
	field("provider", clean(d.Provider))
	field("tenant", orNone(d.Tenant))
	field("event ID", clean(d.EventID))
	field("event type", clean(d.EventType))
	field("state", clean(d.State))
	field("attempts", fmt.Sprint(d.Attempts))
	if !d.NextAttemptAt.IsZero() {
		field("next attempt", when(d.NextAttemptAt))
	}
	if e := d.LastError; e != nil {
		field("last error", clean(e.Class)+": "+oneLine(e.Message, 200))
	}
	if d.APIVersion != "" {
		field("API version", clean(d.APIVersion))
	}
	field("received", when(d.ReceivedAt))
	if d.DuplicateCount > 0 {
		field("duplicates", fmt.Sprintf("%d, last %s", d.DuplicateCount, when(d.LastSeenAt)))
	}
	for _, t := range []struct {
		name string
		at   string
		set  bool
	}{{"succeeded", when(d.CompletedAt), !d.CompletedAt.IsZero()}, {"died", when(d.DeadAt), !d.DeadAt.IsZero()}, {"closed", when(d.ClosedAt), !d.ClosedAt.IsZero()}} {
		if t.set {
			field(t.name, t.at)
		}
	}
	field("payload", fmt.Sprintf("%d bytes, sha256 %s", d.PayloadBytes, d.PayloadSHA256))
	if d.TraceLink != "" {
		field("trace", clean(d.TraceLink))
	}
	tw.Flush()

	fmt.Fprintln(w, "\nATTEMPTS")
	if len(d.History) == 0 {
		fmt.Fprintln(w, "none yet")
	} else {
		tw = table(w)
		fmt.Fprintln(tw, "#\tOUTCOME\tSTARTED\tFINISHED\tWORKER\tVERSION\tERROR")
		for _, a := range d.History {
			msg := ""
			if a.ErrorClass != "" {
				msg = clean(a.ErrorClass) + ": " + oneLine(a.Error, 100)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Number, clean(a.Outcome), when(a.StartedAt), when(a.FinishedAt), clean(a.Worker), clean(a.Version), msg)
		}
		tw.Flush()
	}

	fmt.Fprintln(w, "\nAUDIT")
	if len(d.Audit) == 0 {
		fmt.Fprintln(w, "never replayed or closed")
	} else {
		tw = table(w)
		fmt.Fprintln(tw, "AT\tACTION\tACTOR\tREASON\tTICKET")
		for _, a := range d.Audit {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", when(a.At), clean(a.Action), clean(a.Actor), oneLine(a.Reason, 100), clean(a.Ticket))
		}
		tw.Flush()
	}

	fmt.Fprintln(w, "\nQUARANTINED DELIVERIES")
	if d.Conflicts == 0 {
		fmt.Fprintln(w, "none")
	} else {
		fmt.Fprintf(w, "%d deliveries reused the event ID with another payload; %d kept:\n", d.Conflicts, len(d.Quarantine))
	}
	for i, q := range d.Quarantine {
		fmt.Fprintf(w, "%d. received %s, verified with \"%s\", %d bytes, sha256 %s\n", i+1, when(q.ReceivedAt), clean(q.KeyID), q.PayloadBytes, q.PayloadSHA256)
		printBody(w, q.Headers, q.Payload)
	}

	if d.PayloadsShown {
		fmt.Fprintln(w, "\nPAYLOAD")
		printBody(w, d.Headers, d.Payload)
	}
	if len(d.Jobs) > 1 || len(d.Jobs) == 1 && d.Jobs[0].Handler != "" {
		fmt.Fprintln(w, "\nJOBS")
		for i := range d.Jobs {
			printJob(w, &d.Jobs[i])
		}
	}
}

// printJob prints one job of an event: its state, ordering and history.
func printJob(w io.Writer, j *adminjson.Job) {
	fmt.Fprintf(w, "\nJOB %s\n", handlerName(j.Handler))
	tw := table(w)
	field := func(name, value string) { fmt.Fprintf(tw, "%s\t%s\n", name, value) }
	field("state", clean(j.State))
	field("attempts", fmt.Sprint(j.Attempts))
	if !j.NextAttemptAt.IsZero() {
		field("next attempt", when(j.NextAttemptAt))
	}
	if e := j.LastError; e != nil {
		field("last error", clean(e.Class)+": "+oneLine(e.Message, 200))
	}
	if j.OrderingKey != "" {
		field("ordering key", oneLine(j.OrderingKey, 200))
	}
	if j.Ordered {
		field("ordered", "yes")
	}
	if j.Priority != 0 {
		field("priority", fmt.Sprint(j.Priority))
	}
	if j.Overtook != "" {
		field("overtook", "ran past the dead letter "+oneLine(j.Overtook, 200)+" of its key")
	}
	tw.Flush()
	for _, a := range j.History {
		msg := ""
		if a.ErrorClass != "" {
			msg = ": " + clean(a.ErrorClass) + ": " + oneLine(a.Error, 100)
		}
		fmt.Fprintf(w, "  attempt %d %s at %s by %s%s\n", a.Number, clean(a.Outcome), when(a.StartedAt), clean(a.Worker), msg)
	}
	for _, a := range j.Audit {
		fmt.Fprintf(w, "  %s %s by %s: %s %s\n", when(a.At), clean(a.Action), clean(a.Actor), oneLine(a.Reason, 100), clean(a.Ticket))
	}
}

// printBody prints stored headers, then the payload, indented and escaped.
func printBody(w io.Writer, h http.Header, b *adminjson.Body) {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range h[k] {
			fmt.Fprintf(w, "   %s: %s\n", clean(k), clean(v))
		}
	}
	switch {
	case b == nil:
	case b.Text != nil:
		text := cleanText(strings.TrimRight(*b.Text, "\n"))
		fmt.Fprintf(w, "   %s\n", strings.ReplaceAll(text, "\n", "\n   "))
	default:
		fmt.Fprintf(w, "   (%d bytes, not UTF-8; -json shows them in base64)\n", len(b.Base64))
	}
}

// roundAge writes seconds as a duration to the second (to the
// millisecond below one).
func roundAge(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
