package pgstore

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// itemRow holds the columns of itemColumns as scanned.
type itemRow struct {
	provider, tenant, eventID, eventType string
	payload, headers, digest             []byte
	keyID, state                         string
	attempts                             int
	nextAttemptAt, leaseExpiresAt        *time.Time
	errClass, errMessage                 *string
	errAt                                *time.Time
	duplicateCount                       int64
	lastSeenAt                           time.Time
	occurredAt                           *time.Time
	receivedAt, updatedAt                time.Time
	completedAt, deadAt                  *time.Time
	apiVersion                           string
	closedAt                             *time.Time
	traceLink                            string
	handler                              string
	orderingKey                          *string
	orderVersion                         int64
	ordered                              bool
	seq                                  int64
	overtook                             *string
	priority                             int32
}

// dest returns lead, then the scan destinations in itemColumns order, in
// one slice.
func (r *itemRow) dest(lead ...any) []any {
	return r.columns(lead, &r.payload, &r.headers)
}

// columns returns lead, then the scan destinations in itemColumns order
// with body in place of the payload's and the headers' (summaryColumns
// has one column there).
func (r *itemRow) columns(lead []any, body ...any) []any {
	d := append(make([]any, 0, len(lead)+itemColumnCount), lead...)
	d = append(d, &r.provider, &r.tenant, &r.eventID, &r.eventType)
	d = append(d, body...)
	return append(d,
		&r.digest, &r.keyID, &r.state, &r.attempts, &r.nextAttemptAt, &r.leaseExpiresAt,
		&r.errClass, &r.errMessage, &r.errAt, &r.duplicateCount, &r.lastSeenAt,
		&r.occurredAt, &r.receivedAt, &r.updatedAt, &r.completedAt, &r.deadAt,
		&r.apiVersion, &r.closedAt, &r.traceLink,
		&r.handler, &r.orderingKey, &r.orderVersion, &r.ordered, &r.seq, &r.overtook, &r.priority,
	)
}

// scanSummary reads a row of summaryColumns (List); it is a pgx.RowToFunc.
func scanSummary(row pgx.CollectableRow) (ops.Summary, error) {
	var (
		r            itemRow
		payloadBytes int32
	)
	if err := row.Scan(r.columns(nil, &payloadBytes)...); err != nil {
		return ops.Summary{}, err
	}
	it, err := r.item()
	if err != nil {
		return ops.Summary{}, err
	}
	it.Payload = nil
	return ops.Summary{Item: it, PayloadBytes: int(payloadBytes)}, nil
}

// item converts the row. Times come back in UTC. Its errors name the item
// but not the operation; callers add that.
func (r *itemRow) item() (webhooks.Item, error) {
	it := webhooks.Item{
		Key:            webhooks.InboxKey{Provider: r.provider, Tenant: r.tenant, EventID: r.eventID},
		EventType:      r.eventType,
		Payload:        r.payload,
		KeyID:          r.keyID,
		State:          webhooks.State(r.state),
		Attempts:       r.attempts,
		NextAttemptAt:  timeOrZero(r.nextAttemptAt),
		LeaseExpiresAt: timeOrZero(r.leaseExpiresAt),
		DuplicateCount: int(r.duplicateCount),
		LastSeenAt:     r.lastSeenAt.UTC(),
		OccurredAt:     timeOrZero(r.occurredAt),
		ReceivedAt:     r.receivedAt.UTC(),
		UpdatedAt:      r.updatedAt.UTC(),
		CompletedAt:    timeOrZero(r.completedAt),
		DeadAt:         timeOrZero(r.deadAt),
		APIVersion:     r.apiVersion,
		ClosedAt:       timeOrZero(r.closedAt),
		TraceLink:      r.traceLink,
		Handler:        r.handler,
		Ordering:       webhooks.Ordering{Key: deref(r.orderingKey), Version: r.orderVersion},
		Ordered:        r.ordered,
		Seq:            r.seq,
		Overtook:       deref(r.overtook),
		Priority:       int(r.priority),
	}
	if it.Payload == nil {
		it.Payload = []byte{}
	}
	if len(r.digest) != sha256.Size {
		return webhooks.Item{}, fmt.Errorf("item %s has a %d-byte payload digest; the table was changed outside pgstore", it.Key, len(r.digest))
	}
	copy(it.PayloadSHA256[:], r.digest)
	h, err := decodeHeaders(r.headers)
	if err != nil {
		return webhooks.Item{}, fmt.Errorf("item %s has %w", it.Key, err)
	}
	it.Headers = h
	if r.errClass != nil {
		it.LastError = &webhooks.ErrorRecord{
			Class:   webhooks.FailureClass(*r.errClass),
			Message: deref(r.errMessage),
			At:      timeOrZero(r.errAt),
		}
	}
	return it, nil
}

