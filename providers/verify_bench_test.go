package providers_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// Verification benchmarks, one per catalog provider, on 2 KiB
// Stripe-shaped JSON bodies. Each provider runs three ways, one after the
// other in the same run, so that they can be compared with
//
//	benchstat -col /impl bench.txt
//
//   - impl=floor: the scheme's primitive written by hand. For HMAC: a
//     pre-keyed hash state reset per request, the signed content, the
//     signature decoded from its header value and compared in constant
//     time. For Ed25519: ed25519.Verify of the signed message with a
//     decoded key. For Twilio: HMAC-SHA-1 of the URL and the canonical
//     parameter string, as for HMAC.
//   - impl=floor+digest: the floor and the SHA-256 of the body, the
//     idempotency digest the Receiver computes after verification
//     (Verification.PayloadSHA256): the least a receive costs beside the
//     signature. Verifiers leave the digest to the Receiver.
//   - impl=hookinbox: the provider's verifier, Verify on a request as the
//     gateway hands it over.

// benchBodySize is the size of the bodies verified.
const benchBodySize = 2048

// benchNow is the verifiers' clock: every timestamp is signed at it.
var benchNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// stripeShapedBody returns a pretty-printed Stripe-style event of exactly
// size bytes: "id" first and "type" last, as Stripe writes them, with
// extra top-level members (`"key": value` lines) before "type".
func stripeShapedBody(size int, extra ...string) []byte {
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
%s  "type": "invoice.paid"
}
`
	var members strings.Builder
	for _, m := range extra {
		members.WriteString("  " + m + ",\n")
	}
	end := fmt.Sprintf(tail, members.String())
	pad := size - len(head) - len(end)
	if pad < 0 {
		panic(fmt.Sprintf("stripeShapedBody: %d bytes do not fit in %d", len(head)+len(end), size))
	}
	return []byte(head + strings.Repeat("x", pad) + end)
}

// benchCase is one provider's verifier and a request it accepts.
type benchCase struct {
	verifier webhooks.Verifier
	req      *webhooks.Request
	floor    func(b *testing.B) func() bool // returns the hand-written check
}

// hmacBenchCase signs msg for opts and builds the preset's verifier, with
// the floor over the same signed content.
func hmacBenchCase(b *testing.B, opts webhooks.HMACOptions, secret string, msg webhookstest.SignedMessage) benchCase {
	b.Helper()
	opts.Clock = webhookstest.NewClock(benchNow)
	msg.Timestamp = benchNow
	if opts.Timestamp.Path != "" {
		msg.Timestamp = time.Time{} // the body carries it
	}
	if msg.URL == "" {
		msg.URL = "/webhooks/bench"
	}
	h, err := webhookstest.SignHMAC(opts, secret, msg)
	if err != nil {
		b.Fatal(err)
	}
	v, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets(secret))
	if err != nil {
		b.Fatal(err)
	}
	req := &webhooks.Request{Method: http.MethodPost, URL: &url.URL{Path: msg.URL}, Header: h, Body: msg.Body}

	key := []byte(secret)
	if opts.DecodeSecret != nil {
		if key, err = opts.DecodeSecret(key); err != nil {
			b.Fatal(err)
		}
	}
	// The signed content around the body, rendered once.
	before, after := signedContentAround(b, opts, h, msg)
	sigValue := signatureValue(h.Get(opts.SignatureHeader), opts)
	floor := func(*testing.B) func() bool {
		return hmacFloor(hashOf(opts.Algorithm), key, opts.Encoding == webhooks.EncodingBase64, sigValue, before, msg.Body, after)
	}
	return benchCase{verifier: v, req: req, floor: floor}
}

// signedContentAround renders the signed content's text before and after
// {body}.
func signedContentAround(b *testing.B, opts webhooks.HMACOptions, h http.Header, msg webhookstest.SignedMessage) ([]byte, []byte) {
	b.Helper()
	template := opts.SignedContent
	if template == "" {
		template = "{body}"
	}
	timestamp := h.Get(opts.Timestamp.Header)
	if opts.Timestamp.Key != "" {
		for item := range strings.SplitSeq(h.Get(opts.SignatureHeader), opts.ItemSeparator) {
			if k, v, _ := strings.Cut(item, opts.KeyValueSeparator); k == opts.Timestamp.Key {
				timestamp = v
			}
		}
	}
	r := strings.NewReplacer("{timestamp}", timestamp, "{id}", h.Get(opts.Event.IDHeader), "{method}", http.MethodPost, "{url}", msg.URL)
	before, after, ok := strings.Cut(template, "{body}")
	if !ok {
		b.Fatalf("template %q has no {body}", template)
	}
	return []byte(r.Replace(before)), []byte(r.Replace(after))
}

// signatureValue returns the encoded signature from a header value the
// way a hand-written check would find it: after the prefix, or the first
// signature item.
func signatureValue(header string, opts webhooks.HMACOptions) string {
	if opts.ItemSeparator == "" {
		return strings.TrimPrefix(header, opts.SignaturePrefix)
	}
	for item := range strings.SplitSeq(header, opts.ItemSeparator) {
		if k, v, _ := strings.Cut(item, opts.KeyValueSeparator); k == opts.SignatureKey {
			return v
		}
	}
	return ""
}

func hashOf(a crypto.Hash) func() hash.Hash {
	switch a {
	case crypto.SHA1:
		return sha1.New
	case crypto.SHA512:
		return sha512.New
	}
	return sha256.New
}

// hmacFloor returns a hand-written HMAC check: a pre-keyed state reset per
// call, the content written in pieces, the signature decoded into a fixed
// buffer and compared in constant time.
func hmacFloor(newHash func() hash.Hash, key []byte, b64 bool, sigValue string, before, body, after []byte) func() bool {
	mac := hmac.New(newHash, key)
	var sig, sum [sha512.Size + 2]byte
	return func() bool {
		var n int
		var err error
		if b64 {
			n, err = base64.StdEncoding.Decode(sig[:], []byte(sigValue))
		} else {
			n, err = hex.Decode(sig[:], []byte(sigValue))
		}
		mac.Reset()
		mac.Write(before)
		mac.Write(body)
		mac.Write(after)
		got := mac.Sum(sum[:0])
		return err == nil && hmac.Equal(got, sig[:n])
	}
}

// catalogBenchCase is a delivery of the entry's own sample, signed by
// webhookstest, for providers without a 2 KiB case: measured without a
// floor.
func catalogBenchCase(name string) (benchCase, error) {
	signer, err := webhookstest.NewKeySigner(name)
	if err != nil {
		return benchCase{}, err
	}
	d, err := signer.Sign("https://hooks.example.com/webhooks/"+name, webhookstest.Message{Timestamp: benchNow})
	if err != nil {
		return benchCase{}, err
	}
	v, err := providers.New(name, providers.Config{
		Secrets:   webhooks.StaticSecrets(signer.Credential()),
		PublicURL: "https://hooks.example.com",
		Clock:     webhookstest.NewClock(benchNow),
	})
	if err != nil {
		return benchCase{}, err
	}
	u, err := url.Parse(d.URL)
	if err != nil {
		return benchCase{}, err
	}
	u.Scheme, u.Host = "", ""
	return benchCase{verifier: v, req: &webhooks.Request{Method: d.Method, URL: u, Header: d.Header, Body: d.Body}}, nil
}

// benchCases returns a 2 KiB case, with its floor, for the providers that
// have one; BenchmarkVerify measures the others on their own samples.
func benchCases(b *testing.B) map[string]func() benchCase {
	whsec := "whsec_" + base64.StdEncoding.EncodeToString([]byte("bench-key-0123456789abcdef012345"))
	id := func(s string) string { return `"event_id": "` + s + `"` }
	hmacCase := func(opts func() webhooks.HMACOptions, secret string, msg webhookstest.SignedMessage) func() benchCase {
		return func() benchCase { return hmacBenchCase(b, opts(), secret, msg) }
	}
	body := stripeShapedBody(benchBodySize)
	keys, err := webhookstest.Ed25519KeyPairFromSeed([]byte("bench-seed-0123456789abcdef01234"))
	if err != nil {
		b.Fatal(err)
	}
	ed25519Case := func(opts func() providers.Ed25519Options, msg webhookstest.SignedMessage) func() benchCase {
		return func() benchCase { return ed25519BenchCase(b, opts(), keys, msg) }
	}
	return map[string]func() benchCase{
		"discord": ed25519Case(providers.DiscordInteractionsOptions, webhookstest.SignedMessage{
			Body: []byte(strings.Replace(string(stripeShapedBody(benchBodySize)), `"type": "invoice.paid"`, `"type": 2`, 1))}),
		"discord-events": ed25519Case(providers.DiscordWebhookEventsOptions, webhookstest.SignedMessage{
			Body: stripeShapedBody(benchBodySize, `"event": {"type": "APPLICATION_AUTHORIZED"}`)}),
		"github":         hmacCase(providers.GitHubOptions, "gh-secret", webhookstest.SignedMessage{ID: "72d3162e-cc78-11e3-81ab-4c9367dc0958", Type: "push", Body: body}),
		"gitlab-signing": hmacCase(providers.GitLabSigningOptions, whsec, webhookstest.SignedMessage{ID: "idem-1", Type: "Push Hook", Body: body}),
		"linear": hmacCase(providers.LinearOptions, "lin_wh_secret", webhookstest.SignedMessage{ID: "del-1", Type: "Issue",
			Body: stripeShapedBody(benchBodySize, `"webhookTimestamp": `+strconv.FormatInt(benchNow.UnixMilli(), 10))}),
		"paddle": hmacCase(providers.PaddleOptions, "pdl_ntfset_bench", webhookstest.SignedMessage{
			Body: stripeShapedBody(benchBodySize, id("evt_01h8bkrw6a3jgs5h9xw2a1mmd4"), `"event_type": "transaction.completed"`)}),
		"shopify": hmacCase(providers.ShopifyOptions, "shpss_bench", webhookstest.SignedMessage{ID: "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043", Type: "orders/create", Body: body}),
		"slack": hmacCase(providers.SlackOptions, "slack-secret", webhookstest.SignedMessage{
			Body: stripeShapedBody(benchBodySize, id("Ev08MFMKH6"), `"event": {"type": "message"}`)}),
		"standardwebhooks": hmacCase(providers.StandardWebhooksOptions, whsec, webhookstest.SignedMessage{ID: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", Body: body}),
		"standardwebhooks-ed25519": ed25519Case(providers.StandardWebhooksEd25519Options, webhookstest.SignedMessage{
			ID: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", Body: body}),
		"stripe": hmacCase(providers.StripeOptions, "whsec_bench", webhookstest.SignedMessage{Body: body}),
		"svix":   hmacCase(providers.SvixOptions, whsec, webhookstest.SignedMessage{ID: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", Body: body}),
		"twilio": func() benchCase { return twilioBenchCase(b) },
		"zoom": hmacCase(providers.ZoomOptions, "zoom-secret", webhookstest.SignedMessage{
			Body: stripeShapedBody(benchBodySize, `"event": "meeting.started"`)}),
	}
}

// ed25519BenchCase signs msg and builds the preset's verifier; the floor
// is ed25519.Verify of the signed message.
func ed25519BenchCase(b *testing.B, opts providers.Ed25519Options, keys webhookstest.Ed25519KeyPair, msg webhookstest.SignedMessage) benchCase {
	b.Helper()
	opts.Clock = webhookstest.NewClock(benchNow)
	msg.Timestamp = benchNow
	h, err := webhookstest.SignEd25519(opts, keys.Private, msg)
	if err != nil {
		b.Fatal(err)
	}
	v, err := providers.NewEd25519Verifier(opts, webhooks.StaticSecrets(keys.PublicKey(opts.PublicKeyFormat)))
	if err != nil {
		b.Fatal(err)
	}
	req := &webhooks.Request{Method: http.MethodPost, URL: &url.URL{Path: "/webhooks/bench"}, Header: h, Body: msg.Body}
	timestamp := h.Get(opts.Timestamp.Header)
	r := strings.NewReplacer("{timestamp}", timestamp, "{id}", h.Get(opts.Event.IDHeader))
	before, after, _ := strings.Cut(opts.SignedContent, "{body}")
	message := slices.Concat([]byte(r.Replace(before)), msg.Body, []byte(r.Replace(after)))
	sig := ed25519.Sign(keys.Private, message)
	floor := func(*testing.B) func() bool {
		return func() bool { return ed25519.Verify(keys.Public, message, sig) }
	}
	return benchCase{verifier: v, req: req, floor: floor}
}

// twilioBenchCase is an SMS status callback, a form post of 20
// parameters.
func twilioBenchCase(b *testing.B) benchCase {
	b.Helper()
	const token = "twilio-auth-token-0123456789abcd"
	params := url.Values{}
	for k, v := range map[string]string{
		"AccountSid": "AC8f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e", "ApiVersion": "2010-04-01",
		"Body": "Hello from the benchmark, with a message of some length.", "From": "+15017122661",
		"FromCity": "SAN FRANCISCO", "FromCountry": "US", "FromState": "CA", "FromZip": "94105",
		"MessageSid": "SM1f0e8ae6ade43cb3c0ce4525424e404f", "MessageStatus": "delivered",
		"MessagingServiceSid": "MG9752274e9e519418a7406176694466fa", "NumMedia": "0", "NumSegments": "1",
		"SmsMessageSid": "SM1f0e8ae6ade43cb3c0ce4525424e404f", "SmsSid": "SM1f0e8ae6ade43cb3c0ce4525424e404f",
		"SmsStatus": "delivered", "To": "+15558675310", "ToCity": "BROOKLYN", "ToCountry": "US", "ToState": "NY",
	} {
		params.Set(k, v)
	}
	msg := webhookstest.TwilioMessage{URL: "https://hooks.example.com/webhooks/twilio", Params: params}
	requestURL, body, h, err := webhookstest.SignTwilio(token, msg)
	if err != nil {
		b.Fatal(err)
	}
	v, err := providers.NewTwilioVerifier(providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, webhooks.StaticSecrets(token))
	if err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(requestURL)
	if err != nil {
		b.Fatal(err)
	}
	u.Scheme, u.Host = "", ""
	req := &webhooks.Request{Method: http.MethodPost, URL: u, Header: h, Body: body}
	signed := []byte(requestURL + webhookstest.TwilioParams(params))
	floor := func(*testing.B) func() bool {
		return hmacFloor(sha1.New, []byte(token), true, h.Get(providers.TwilioSignatureHeader), nil, signed, nil)
	}
	return benchCase{verifier: v, req: req, floor: floor}
}

// BenchmarkVerify verifies one request per operation for each catalog
// provider; see the top of this file for the three implementations.
// Providers without a 2 KiB case run on their webhookstest sample,
// impl=hookinbox alone.
func BenchmarkVerify(b *testing.B) {
	cases := benchCases(b)
	ctx := context.Background()
	route := webhooks.Route{Provider: "bench"}
	for _, name := range providers.Names() {
		var c benchCase
		if newCase, ok := cases[name]; ok {
			c = newCase()
			if _, err := c.verifier.Verify(ctx, route, c.req); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
		} else {
			var err error
			if c, err = catalogBenchCase(name); err == nil {
				_, err = c.verifier.Verify(ctx, route, c.req)
			}
			if err != nil {
				b.Run("provider="+name, func(b *testing.B) { b.Skipf("no benchmark case: %v", err) })
				continue
			}
		}
		if c.floor == nil {
			b.Run("provider="+name+"/impl=hookinbox", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.req.Body)))
				for b.Loop() {
					if _, err := c.verifier.Verify(ctx, route, c.req); err != nil {
						b.Fatal(err)
					}
				}
			})
			continue
		}
		floor := c.floor(b)
		if !floor() {
			b.Fatalf("%s: the floor does not verify", name)
		}
		b.Run("provider="+name+"/impl=floor", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.req.Body)))
			for b.Loop() {
				if !floor() {
					b.Fatal("floor failed")
				}
			}
		})
		b.Run("provider="+name+"/impl=floor+digest", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.req.Body)))
			for b.Loop() {
				if !floor() {
					b.Fatal("floor failed")
				}
				benchDigest = sha256.Sum256(c.req.Body)
			}
		})
		b.Run("provider="+name+"/impl=hookinbox", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.req.Body)))
			for b.Loop() {
				if _, err := c.verifier.Verify(ctx, route, c.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var benchDigest [sha256.Size]byte

// BenchmarkHMACFloor is the hand-written HMAC-SHA-256 check of a 2 KiB
// body alone (GitHub's scheme), beside SHA-256 of the body, the physical
// limit of anything that hashes it.
func BenchmarkHMACFloor(b *testing.B) {
	body := stripeShapedBody(benchBodySize)
	key := []byte("gh-secret")
	m := hmac.New(sha256.New, key)
	m.Write(body)
	sum := m.Sum(nil)
	for _, enc := range []struct {
		name   string
		b64    bool
		encode func([]byte) string
	}{{"hex", false, hex.EncodeToString}, {"base64", true, base64.StdEncoding.EncodeToString}} {
		floor := hmacFloor(sha256.New, key, enc.b64, enc.encode(sum), nil, body, nil)
		if !floor() {
			b.Fatal("the floor does not verify")
		}
		b.Run("impl=hmac-sha256-"+enc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !floor() {
					b.Fatal("floor failed")
				}
			}
		})
	}
	b.Run("impl=sha256", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			benchDigest = sha256.Sum256(body)
		}
	})
}
