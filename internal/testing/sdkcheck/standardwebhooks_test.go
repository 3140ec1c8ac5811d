package sdkcheck

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/option"
	openaiwebhooks "github.com/openai/openai-go/v3/webhooks"
	"github.com/resend/resend-go/v3"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	svix "github.com/svix/svix-webhooks/go"
)

// sdkWebhook is the part the Standard Webhooks and Svix libraries share.
type sdkWebhook interface {
	Verify(payload []byte, headers http.Header) error
	Sign(msgID string, timestamp time.Time, payload []byte) (string, error)
}

// The Standard Webhooks entries, under the library their provider
// documents: the Standard Webhooks reference library for the webhook-*
// senders, Svix's for the svix-* ones (Clerk and Resend document Svix's
// libraries; Replicate and OpenAI the Standard Webhooks scheme). Each
// library verifies webhookstest's delivery, the entry verifies the
// library's signature, and both refuse a tampered body.
func TestStandardWebhooksLibraries(t *testing.T) {
	for _, tc := range []struct {
		name, prefix string
		lib          func(secret string) (sdkWebhook, error)
	}{
		{"standardwebhooks", "Webhook", stdLib},
		{"gitlab-signing", "Webhook", stdLib},
		{"openai", "Webhook", stdLib},
		{"replicate", "Webhook", stdLib},
		{"svix", "Svix", svixLib},
		{"clerk", "Svix", svixLib},
		{"resend", "Svix", svixLib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSigner(t, tc.name)
			secret := s.Credential()
			wh, err := tc.lib(secret)
			if err != nil {
				t.Fatal(err)
			}
			d := sign(t, s, tc.name)
			if d.Header.Get(tc.prefix+"-Signature") == "" {
				t.Fatalf("webhookstest wrote no %s-Signature", tc.prefix)
			}
			if err := wh.Verify(d.Body, d.Header); err != nil {
				t.Fatalf("the library refuses webhookstest's delivery: %v", err)
			}
			if wh.Verify(tampered(d.Body), d.Header) == nil {
				t.Fatal("the library accepted a tampered body: the cross-check proves nothing")
			}

			body := []byte(`{"type":"sdk.signed","data":{"n":1}}`)
			now := time.Now()
			sig, err := wh.Sign("msg_sdk_1", now, body)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{"Content-Type": {"application/json"}}
			h.Set(tc.prefix+"-Id", "msg_sdk_1")
			h.Set(tc.prefix+"-Timestamp", strconv.FormatInt(now.Unix(), 10))
			h.Set(tc.prefix+"-Signature", sig)
			if tc.name == "gitlab-signing" {
				h.Set("X-Gitlab-Event", "Push Hook")
			}
			got, err := catalogVerify(t, tc.name, secret, newRequest(t, base+tc.name, body, h))
			if err != nil {
				t.Fatalf("the entry refuses the library's signature: %v", err)
			}
			if got.EventID != "msg_sdk_1" {
				t.Fatalf("the entry read event ID %q", got.EventID)
			}
			if _, err := catalogVerify(t, tc.name, secret, newRequest(t, base+tc.name, tampered(body), h)); err == nil {
				t.Fatal("the entry accepted a tampered body")
			}
		})
	}
}

func stdLib(secret string) (sdkWebhook, error)  { return standardwebhooks.NewWebhook(secret) }
func svixLib(secret string) (sdkWebhook, error) { return svix.NewWebhook(secret) }

// OpenAI: openai-go's VerifySignature accepts webhookstest's delivery and
// refuses it tampered. The SDK cannot sign (the Standard Webhooks library
// does, above).
func TestOpenAI(t *testing.T) {
	s := newSigner(t, "openai")
	d := sign(t, s, "openai")
	svc := openaiwebhooks.NewWebhookService(option.WithWebhookSecret(s.Credential()))
	if err := svc.VerifySignature(d.Body, d.Header); err != nil {
		t.Fatalf("openai-go refuses webhookstest's delivery: %v", err)
	}
	if svc.VerifySignature(tampered(d.Body), d.Header) == nil {
		t.Fatal("openai-go accepted a tampered body: the cross-check proves nothing")
	}
	catalogAgrees(t, "openai", s.Credential(), d)
}

// Resend: resend-go's Webhooks.Verify accepts webhookstest's delivery and
// refuses it tampered. The SDK cannot sign (Svix's library does, above).
func TestResend(t *testing.T) {
	s := newSigner(t, "resend")
	d := sign(t, s, "resend")
	client := resend.NewClient("re_unused")
	opts := func(body []byte) *resend.VerifyWebhookOptions {
		return &resend.VerifyWebhookOptions{
			Payload:       string(body),
			Headers:       resend.WebhookHeaders{Id: d.Header.Get("Svix-Id"), Timestamp: d.Header.Get("Svix-Timestamp"), Signature: d.Header.Get("Svix-Signature")},
			WebhookSecret: s.Credential(),
		}
	}
	if err := client.Webhooks.Verify(opts(d.Body)); err != nil {
		t.Fatalf("resend-go refuses webhookstest's delivery: %v", err)
	}
	if client.Webhooks.Verify(opts(tampered(d.Body))) == nil {
		t.Fatal("resend-go accepted a tampered body: the cross-check proves nothing")
	}
	catalogAgrees(t, "resend", s.Credential(), d)
}