// decodeHeaders reads a headers column: nil for NULL.
func decodeHeaders(b []byte) (http.Header, error) {
	if b == nil {
		return nil, nil
	}
	var h http.Header
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("unreadable headers (the table was changed outside pgstore): %w", err)
	}
	return h, nil
}

func timeOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// The range of timestamptz: from 4714-11-24 BC (Julian day 0) up to, not
// including, the year 294277.
var (
	minTimestamptz = time.Date(-4713, 11, 24, 0, 0, 0, 0, time.UTC)
	endTimestamptz = time.Date(294277, 1, 1, 0, 0, 0, 0, time.UTC)
)

// storableTime reports whether PostgreSQL's timestamptz can hold t.
func storableTime(t time.Time) bool {
	return !t.Before(minTimestamptz) && t.Before(endTimestamptz)
}

// occurredAt maps an envelope's OccurredAt to its column: NULL when it is
// unknown (zero) or outside the range timestamptz can hold. OccurredAt is
// the provider's claim, carried for the handler; an absurd one must not
// make the delivery unstorable (a 503 the provider would retry forever).
func occurredAt(t time.Time) *time.Time {
	if t.IsZero() || !storableTime(t) {
		return nil
	}
	return &t
}

// encodeHeaders returns h as JSON for the jsonb column, nil (NULL) for a nil
// header. jsonb cannot hold the character NUL, so a NUL byte in a header
// name or value is stored as U+FFFD, as is each byte of invalid UTF-8 (as
// encoding/json writes it). Names that become equal are merged, their values
// appended in name order. (net/http refuses NUL in requests, so only headers
// a host builds itself can hold one; bytes of invalid UTF-8 can arrive.)
//
// The JSON is a string, not a []byte: pgx sends a []byte as bytea ("\x…")
// where the parameter's type is not described by the server (the exec and
// simple_protocol exec modes), which jsonb refuses; a string is the JSON
// text in every mode.
func encodeHeaders(h http.Header) (*string, error) {
	if h == nil {
		return nil, nil
	}
	if !headersNeedCleaning(h) {
		return marshalHeaders(h)
	}
	clean := make(http.Header, len(h))
	for _, name := range slices.Sorted(maps.Keys(h)) {
		values := h[name]
		cv := make([]string, len(values))
		for i, v := range values {
			cv[i] = cleanJSONText(v)
		}
		cn := cleanJSONText(name)
		clean[cn] = append(clean[cn], cv...)
	}
	return marshalHeaders(clean)
}

func marshalHeaders(h http.Header) (*string, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("pgstore: encoding headers: %w", err)
	}
	text := string(b)
	return &text, nil
}

func headersNeedCleaning(h http.Header) bool {
	for name, values := range h {
		if !cleanJSONTextOK(name) {
			return true
		}
		for _, v := range values {
			if !cleanJSONTextOK(v) {
				return true
			}
		}
	}
	return false
}

func cleanJSONTextOK(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// cleanJSONText replaces NUL and each byte of invalid UTF-8 with U+FFFD.
func cleanJSONText(s string) string {
	if cleanJSONTextOK(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0 || (r == utf8.RuneError && size == 1) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
