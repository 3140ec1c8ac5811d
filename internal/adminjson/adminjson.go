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

// Item is an inbox item without its payload and headers.
type Item struct {
	Key
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
	}
	if e := it.LastError; e != nil {
		out.LastError = &ErrorRecord{Class: string(e.Class), Message: e.Message, At: utc(e.At)}
	}
	return out
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
	for _, a := range d.History {
		out.History = append(out.History, Attempt{
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
	for _, a := range d.Audit {
		out.Audit = append(out.Audit, Audit{Action: a.Action, At: utc(a.At), Actor: a.Actor, Reason: a.Reason, Ticket: a.Ticket})
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
	Retrying            int64     `json:"retrying"`
	LeasesHeld          int64     `json:"leases_held"`
	// DeadLetters counts dead letters by provider and event type, the
	// largest groups first, at most ops.DefaultDeadLetterGroups of them;
	// MoreDeadLetters counts the groups left out and their dead letters.
	DeadLetters     []Count `json:"dead_letters"`
	MoreDeadLetters More    `json:"more_dead_letters"`
}

// More counts the groups a bounded list left out, and the items they
// hold; both are zero when the list is complete.
type More struct {
	Groups int64 `json:"groups"`
	Count  int64 `json:"count"`
}

// Count is a number of dead letters sharing a provider and an event type.
type Count struct {
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
		out.DeadLetters = append(out.DeadLetters, Count{Provider: c.Provider, EventType: c.EventType, Count: c.N})
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
	return q
}

// ReplayRequest is the body of POST api/replay: replay one item, dead,
// closed (undoing the closing) or succeeded (running it again). Reason is
// required; the actor comes from the host (WithActor). The item gets the
// retry policy's whole budget again unless KeepAttempts.
type ReplayRequest struct {
	Key
	Reason       string `json:"reason"`
	Ticket       string `json:"ticket,omitempty"`
	KeepAttempts bool   `json:"keep_attempts,omitempty"`
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
	After        string `json:"after,omitempty"`
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
		out.Items = append(out.Items, Replayed{Key: KeyOf(it.Key), DueAt: utc(it.DueAt)})
	}
	return out
}

// Replayed is a replayed item and when it is due.
type Replayed struct {
	Key
	DueAt time.Time `json:"due_at"`
}

// CloseRequest is the body of POST api/close: close one dead letter on
// purpose. Reason is required; the actor comes from the host.
type CloseRequest struct {
	Key
	Reason string `json:"reason"`
	Ticket string `json:"ticket,omitempty"`
}

// CloseResult answers a closing.
type CloseResult struct {
	Key
	State string `json:"state"`
	Actor string `json:"actor"`
}

// ErrorResponse is the body of every error answer. Error is a code
// (bad_request, forbidden, not_found, method_not_allowed, not_dead,
// not_finished, unsupported_media_type, internal); Message says what to
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
