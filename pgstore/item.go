package pgstore

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	webhooks "github.com/hookinbox/webhooks"
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
}

// dest returns the scan destinations in itemColumns order.
func (r *itemRow) dest() []any {
	return []any{
		&r.provider, &r.tenant, &r.eventID, &r.eventType, &r.payload, &r.headers,
		&r.digest, &r.keyID, &r.state, &r.attempts, &r.nextAttemptAt, &r.leaseExpiresAt,
		&r.errClass, &r.errMessage, &r.errAt, &r.duplicateCount, &r.lastSeenAt,
		&r.occurredAt, &r.receivedAt, &r.updatedAt, &r.completedAt, &r.deadAt,
	}
}

// item converts the row. Times come back in UTC.
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
	}
	if it.Payload == nil {
		it.Payload = []byte{}
	}
	if len(r.digest) != sha256.Size {
		return webhooks.Item{}, fmt.Errorf("pgstore: item %s has a %d-byte payload digest; the table was changed outside pgstore", it.Key, len(r.digest))
	}
	copy(it.PayloadSHA256[:], r.digest)
	if r.headers != nil {
		var h http.Header
		if err := json.Unmarshal(r.headers, &h); err != nil {
			return webhooks.Item{}, fmt.Errorf("pgstore: item %s has unreadable headers (the table was changed outside pgstore): %w", it.Key, err)
		}
		it.Headers = h
	}
	if r.errClass != nil {
		it.LastError = &webhooks.ErrorRecord{
			Class:   webhooks.FailureClass(*r.errClass),
			Message: deref(r.errMessage),
			At:      timeOrZero(r.errAt),
		}
	}
	return it, nil
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

// nullTime maps the zero time to NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// encodeHeaders returns h as JSON for the jsonb column, nil (NULL) for a nil
// header. Invalid UTF-8 in values is stored as U+FFFD (net/http accepts only
// valid header bytes, so real requests are unaffected).
func encodeHeaders(h http.Header) ([]byte, error) {
	if h == nil {
		return nil, nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("pgstore: encoding headers: %w", err)
	}
	return b, nil
}
