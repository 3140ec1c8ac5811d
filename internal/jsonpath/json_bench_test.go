package jsonpath

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchBody is a pretty-printed 2 KiB event, Stripe's shape: many short
// members, indentation, the type last.
func benchBody(b *testing.B) []byte {
	b.Helper()
	line := map[string]any{
		"id": "il_1NG8Du2eZvKYlo2CmzVeUuX4", "object": "line_item", "amount": 2000, "currency": "usd",
		"description": "1 × Gold Special (at $20.00 / month)", "period": map[string]any{"end": 1688681970, "start": 1686089970},
		"quantity": 1, "discountable": true, "proration": false, "subscription": nil,
	}
	object := map[string]any{
		"id": "in_1NG8Du2eZvKYlo2C9XkRfAcV", "object": "invoice", "account_country": "US", "amount_due": 2000,
		"amount_paid": 2000, "attempted": true, "billing_reason": "subscription_cycle", "currency": "usd",
		"customer": "cus_NffrFeUfNV2Hib", "customer_email": "jenny.rosen@example.com", "discount": nil,
		"hosted_invoice_url": "https://invoice.stripe.com/i/acct_1M2JTkLkdIwHu7ix/test_YWNjdF8xTTJKVGtMa2RJd0h1N2l4",
		"lines":              map[string]any{"object": "list", "data": []any{line, line}, "has_more": false, "url": "/v1/invoices/in_1NG8Du2eZvKYlo2C9XkRfAcV/lines"},
		"livemode":           false, "status": "paid", "total": 2000,
	}
	body, err := json.MarshalIndent(map[string]any{"data": map[string]any{"object": object, "previous_attributes": nil}}, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	head := `{
  "id": "evt_1NG8Du2eZvKYlo2CUI79vXWy",
  "object": "event",
  "api_version": "2024-06-20",
  "created": 1686089970,
  "note": "`
	tail := `",` + string(body[1:len(body)-1]) + `,
  "livemode": false,
  "pending_webhooks": 1,
  "type": "invoice.paid"
}`
	pad := 2048 - len(head) - len(tail)
	if pad < 0 {
		b.Fatalf("the body has %d bytes", len(head)+len(tail))
	}
	return []byte(head + strings.Repeat("x", pad) + tail)
}

// BenchmarkDocLookup reads the ID and type of a 2 KiB event: one scan
// that validates the whole body.
func BenchmarkDocLookup(b *testing.B) {
	body := benchBody(b)
	want := CompilePaths("id", "type")
	b.Run("impl=scan", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			d := Doc{Body: body, Want: want}
			if _, r := d.Lookup("id"); r != Found {
				b.Fatal(r)
			}
			if _, r := d.Lookup("type"); r != Found {
				b.Fatal(r)
			}
		}
	})
	b.Run("impl=encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, r := referenceLookup(body, "id"); r != Found {
				b.Fatal(r)
			}
		}
	})
}
