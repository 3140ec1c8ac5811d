// Package adminjson is the JSON of package admin's API, which the
// hookinbox command prints too (-json): one definition of each shape, in
// the module only. Package admin's documentation is the contract; a test
// there holds these types to it. Times are RFC 3339 in UTC; a time that is
// not set is left out.
package adminjson

import (
	"encoding/hex"
	"net/http"
	"time"
	"unicode/utf8"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// Key addresses an inbox item. An empty Tenant is the item of no tenant.
type Key struct {
	Provider string `json:"provider"`
	Tenant   string `json:"tenant"`
	EventID  string `json:"event_id"`
}

// KeyOf is k as the API shows it.
func KeyOf(k webhooks.InboxKey) Key {
	return Key{Provider: k.Provider, Tenant: k.Tenant, EventID: k.EventID}
}

// InboxKey is the item's key.
func (k Key) InboxKey() webhooks.InboxKey {
	return webhooks.InboxKey{Provider: k.Provider, Tenant: k.Tenant, EventID: k.EventID}
}

// Item is an inbox item (one job of an event) without its payload and
// headers.
type Item struct {
	Key
	// Handler is the job's handler, "" for the default handler.
	Handler   string `json:"handler"`
	EventType string `json:"event_type"`
	State     string `json:"state"`
	// Attempts counts the processing attempts the retry policy counted.
	Attempts       int          `json:"attempts"`
	NextAttemptAt  time.Time    `json:"next_attempt_at,omitzero"`
	LeaseExpiresAt time.Time    `json:"lease_expires_at,omitzero"`
	LastError      *ErrorRecord `json:"last_error,omitempty"`
	APIVersion     string       `json:"api_version,omitempty"`
	KeyID          string       `json:"key_id,omitempty"`
	TraceLink      string       `json:"trace_link,omitempty"`
	// PayloadSHA256 is the hex SHA-256 of the payload, PayloadBytes its
	// length: shown whether or not the payload is.
	PayloadSHA256  string    `json:"payload_sha256"`
	PayloadBytes   int       `json:"payload_bytes"`
	DuplicateCount int       `json:"duplicate_count"`
	OccurredAt     time.Time `json:"occurred_at,omitzero"`
	ReceivedAt     time.Time `json:"received_at,omitzero"`
	LastSeenAt     time.Time `json:"last_seen_at,omitzero"`
	UpdatedAt      time.Time `json:"updated_at,omitzero"`
	CompletedAt    time.Time `json:"completed_at,omitzero"`
	DeadAt         time.Time `json:"dead_at,omitzero"`
	ClosedAt       time.Time `json:"closed_at,omitzero"`
	// OrderingKey and OrderingVersion place the event among its object's
	// events; Ordered says the job runs in that order, Seq its arrival
	// order in the store, and Overtook names the event ID of an earlier
	// dead letter of its key (same handler, provider and tenant) that the
	// job ran past.
	OrderingKey     string `json:"ordering_key,omitempty"`
	OrderingVersion int64  `json:"ordering_version,omitempty"`
	Ordered         bool   `json:"ordered,omitempty"`
	Seq             int64  `json:"seq,omitempty"`
	Overtook        string `json:"overtook,omitempty"`
	// Priority is the job's priority among its handler's due jobs
	// (webhooks.Item.Priority), left out when 0.
	Priority int `json:"priority,omitempty"`
}

// ErrorRecord is an item's last failure.
type ErrorRecord struct {
	Class   string    `json:"class"`
	Message string    `json:"message"`
	At      time.Time `json:"at,omitzero"`
}

// NewItem is it as the API shows it.
func NewItem(it *webhooks.Item) Item {
	out := Item{
		Key:            KeyOf(it.Key),
		Handler:        it.Handler,
		EventType:      it.EventType,
		State:          string(it.State),
		Attempts:       it.Attempts,
		NextAttemptAt:  utc(it.NextAttemptAt),
		LeaseExpiresAt: utc(it.LeaseExpiresAt),
		APIVersion:     it.APIVersion,
		KeyID:          it.KeyID,
		TraceLink:      it.TraceLink,
		PayloadSHA256:  hex.EncodeToString(it.PayloadSHA256[:]),
		PayloadBytes:   len(it.Payload),
		DuplicateCount: it.DuplicateCount,
		OccurredAt:     utc(it.OccurredAt),
		ReceivedAt:     utc(it.ReceivedAt),
		LastSeenAt:     utc(it.LastSeenAt),
		UpdatedAt:      utc(it.UpdatedAt),
		CompletedAt:    utc(it.CompletedAt),
		DeadAt:         utc(it.DeadAt),
		ClosedAt:       utc(it.ClosedAt),

		OrderingKey:     it.Ordering.Key,
		OrderingVersion: it.Ordering.Version,
		Ordered:         it.Ordered,
		Seq:             it.Seq,
		Overtook:        it.Overtook,
		Priority:        it.Priority,
	}
	out.LastError = newErrorRecord(it.LastError)
	return out
}

func newErrorRecord(e *webhooks.ErrorRecord) *ErrorRecord {
	if e == nil {
		return nil
	}
	return &ErrorRecord{Class: string(e.Class), Message: e.Message, At: utc(e.At)}
}

// Body is a payload, shown only when the host allows it (WithPayloads):
// Text when it is valid UTF-8, Base64 otherwise.
type Body struct {
	Text   *string `json:"text,omitempty"`
	Base64 []byte  `json:"base64,omitempty"`
}

func newBody(b []byte) *Body {
	if utf8.Valid(b) {
		s := string(b)
		return &Body{Text: &s}
	}
	return &Body{Base64: b}
}

// Detail is an item with its history, audit trail and quarantined
// deliveries. Payload and Headers are set only when the host allows it
// (WithPayloads); PayloadsShown says whether it does.
type Detail struct {
	Item
	Payload       *Body       `json:"payload,omitempty"`
	Headers       http.Header `json:"headers,omitempty"`
	PayloadsShown bool        `json:"payloads_shown"`
	History       []Attempt   `json:"history"`
	Audit         []Audit     `json:"audit"`
	Quarantine    []Delivery  `json:"quarantine"`
	// Conflicts counts the deliveries that reused the event ID with
	// another payload, quarantined or not.
	Conflicts int `json:"conflicts"`
	// Jobs are the event's jobs, one per handler, ordered by handler, each
	// with its own history and audit trail; the first is the one Item,
	// History and Audit show.
	Jobs []Job `json:"jobs"`
}

// Job is one job of an event: its state, history and audit trail. Its
// PayloadBytes and PayloadSHA256 are the event's.
type Job struct {
	Item
	History []Attempt `json:"history"`
	Audit   []Audit   `json:"audit"`
}

// Attempt is one processing attempt.
type Attempt struct {
	Number     int       `json:"number"`
	Outcome    string    `json:"outcome"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	ErrorClass string    `json:"error_class,omitempty"`
	Error      string    `json:"error,omitempty"`
	Worker     string    `json:"worker,omitempty"`
	Version    string    `json:"version,omitempty"`
}

// Audit is a replay, closing or provider redelivery of an item.
type Audit struct {
	Action string    `json:"action"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Reason string    `json:"reason,omitempty"`
	Ticket string    `json:"ticket,omitempty"`
}

// Delivery is a quarantined delivery: one that reused the item's event ID
// with another payload. Payload and Headers as in Detail.
type Delivery struct {
	PayloadSHA256 string      `json:"payload_sha256"`
	PayloadBytes  int         `json:"payload_bytes"`
	KeyID         string      `json:"key_id,omitempty"`
	ReceivedAt    time.Time   `json:"received_at,omitzero"`
	Payload       *Body       `json:"payload,omitempty"`
	Headers       http.Header `json:"headers,omitempty"`
}

// NewDetail is d as the API shows it, with payloads and stored headers only
// when withPayloads is set.
func NewDetail(d *ops.Detail, withPayloads bool) Detail {
	out := Detail{
		Item:          NewItem(&d.Item),
		PayloadsShown: withPayloads,
		History:       make([]Attempt, 0, len(d.History)),
		Audit:         make([]Audit, 0, len(d.Audit)),
		Quarantine:    make([]Delivery, 0, len(d.Quarantine)),
		Conflicts:     d.Conflicts,
	}
	if withPayloads {
		out.Payload = newBody(d.Payload)
		out.Headers = d.Headers
	}
	out.History, out.Audit = newHistory(d.History), newAudit(d.Audit)
	jobs := d.Jobs
	if len(jobs) == 0 {
		// A store that gives no jobs has the one.
		jobs = []ops.Job{{Item: d.Item, History: d.History, Audit: d.Audit}}
	}
	out.Jobs = make([]Job, 0, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		it := NewItem(&j.Item)
		// A job's item holds no payload: its size and digest are the
		// event's.
		it.PayloadBytes, it.PayloadSHA256 = out.PayloadBytes, out.PayloadSHA256
		out.Jobs = append(out.Jobs, Job{Item: it, History: newHistory(j.History), Audit: newAudit(j.Audit)})
	}
	for _, q := range d.Quarantine {
		del := Delivery{
			PayloadSHA256: hex.EncodeToString(q.PayloadSHA256[:]),
			PayloadBytes:  len(q.Payload),
			KeyID:         q.KeyID,
			ReceivedAt:    utc(q.ReceivedAt),
		}
		if withPayloads {
			del.Payload = newBody(q.Payload)
			del.Headers = q.Headers
		}
		out.Quarantine = append(out.Quarantine, del)
	}
	return out
}

func newHistory(h []ops.Attempt) []Attempt {
	out := make([]Attempt, 0, len(h))
	for _, a := range h {
		out = append(out, Attempt{
			Number:     a.Number,
			Outcome:    string(a.Outcome),
			StartedAt:  utc(a.StartedAt),
			FinishedAt: utc(a.FinishedAt),
			ErrorClass: string(a.ErrorClass),
			Error:      a.Error,
			Worker:     a.Worker,
			Version:    a.Version,
		})
	}
	return out
}

func newAudit(au []ops.Audit) []Audit {
	out := make([]Audit, 0, len(au))
	for _, a := range au {
		out = append(out, Audit{Action: a.Action, At: utc(a.At), Actor: a.Actor, Reason: a.Reason, Ticket: a.Ticket})
	}
	return out
}

// Page is a page of dead letters (or closed items), newest first. Next is
// the cursor of the following page (the after parameter); empty on the
// last page.
type Page struct {
	Items []Item `json:"items"`
	Next  string `json:"next,omitempty"`
}

// NewPage is p as the API shows it.
func NewPage(p *ops.Page) Page {
	out := Page{Items: make([]Item, 0, len(p.Items)), Next: p.Next}
	for i := range p.Items {
		out.Items = append(out.Items, SummaryItem(&p.Items[i]))
	}
	return out
}

// SummaryItem is a listed item as the API shows it.
func SummaryItem(s *ops.Summary) Item {
	it := NewItem(&s.Item)
	it.PayloadBytes = s.PayloadBytes
	return it
}

// Stats counts what the inbox holds, as of AsOf.
type Stats struct {
	AsOf time.Time `json:"as_of"`
	// States counts items by state; the succeeded count may be an
	// estimate (SucceededEstimated).
	States             map[string]int64 `json:"states"`
	SucceededEstimated bool             `json:"succeeded_estimated"`
	// Due counts the items due now (the backlog); OldestDue is the due
	// time of the longest waiting, and OldestDueAgeSeconds how long ago
	// that was.
	Due                 int64     `json:"due"`
	OldestDue           time.Time `json:"oldest_due,omitzero"`
	OldestDueAgeSeconds float64   `json:"oldest_due_age_seconds"`
	// Parked counts the pending items a scoped pause holds.
	Parked     int64 `json:"parked"`
	Retrying   int64 `json:"retrying"`
	LeasesHeld int64 `json:"leases_held"`
	// DeadLetters counts dead letters by provider and event type, the
	// largest groups first, at most ops.DefaultDeadLetterGroups of them;
	// MoreDeadLetters counts the groups left out and their dead letters.
	DeadLetters     []Count `json:"dead_letters"`
	MoreDeadLetters More    `json:"more_dead_letters"`
	// Handlers counts each handler's jobs that have not succeeded ("" the
	// default handler, first).
	Handlers []HandlerStats `json:"handlers"`
	// HeldKeys are the ordering keys whose head failed with jobs waiting
	// behind it, the deepest first, at most ops.DefaultHeldKeys of them;
	// MoreHeldKeys counts those left out.
	HeldKeys     []HeldKey `json:"held_keys"`
	MoreHeldKeys int64     `json:"more_held_keys"`
	// Paused are the pauses in force, by handler, then scope: by an
	// operator or by a handler's breaker.
	Paused []Pause `json:"paused"`
}

// Pause is a pause in force (webhooks.Pause): of a handler, or of every
// handler ("*"), in a Scope.
type Pause struct {
	Handler string `json:"handler"`
	Scope
	Cause  string    `json:"cause"`
	Actor  string    `json:"actor"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Until is the end of a breaker's cool-down; ProbeUntil, while its
	// probe runs, when the probe's lease expires.
	Until      time.Time `json:"until,omitzero"`
	ProbeUntil time.Time `json:"probe_until,omitzero"`
}

// HandlerStats counts one handler's jobs. States leaves out succeeded
// jobs, which only Stats.States counts.
type HandlerStats struct {
	Handler             string           `json:"handler"`
	States              map[string]int64 `json:"states"`
	Due                 int64            `json:"due"`
	OldestDue           time.Time        `json:"oldest_due,omitzero"`
	OldestDueAgeSeconds float64          `json:"oldest_due_age_seconds"`
	Parked              int64            `json:"parked"`
	Retrying            int64            `json:"retrying"`
	LeasesHeld          int64            `json:"leases_held"`
}

// HeldKey is an ordering key held by a failing head. The head and the
// next job are events of the key's provider and tenant; WaitingSeconds is
// how long the next one has waited since it was received.
type HeldKey struct {
	Handler        string       `json:"handler"`
	Provider       string       `json:"provider"`
	Tenant         string       `json:"tenant"`
	Key            string       `json:"key"`
	Depth          int64        `json:"depth"`
	HeadEventID    string       `json:"head_event_id"`
	HeadAttempts   int          `json:"head_attempts"`
	HeadError      *ErrorRecord `json:"head_error,omitempty"`
	NextEventID    string       `json:"next_event_id,omitempty"`
	NextReceivedAt time.Time    `json:"next_received_at,omitzero"`
	WaitingSeconds float64      `json:"waiting_seconds"`
}

// More counts the groups a bounded list left out, and the items they
// hold; both are zero when the list is complete.
type More struct {
	Groups int64 `json:"groups"`
	Count  int64 `json:"count"`
}

// Count is a number of dead letters sharing a handler, a provider and an
// event type.
type Count struct {
	Handler   string `json:"handler"`
	Provider  string `json:"provider"`
	EventType string `json:"event_type"`
	Count     int64  `json:"count"`
}

// NewStats is s, counted at now, as the API shows it.
func NewStats(s *ops.Stats, now time.Time) Stats {
	out := Stats{
		AsOf:               utc(now),
		States:             make(map[string]int64, len(s.States)),
		SucceededEstimated: s.SucceededEstimated,
		Due:                s.Due,
		Parked:             s.Parked,
		OldestDue:          utc(s.OldestDue),
		Retrying:           s.Retrying,
		LeasesHeld:         s.LeasesHeld,
		DeadLetters:        make([]Count, 0, len(s.DeadLetters)),
		MoreDeadLetters:    More{Groups: s.MoreDeadLetters.Groups, Count: s.MoreDeadLetters.N},
	}
	for st, n := range s.States {
		out.States[string(st)] = n
	}
	if !s.OldestDue.IsZero() {
		out.OldestDueAgeSeconds = max(0, now.Sub(s.OldestDue).Seconds())
	}
	for _, c := range s.DeadLetters {
		out.DeadLetters = append(out.DeadLetters, Count{Handler: c.Handler, Provider: c.Provider, EventType: c.EventType, Count: c.N})
	}
	out.Handlers = make([]HandlerStats, 0, len(s.Handlers))
	for _, h := range s.Handlers {
		hs := HandlerStats{Handler: h.Handler, States: make(map[string]int64, len(h.States)), Due: h.Due, Parked: h.Parked,
			OldestDue: utc(h.OldestDue), Retrying: h.Retrying, LeasesHeld: h.LeasesHeld}
		for st, n := range h.States {
			hs.States[string(st)] = n
		}
		if !h.OldestDue.IsZero() {
			hs.OldestDueAgeSeconds = max(0, now.Sub(h.OldestDue).Seconds())
		}
		out.Handlers = append(out.Handlers, hs)
	}
	out.HeldKeys = make([]HeldKey, 0, len(s.HeldKeys))
	for _, k := range s.HeldKeys {
		hk := HeldKey{Handler: k.Handler, Provider: k.Provider, Tenant: k.Tenant, Key: k.Key, Depth: k.Depth,
			HeadEventID: k.Head.EventID, HeadAttempts: k.HeadAttempts, HeadError: newErrorRecord(k.HeadError),
			NextEventID: k.Next.EventID, NextReceivedAt: utc(k.NextReceivedAt)}
		if !k.NextReceivedAt.IsZero() {
			hk.WaitingSeconds = max(0, now.Sub(k.NextReceivedAt).Seconds())
		}
		out.HeldKeys = append(out.HeldKeys, hk)
	}
	out.MoreHeldKeys = s.MoreHeldKeys
	out.Paused = make([]Pause, 0, len(s.Paused))
	for _, p := range s.Paused {
		out.Paused = append(out.Paused, Pause{Handler: p.Handler, Scope: ScopeOf(p.Scope), Cause: string(p.Cause), Actor: p.Actor, Reason: p.Reason,
			Since: utc(p.Since), Until: utc(p.Until), ProbeUntil: utc(p.ProbeUntil)})
	}
	return out
}

// Filter selects the items of a bulk replay, as the listing's query
// parameters do. Empty fields match everything.
type Filter struct {
	Provider string `json:"provider,omitempty"`
	// Tenant selects one tenant; NoTenant the items of no tenant.
	Tenant     string `json:"tenant,omitempty"`
	NoTenant   bool   `json:"no_tenant,omitempty"`
	EventType  string `json:"event_type,omitempty"`
	ErrorClass string `json:"error_class,omitempty"`
	APIVersion string `json:"api_version,omitempty"`
	// From and To bound when the items died (closed items: were closed;
	// succeeded ones: completed), From included, To excluded.
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
	// Handler selects the jobs of one handler, DefaultHandler those of
	// the default handler; neither, every handler's.
	Handler        string `json:"handler,omitempty"`
	DefaultHandler bool   `json:"default_handler,omitempty"`
}

// Query is the filter as an ops.Query, without state, limit and cursor.
func (f *Filter) Query() ops.Query {
	q := ops.Query{
		Provider:   f.Provider,
		EventType:  f.EventType,
		ErrorClass: webhooks.FailureClass(f.ErrorClass),
		APIVersion: f.APIVersion,
		From:       f.From,
		To:         f.To,
	}
	switch {
	case f.NoTenant:
		q.Tenant = new(string)
	case f.Tenant != "":
		q.Tenant = &f.Tenant
	}
	switch {
	case f.DefaultHandler:
		q.Handler = new(string)
	case f.Handler != "":
		q.Handler = &f.Handler
	}
	return q
}

// ReplayRequest is the body of POST api/replay: replay one job, dead,
// closed (undoing the closing) or succeeded (running it again): the job of
// Handler ("" the default handler), or, with ToHandler, the event's job of
// that handler, created (ordered with ToOrdered, of priority ToPriority)
// when the event has none.
// Reason is required; the actor comes from the host (WithActor). The job
// gets the retry policy's whole budget again unless KeepAttempts.
type ReplayRequest struct {
	Key
	Handler      string `json:"handler,omitempty"`
	Reason       string `json:"reason"`
	Ticket       string `json:"ticket,omitempty"`
	KeepAttempts bool   `json:"keep_attempts,omitempty"`
	ToHandler    string `json:"to_handler,omitempty"`
	ToOrdered    bool   `json:"to_ordered,omitempty"`
	ToPriority   int    `json:"to_priority,omitempty"`
}

// BulkReplayRequest is the body of POST api/bulk-replay (see package
// admin).
type BulkReplayRequest struct {
	Filter Filter `json:"filter"`
	// State is dead (the default), closed or succeeded.
	State        string `json:"state,omitempty"`
	Limit        int    `json:"limit,omitempty"`
	Reason       string `json:"reason"`
	Ticket       string `json:"ticket,omitempty"`
	KeepAttempts bool   `json:"keep_attempts,omitempty"`
	DryRun       bool   `json:"dry_run,omitempty"`
	Spread       string `json:"spread,omitempty"`
	// Rate spaces the replayed items' due times 1/rate seconds apart
	// (ops.ReplayRequest.Rate); not with spread.
	Rate  float64 `json:"rate,omitempty"`
	After string  `json:"after,omitempty"`
	// ToHandler replays the selected events to that handler (see
	// ops.ReplayRequest.ToHandler), ToOrdered making the jobs it creates
	// ordered and ToPriority giving them a priority; it needs the filter
	// to select one handler.
	ToHandler  string `json:"to_handler,omitempty"`
	ToOrdered  bool   `json:"to_ordered,omitempty"`
	ToPriority int    `json:"to_priority,omitempty"`
}

// ReplayResult lists the items a request replayed (on a dry run: would
// replay) and when each is due. For a bulk replay, Total is how many items
// it selected when it began, Done how many it has gone through so far,
// this request's included (Done is Total once the replay is complete, the
// items skipped included), and Next the cursor to continue with (see
// BulkReplayRequest); empty once the replay is complete.
type ReplayResult struct {
	DryRun bool       `json:"dry_run"`
	Actor  string     `json:"actor"`
	Count  int        `json:"count"`
	Items  []Replayed `json:"items"`
	Done   int        `json:"done"`
	Total  int        `json:"total"`
	Next   string     `json:"next,omitempty"`
}

// NewReplayResult is res, a replay by actor, as the API shows it.
func NewReplayResult(res *ops.ReplayResult, actor string, dryRun bool) ReplayResult {
	out := ReplayResult{DryRun: dryRun, Actor: actor, Count: len(res.Items), Items: make([]Replayed, 0, len(res.Items)),
		Done: res.Done, Total: res.Total, Next: res.Next}
	for _, it := range res.Items {
		out.Items = append(out.Items, Replayed{Key: KeyOf(it.Key), Handler: it.Handler, DueAt: utc(it.DueAt)})
	}
	return out
}

// Replayed is a replayed job and when it is due.
type Replayed struct {
	Key
	Handler string    `json:"handler"`
	DueAt   time.Time `json:"due_at"`
}

// CloseRequest is the body of POST api/close: close one dead letter (the
// job of Handler, "" the default handler) on purpose. Reason is required;
// the actor comes from the host.
type CloseRequest struct {
	Key
	Handler string `json:"handler,omitempty"`
	Reason  string `json:"reason"`
	Ticket  string `json:"ticket,omitempty"`
}

// CloseResult answers a closing.
type CloseResult struct {
	Key
	Handler string `json:"handler"`
	State   string `json:"state"`
	Actor   string `json:"actor"`
}

// Scope narrows a pause (webhooks.PauseScope); none of its fields, all
// of a handler's jobs.
type Scope struct {
	Provider string `json:"provider,omitempty"`
	Tenant   string `json:"tenant,omitempty"`
	Types    string `json:"types,omitempty"`
}

// ScopeOf returns the JSON of s.
func ScopeOf(s webhooks.PauseScope) Scope {
	return Scope{Provider: s.Provider, Tenant: s.Tenant, Types: s.Types}
}

// PauseScope returns the webhooks.PauseScope of s.
func (s Scope) PauseScope() webhooks.PauseScope {
	return webhooks.PauseScope{Provider: s.Provider, Tenant: s.Tenant, Types: s.Types}
}

// PauseRequest asks to pause a handler (or every handler, "*") in a
// Scope, or to resume it.
type PauseRequest struct {
	Handler string `json:"handler"`
	Scope
	Reason string `json:"reason"`
	Ticket string `json:"ticket,omitempty"`
}

// PauseResult answers a pause or a resume: the handler's jobs in the
// Scope are paused now, or not.
type PauseResult struct {
	Handler string `json:"handler"`
	Scope
	Paused bool      `json:"paused"`
	Actor  string    `json:"actor"`
	At     time.Time `json:"at"`
}

// ErrorResponse is the body of every error answer. Error is a code
// (bad_request, forbidden, not_found, method_not_allowed, not_dead,
// not_finished, not_paused, not_implemented, unsupported_media_type,
// internal); Message says what to
// do. An internal error's message gives a reference that the handler's
// log line of the failure holds, never the store's error.
type ErrorResponse struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
