package loadscenario

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// StripeBody returns a Stripe-shaped event of about size bytes (at least
// the event's fields): an invoice.paid event whose invoice carries line
// items up to the size.
func StripeBody(id string, size int, now time.Time) []byte {
	head := fmt.Sprintf(`{"id":%q,"object":"event","api_version":"2024-06-20","created":%d,"type":"invoice.paid","livemode":false,"pending_webhooks":1,"request":{"id":null,"idempotency_key":null},"data":{"object":{"id":"in_1PqRsT2eZvKYlo2C","object":"invoice","status":"paid","currency":"eur","amount_due":1200,"amount_paid":1200,"customer":"cus_QhYz8mK3nL0pA1","lines":{"object":"list","data":[`,
		id, now.Unix())
	const tail = `]}}}}`
	line := `{"id":"il_1PqRsT2eZvKYlo2C%04d","object":"line_item","amount":100,"currency":"eur","description":"1 × Widget (at €1.00 / month)","period":{"start":1719878400,"end":1722556800},"quantity":1}`
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len()+len(tail) < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, line, i)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// stripe signs Stripe-shaped webhooks with the catalog's stripe entry, as
// Stripe does, and verifies them with its verifier.
type stripe struct {
	signer   *webhookstest.Signer
	verifier webhooks.Verifier
	size     int
	seq      atomic.Int64
	prefix   string
}

func newStripe(size int) (*stripe, error) {
	secret := webhookstest.NewSecret("stripe")
	signer, err := webhookstest.NewSigner("stripe", secret)
	if err != nil {
		return nil, err
	}
	v, err := providers.New("stripe", providers.Config{Secrets: webhooks.StaticSecrets(secret)})
	if err != nil {
		return nil, err
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	return &stripe{signer: signer, verifier: v, size: size, prefix: "evt_" + hex.EncodeToString(r[:]) + "_"}, nil
}

// next returns a new signed delivery to url, with a fresh event ID.
func (s *stripe) next(url string) (*webhookstest.Delivery, error) {
	id := fmt.Sprintf("%s%09d", s.prefix, s.seq.Add(1))
	now := time.Now()
	return s.signer.Sign(url, webhookstest.Message{ID: id, Body: StripeBody(id, s.size, now), Timestamp: now})
}
