package sdkcheck

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/slack-go/slack"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

const base = "https://hooks.example.com/webhooks/"

func sign(t *testing.T, s *webhookstest.Signer, name string) *webhookstest.Delivery {
	t.Helper()
	d, err := s.Sign(base+name, webhookstest.Message{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func verify(t *testing.T, name, credential string, req *http.Request) webhooks.Verification {
	t.Helper()
	v, err := providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(credential)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: name}, req, 0)
	if err != nil {
		t.Fatalf("%s: the catalog refuses a delivery its SDK signed: %v", name, err)
	}
	return got
}

// Stripe: stripe-go verifies what webhookstest signs, and the catalog
// verifies what stripe-go signs.
func TestStripe(t *testing.T) {
	secret := webhookstest.NewSecret("stripe")
	s, err := webhookstest.NewSigner("stripe", secret)
	if err != nil {
		t.Fatal(err)
	}
	d := sign(t, s, "stripe")
	ev, err := webhook.ConstructEventWithOptions(d.Body, d.Header.Get("Stripe-Signature"), secret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		t.Fatalf("stripe-go refuses webhookstest's delivery: %v", err)
	}
	if ev.ID != d.EventID || string(ev.Type) != d.EventType {
		t.Fatalf("stripe-go read %s %s, webhookstest says %s %s", ev.ID, ev.Type, d.EventID, d.EventType)
	}

	payload := []byte(`{"id":"evt_sdk","object":"event","type":"customer.created","api_version":"2025-01-27"}`)
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: time.Now()})
	req, _ := http.NewRequest(http.MethodPost, base+"stripe", bytes.NewReader(signed.Payload))
	req.Header.Set("Stripe-Signature", signed.Header)
	got := verify(t, "stripe", secret, req)
	if got.EventID != "evt_sdk" || got.EventType != "customer.created" || got.APIVersion != "2025-01-27" {
		t.Fatalf("the catalog read %+v", got)
	}
}

// Slack: slack-go's SecretsVerifier accepts what webhookstest signs.
func TestSlack(t *testing.T) {
	secret := webhookstest.NewSecret("slack")
	s, err := webhookstest.NewSigner("slack", secret)
	if err != nil {
		t.Fatal(err)
	}
	d := sign(t, s, "slack")
	sv, err := slack.NewSecretsVerifier(d.Header, secret)
	if err != nil {
		t.Fatalf("slack-go: %v", err)
	}
	if _, err := sv.Write(d.Body); err != nil {
		t.Fatal(err)
	}
	if err := sv.Ensure(); err != nil {
		t.Fatalf("slack-go refuses webhookstest's delivery: %v", err)
	}
	bad := d.Header.Clone()
	bad.Set("X-Slack-Signature", "v0="+hex.EncodeToString(make([]byte, 32)))
	sv, _ = slack.NewSecretsVerifier(bad, secret)
	_, _ = sv.Write(d.Body)
	if sv.Ensure() == nil {
		t.Fatal("slack-go accepted a zero signature: the cross-check proves nothing")
	}
}

// Discord: discordgo's VerifyInteraction checks X-Signature-Ed25519 over
// X-Signature-Timestamp and the body, the scheme of interactions and of
// webhook events alike, so it verifies what webhookstest signs for both.
func TestDiscord(t *testing.T) {
	for _, name := range []string{"discord", "discord-events"} {
		s, err := webhookstest.NewKeySigner(name)
		if err != nil {
			t.Fatal(err)
		}
		key, err := hex.DecodeString(s.Credential())
		if err != nil {
			t.Fatal(err)
		}
		d := sign(t, s, name)
		req, err := d.Request(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !discordgo.VerifyInteraction(req, ed25519.PublicKey(key)) {
			t.Fatalf("discordgo refuses webhookstest's %s delivery", name)
		}
		body, _ := io.ReadAll(req.Body)
		if !bytes.Equal(body, d.Body) {
			t.Fatal("discordgo did not restore the body")
		}
		other, _ := webhookstest.NewKeySigner(name)
		req, _ = sign(t, other, name).Request(context.Background())
		if discordgo.VerifyInteraction(req, ed25519.PublicKey(key)) {
			t.Fatal("discordgo accepted another key's signature: the cross-check proves nothing")
		}
		req = request(t, &webhookstest.Delivery{Method: d.Method, URL: d.URL, Header: d.Header, Body: tampered(d.Body)})
		if discordgo.VerifyInteraction(req, ed25519.PublicKey(key)) {
			t.Fatal("discordgo accepted a tampered body")
		}
	}
}
