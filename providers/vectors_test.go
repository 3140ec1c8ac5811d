package providers_test

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// Published vectors run through the generic HMAC verifier with a preset.

func TestGitHubDocumentedVector(t *testing.T) {
	t.Parallel()
	vec := loadVector(t, "github/validating-webhook-deliveries.json")
	sig := vec.Headers["X-Hub-Signature-256"]
	// Cross-check the vector itself with crypto/hmac.
	if want := "sha256=" + hexMAC(vec.Secret, vec.Payload); sig != want {
		t.Fatalf("vector signature %s does not match HMAC-SHA-256 of the payload %s", sig, want)
	}
	v := newVerifier(t, providers.GitHubOptions(), webhooks.StaticSecrets(vec.Secret), nil)

	for _, header := range []string{sig, "sha256=" + strings.ToUpper(strings.TrimPrefix(sig, "sha256="))} {
		got := verified(t)(v.Verify(context.Background(), testRoute, request(vec.Payload,
			"X-Hub-Signature-256", header,
			"X-GitHub-Delivery", ghDelivery,
			"X-GitHub-Event", ghEvent,
		)))
		want := webhooks.Verification{
			EventID:   ghDelivery,
			EventType: ghEvent,
			KeyID:     "static:0",
			// GitHub signs the body only.
			Unsigned: webhooks.UnsignedFields{EventID: true, EventType: true},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Verification = %+v, want %+v", got, want)
		}
	}
}

func TestStandardWebhooksVector(t *testing.T) {
	t.Parallel()
	vec := loadVector(t, "standardwebhooks/reference-vector.json")
	ts, err := strconv.ParseInt(vec.Headers["Webhook-Timestamp"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	signedAt := time.Unix(ts, 0).UTC()
	opts := providers.StandardWebhooksOptions()
	opts.Event.TypePath = "" // the vector's body has no type
	v := newVerifier(t, opts, webhooks.StaticSecrets(vec.Secret), webhookstest.NewClock(signedAt.Add(time.Minute)))

	req := request(vec.Payload)
	for k, val := range vec.Headers {
		req.Header.Set(k, val)
	}
	got := verified(t)(v.Verify(context.Background(), testRoute, req))
	want := webhooks.Verification{
		EventID:    vec.Headers["Webhook-Id"],
		OccurredAt: signedAt,
		KeyID:      "static:0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Verification = %+v, want %+v", got, want)
	}
}

func TestGitHubOptions(t *testing.T) {
	t.Parallel()
	got := providers.GitHubOptions()
	if got.SignatureHeader != "X-Hub-Signature-256" || got.SignaturePrefix != "sha256=" ||
		got.Algorithm != 0 || got.Encoding != webhooks.EncodingHex ||
		got.SignedContent != "{body}" || got.SignedContentFunc != nil ||
		got.Event.IDHeader != "X-GitHub-Delivery" || got.Event.TypeHeader != "X-GitHub-Event" ||
		got.Event.IDPath != "" || got.Event.IDFunc != nil || got.Event.IDFromBody || got.Event.TypeSuffixPath != "" ||
		got.Timestamp != (webhooks.TimestampSource{}) || got.ItemSeparator != "" {
		t.Errorf("GitHubOptions() = %+v", got)
	}
}
