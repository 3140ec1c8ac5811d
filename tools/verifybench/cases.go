package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// comparisons builds the requests, signed now (the libraries check their
// timestamps against the system clock), and each implementation.
func comparisons() ([]comparison, error) {
	body := stripeShapedBody(2048)
	now := time.Now()
	ctx := context.Background()
	route := webhooks.Route{Provider: "bench"}

	// Stripe.
	const stripeSecret = "whsec_benchcmp"
	stripeHeader := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: stripeSecret, Timestamp: now}).Header
	stripeVerifier, err := webhooks.NewHMACVerifier(providers.StripeOptions(), webhooks.StaticSecrets(stripeSecret))
	if err != nil {
		return nil, err
	}
	stripeReq := &webhooks.Request{Method: http.MethodPost, Header: http.Header{"Stripe-Signature": {stripeHeader}}, Body: body}
	ts := strconv.FormatInt(now.Unix(), 10)
	stripeSig := stripeHeader[strings.Index(stripeHeader, "v1=")+3:]
	stripe := comparison{provider: "stripe", impls: []impl{
		{"floor", hmacFloor(sha256.New, []byte(stripeSecret), false, stripeSig, []byte(ts+"."), body)},
		{"floor+digest", withDigest(hmacFloor(sha256.New, []byte(stripeSecret), false, stripeSig, []byte(ts+"."), body), body)},
		{"hookinbox", func() bool {
			v, err := stripeVerifier.Verify(ctx, route, stripeReq)
			return err == nil && v.EventType == "invoice.paid"
		}},
		{"stripe-go-ValidatePayload", func() bool {
			return webhook.ValidatePayload(body, stripeHeader, stripeSecret) == nil
		}},
		{"stripe-go-ConstructEvent", func() bool {
			e, err := webhook.ConstructEventWithOptions(body, stripeHeader, stripeSecret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
			return err == nil && e.Type == "invoice.paid"
		}},
	}}

	// Standard Webhooks.
	key := []byte("benchcmp-key-0123456789abcdef012")
	swhSecret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	msg := webhookstest.SignedMessage{ID: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", Body: body, Timestamp: now}
	swhHeader, err := webhookstest.SignHMAC(providers.StandardWebhooksOptions(), swhSecret, msg)
	if err != nil {
		return nil, err
	}
	swhVerifier, err := webhooks.NewHMACVerifier(providers.StandardWebhooksOptions(), webhooks.StaticSecrets(swhSecret))
	if err != nil {
		return nil, err
	}
	swhLib, err := standardwebhooks.NewWebhook(swhSecret)
	if err != nil {
		return nil, err
	}
	// The library reads lower-case names through Header.Get.
	swhReq := &webhooks.Request{Method: http.MethodPost, Header: swhHeader, Body: body}
	swhSig := strings.TrimPrefix(swhHeader.Get("Webhook-Signature"), "v1,")
	prefix := []byte(msg.ID + "." + ts + ".")
	swh := comparison{provider: "standardwebhooks", impls: []impl{
		{"floor", hmacFloor(sha256.New, key, true, swhSig, prefix, body)},
		{"floor+digest", withDigest(hmacFloor(sha256.New, key, true, swhSig, prefix, body), body)},
		{"hookinbox", func() bool {
			v, err := swhVerifier.Verify(ctx, route, swhReq)
			return err == nil && v.EventType == "invoice.paid"
		}},
		{"standard-webhooks-go", func() bool {
			return swhLib.Verify(body, swhHeader) == nil
		}},
	}}
	return []comparison{stripe, swh}, nil
}

// hmacFloor is the hand-written check BenchmarkHMACFloor in package
// providers measures: a pre-keyed state reset per call, the signature
// decoded into a fixed buffer, a constant-time compare.
func hmacFloor(newHash func() hash.Hash, key []byte, b64 bool, sigValue string, prefix, body []byte) func() bool {
	mac := hmac.New(newHash, key)
	var sig, sum [64]byte
	return func() bool {
		var n int
		var err error
		if b64 {
			n, err = base64.StdEncoding.Decode(sig[:], []byte(sigValue))
		} else {
			n, err = hex.Decode(sig[:], []byte(sigValue))
		}
		mac.Reset()
		mac.Write(prefix)
		mac.Write(body)
		return err == nil && hmac.Equal(mac.Sum(sum[:0]), sig[:n])
	}
}

// withDigest adds the SHA-256 of the body, the payload digest the
// Receiver computes after verification (verifiers leave it to it).
func withDigest(floor func() bool, body []byte) func() bool {
	return func() bool {
		digest := sha256.Sum256(body)
		return floor() && digest != [sha256.Size]byte{}
	}
}

// stripeShapedBody is the body of providers' BenchmarkVerify: a
// pretty-printed Stripe event of size bytes, "id" first, "type" last.
func stripeShapedBody(size int) []byte {
	const head = `{
  "id": "evt_1NG8Du2eZvKYlo2CUI79vXWy",
  "object": "event",
  "api_version": "2024-06-20",
  "created": 1686089970,
  "data": {
    "object": {
      "id": "in_1NG8Du2eZvKYlo2C9XkRfAcV",
      "object": "invoice",
      "account_country": "US",
      "account_name": "Acme, Inc.",
      "amount_due": 2000,
      "amount_paid": 2000,
      "amount_remaining": 0,
      "attempt_count": 1,
      "attempted": true,
      "billing_reason": "subscription_cycle",
      "collection_method": "charge_automatically",
      "currency": "usd",
      "customer": "cus_NffrFeUfNV2Hib",
      "customer_email": "jenny.rosen@example.com",
      "customer_name": "Jenny Rosen",
      "discount": null,
      "due_date": null,
      "ending_balance": 0,
      "hosted_invoice_url": "https://invoice.stripe.com/i/acct_1M2JTkLkdIwHu7ix/test_YWNjdF8xTTJKVGtMa2RJd0h1N2l4LF9OZmZySGlGWDRjN2R",
      "lines": {
        "object": "list",
        "data": [
          {
            "id": "il_1NG8Du2eZvKYlo2CmzVeUuX4",
            "object": "line_item",
            "amount": 2000,
            "currency": "usd",
            "description": "1 × Gold Special (at $20.00 / month)",
            "period": {
              "end": 1688681970,
              "start": 1686089970
            },
            "quantity": 1,
            "type": "subscription"
          }
        ],
        "has_more": false,
        "url": "/v1/invoices/in_1NG8Du2eZvKYlo2C9XkRfAcV/lines"
      },
      "livemode": false,
      "metadata": {
        "order_id": "6735",
        "note": "`
	const tail = `"
      },
      "number": "C1E7F0B3-0001",
      "paid": true,
      "status": "paid",
      "subscription": "sub_1NG8Du2eZvKYlo2CQ7L2pX9e",
      "subtotal": 2000,
      "tax": null,
      "total": 2000
    },
    "previous_attributes": null
  },
  "livemode": false,
  "pending_webhooks": 1,
  "request": {
    "id": null,
    "idempotency_key": null
  },
  "type": "invoice.paid"
}
`
	pad := size - len(head) - len(tail)
	if pad < 0 {
		panic(fmt.Sprintf("stripeShapedBody: %d bytes do not fit in %d", len(head)+len(tail), size))
	}
	return []byte(head + strings.Repeat("x", pad) + tail)
}
