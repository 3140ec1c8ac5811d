// Package cursor encodes the dead-letter page cursors of memstore and
// pgstore, so their cursors look alike. Callers treat cursors as opaque.
package cursor

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// DeadLetter is the position after which a dead-letter page starts: the
// last item of the previous page, in newest-first order.
type DeadLetter struct {
	DeadAt time.Time
	Key    webhooks.InboxKey
}

type wire struct {
	T int64  `json:"t"`
	P string `json:"p"`
	N string `json:"n"`
	E string `json:"e"`
}

// String encodes the cursor as an opaque URL-safe string.
func (c DeadLetter) String() string {
	b, _ := json.Marshal(wire{T: c.DeadAt.UnixNano(), P: c.Key.Provider, N: c.Key.Tenant, E: c.Key.EventID})
	return base64.RawURLEncoding.EncodeToString(b)
}

// Parse decodes a cursor made by String. Any other string gives an error
// wrapping webhooks.ErrInvalidCursor.
func Parse(s string) (DeadLetter, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return DeadLetter{}, invalid()
	}
	var c wire
	if err := json.Unmarshal(b, &c); err != nil || c.P == "" || c.E == "" {
		return DeadLetter{}, invalid()
	}
	return DeadLetter{DeadAt: time.Unix(0, c.T).UTC(), Key: webhooks.InboxKey{Provider: c.P, Tenant: c.N, EventID: c.E}}, nil
}

func invalid() error {
	return fmt.Errorf("%w: it was not made by this store; start again without a cursor", webhooks.ErrInvalidCursor)
}

// Before reports whether an item dead at deadAt with key sorts before the
// cursor in newest-first order, that is, whether it belongs on a later page.
func (c DeadLetter) Before(deadAt time.Time, key webhooks.InboxKey) bool {
	if !deadAt.Equal(c.DeadAt) {
		return deadAt.Before(c.DeadAt)
	}
	return key.Compare(c.Key) < 0
}
