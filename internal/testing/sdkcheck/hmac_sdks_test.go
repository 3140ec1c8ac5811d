package sdkcheck

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"
	"time"

	paddle "github.com/PaddleHQ/paddle-go-sdk/v4"
	"github.com/PagerDuty/go-pagerduty/webhookv3"
	"github.com/google/go-github/v74/github"
	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"
	"github.com/mailgun/mailgun-go/v4"
	razorpay "github.com/razorpay/razorpay-go/utils"

	"github.com/hookinbox/webhooks/webhookstest"
)

// GitHub: go-github's ValidatePayload accepts webhookstest's deliveries,
// JSON and form-encoded; go-github and the entry both accept GitHub's
// documented test values and refuse them tampered.
func TestGitHub(t *testing.T) {
	s := newSigner(t, "github")
	secret := []byte(s.Credential())
	form := url.Values{"payload": {`{"zen":"Keep it logically awesome.","hook_id":1}`}}.Encode()
	for _, msg := range []webhookstest.Message{{}, {ContentType: "application/x-www-form-urlencoded", Body: []byte(form)}} {
		d := sign(t, s, "github")
		if msg.Body != nil {
			var err error
			if d, err = s.Sign(base+"github", msg); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := github.ValidatePayload(request(t, d), secret); err != nil {
			t.Fatalf("go-github refuses webhookstest's delivery (%s): %v", d.Header.Get("Content-Type"), err)
		}
		bad := request(t, &webhookstest.Delivery{Method: d.Method, URL: d.URL, Header: d.Header, Body: tampered(d.Body)})
		if _, err := github.ValidatePayload(bad, secret); err == nil {
			t.Fatal("go-github accepted a tampered body: the cross-check proves nothing")
		}
	}

	var vec struct {
		Secret  string            `json:"secret"`
		Payload string            `json:"payload"`
		Headers map[string]string `json:"headers"`
	}
	loadVector(t, "github/validating-webhook-deliveries.json", &vec)
	sig := vec.Headers["X-Hub-Signature-256"]
	if err := github.ValidateSignature(sig, []byte(vec.Payload), []byte(vec.Secret)); err != nil {
		t.Fatalf("go-github refuses GitHub's documented values: %v", err)
	}
	h := http.Header{"X-Hub-Signature-256": {sig}, "X-Github-Delivery": {"72d3162e-cc78-11e3-81ab-4c9367dc0958"}, "X-Github-Event": {"ping"}, "Content-Type": {"application/json"}}
	if _, err := catalogVerify(t, "github", vec.Secret, newRequest(t, base+"github", []byte(vec.Payload), h)); err != nil {
		t.Fatalf("the entry refuses GitHub's documented values: %v", err)
	}
	if github.ValidateSignature(sig, []byte("Hello, World?"), []byte(vec.Secret)) == nil {
		t.Fatal("go-github accepted a tampered payload")
	}
	if _, err := catalogVerify(t, "github", vec.Secret, newRequest(t, base+"github", []byte("Hello, World?"), h)); err == nil {
		t.Fatal("the entry accepted a tampered payload")
	}
}

// Paddle: paddle-go-sdk's WebhookVerifier accepts webhookstest's delivery
// and refuses it tampered. The SDK cannot sign.
func TestPaddle(t *testing.T) {
	s := newSigner(t, "paddle")
	d := sign(t, s, "paddle")
	v := paddle.NewWebhookVerifier(s.Credential(), paddle.VerifierWithTimestampTolerance(5*time.Minute))
	if ok, err := v.Verify(request(t, d)); !ok || err != nil {
		t.Fatalf("paddle-go-sdk refuses webhookstest's delivery: %v %v", ok, err)
	}
	bad := request(t, &webhookstest.Delivery{Method: d.Method, URL: d.URL, Header: d.Header, Body: tampered(d.Body)})
	if ok, _ := v.Verify(bad); ok {
		t.Fatal("paddle-go-sdk accepted a tampered body: the cross-check proves nothing")
	}
	catalogAgrees(t, "paddle", s.Credential(), d)
}

// PagerDuty: go-pagerduty's webhookv3.VerifySignature accepts
// webhookstest's delivery and refuses it tampered. The SDK cannot sign.
func TestPagerDuty(t *testing.T) {
	s := newSigner(t, "pagerduty")
	d := sign(t, s, "pagerduty")
	if err := webhookv3.VerifySignature(request(t, d), s.Credential()); err != nil {
		t.Fatalf("go-pagerduty refuses webhookstest's delivery: %v", err)
	}
	bad := request(t, &webhookstest.Delivery{Method: d.Method, URL: d.URL, Header: d.Header, Body: tampered(d.Body)})
	if webhookv3.VerifySignature(bad, s.Credential()) == nil {
		t.Fatal("go-pagerduty accepted a tampered body: the cross-check proves nothing")
	}
	catalogAgrees(t, "pagerduty", s.Credential(), d)
}

// LINE: line-bot-sdk-go's ValidateSignature accepts webhookstest's
// delivery and refuses it tampered. The SDK cannot sign.
func TestLINE(t *testing.T) {
	s := newSigner(t, "line")
	d := sign(t, s, "line")
	sig := d.Header.Get("X-Line-Signature")
	if !webhook.ValidateSignature(s.Credential(), sig, d.Body) {
		t.Fatal("line-bot-sdk-go refuses webhookstest's delivery")
	}
	if webhook.ValidateSignature(s.Credential(), sig, tampered(d.Body)) {
		t.Fatal("line-bot-sdk-go accepted a tampered body: the cross-check proves nothing")
	}
	catalogAgrees(t, "line", s.Credential(), d)
}

// Razorpay: razorpay-go's VerifyWebhookSignature accepts webhookstest's
// delivery and refuses it tampered. The SDK cannot sign.
func TestRazorpay(t *testing.T) {
	s := newSigner(t, "razorpay")
	d := sign(t, s, "razorpay")
	sig := d.Header.Get("X-Razorpay-Signature")
	if !razorpay.VerifyWebhookSignature(string(d.Body), sig, s.Credential()) {
		t.Fatal("razorpay-go refuses webhookstest's delivery")
	}
	if razorpay.VerifyWebhookSignature(string(tampered(d.Body)), sig, s.Credential()) {
		t.Fatal("razorpay-go accepted a tampered body: the cross-check proves nothing")
	}
	catalogAgrees(t, "razorpay", s.Credential(), d)
}

// Mailgun: mailgun-go's VerifyWebhookSignature accepts the signature
// object of webhookstest's delivery and refuses it with another token.
// The SDK cannot sign.
func TestMailgun(t *testing.T) {
	s := newSigner(t, "mailgun")
	d := sign(t, s, "mailgun")
	var body struct {
		Signature mailgun.Signature `json:"signature"`
	}
	if err := jsonUnmarshal(d.Body, &body); err != nil {
		t.Fatal(err)
	}
	mg := mailgun.NewMailgun("example.com", "unused-api-key")
	mg.SetWebhookSigningKey(s.Credential())
	if ok, err := mg.VerifyWebhookSignature(body.Signature); !ok || err != nil {
		t.Fatalf("mailgun-go refuses webhookstest's delivery: %v %v", ok, err)
	}
	bad := body.Signature
	bad.Token = tamperedString(bad.Token)
	if ok, _ := mg.VerifyWebhookSignature(bad); ok {
		t.Fatal("mailgun-go accepted another token: the cross-check proves nothing")
	}
	// The entry agrees: it accepts the delivery and refuses it with the
	// other token (Mailgun signs the signature object, not the event).
	if _, err := catalogVerify(t, "mailgun", s.Credential(), request(t, d)); err != nil {
		t.Fatalf("the mailgun entry refuses the delivery mailgun-go accepts: %v", err)
	}
	other := bytes.Replace(d.Body, []byte(body.Signature.Token), []byte(bad.Token), 1)
	if _, err := catalogVerify(t, "mailgun", s.Credential(), request(t, &webhookstest.Delivery{Method: d.Method, URL: d.URL, Header: d.Header, Body: other})); err == nil {
		t.Fatal("the mailgun entry accepts another token mailgun-go refuses")
	}
}
