package webhookstest_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestSignEveryEntry signs the sample of every catalog entry and checks
// the delivery's shape; providers' own harness sends them to a Receiver.
func TestSignEveryEntry(t *testing.T) {
	t.Parallel()
	for _, name := range providers.Names() {
		s, err := webhookstest.NewKeySigner(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, s.Name())
		assert.NotEmpty(t, s.Credential(), name)
		if s.SNS() != nil {
			s.SNS().CertURL = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-test.pem"
		}
		d, err := s.Sign("https://hooks.example.com/webhooks/"+name, webhookstest.Message{})
		require.NoError(t, err, name)
		assert.Equal(t, http.MethodPost, d.Method, name)
		assert.NotEmpty(t, d.Body, name)
		assert.NotEmpty(t, d.EventID, name)
		assert.NotEmpty(t, d.Header.Get("Content-Type"), name)
		if webhookstest.SampleType(name) != "" && !strings.Contains(d.Header.Get("Content-Type"), "form") {
			assert.Contains(t, string(d.Body)+" "+strings.Join(headerValues(d.Header), " "), webhookstest.SampleType(name), "%s: the type is in the delivery", name)
		}
		// Another type is written where the entry reads it.
		if d2, err := s.Sign("https://hooks.example.com/webhooks/"+name, webhookstest.Message{Type: "custom.type"}); assert.NoError(t, err) && d.EventType != "" && name != "sentry" && name != "twilio" && name != "sns" {
			assert.Equal(t, "custom.type", d2.EventType, name)
		}
	}
}

func headerValues(h http.Header) []string {
	var out []string
	for _, vs := range h {
		out = append(out, vs...)
	}
	return out
}

func TestSignByName(t *testing.T) {
	t.Parallel()
	_, err := webhookstest.Sign("nope", "s", "https://x/", webhookstest.Message{})
	assert.ErrorContains(t, err, `unknown catalog entry "nope"`)
	_, err = webhookstest.NewSigner("discord", "abc")
	assert.ErrorContains(t, err, "NewKeySigner")
	_, err = webhookstest.NewSigner("stripe", "")
	assert.Error(t, err)
	_, err = webhookstest.Sign("stripe", "whsec_x", "/relative", webhookstest.Message{})
	assert.ErrorContains(t, err, "absolute")
	assert.Empty(t, webhookstest.NewSecret("nope"))
	assert.True(t, strings.HasPrefix(webhookstest.NewSecret("openai"), "whsec_"))

	// Errors never quote the secret.
	_, err = webhookstest.Sign("twitch", "short-secret-not-ok-because-it-is-way-longer-than-a-hundred-characters-allowed-by-twitch-eventsub-xxxxxxxxxxx", "https://x/webhooks/twitch", webhookstest.Message{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "short-secret")

	// A Stripe delivery built by NewRequest verifies by name.
	secret := webhookstest.NewSecret("stripe")
	req := webhookstest.NewRequest(t, "stripe", "https://hooks.example.com/webhooks/stripe", secret, webhookstest.Message{ID: "evt_42", Type: "invoice.paid"})
	v, err := providers.New("stripe", providers.Config{Secrets: webhooks.StaticSecrets(secret)})
	require.NoError(t, err)
	got, err := webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: "stripe"}, req, 0)
	require.NoError(t, err)
	assert.Equal(t, "evt_42", got.EventID)
	assert.Equal(t, "invoice.paid", got.EventType)
	assert.Equal(t, "2024-06-20", got.APIVersion, "Stripe's api_version is read")
}

// TestFormEncodedGitHub checks that a form-encoded GitHub delivery carries
// its Content-Type, as GitHub sends it.
func TestFormEncodedGitHub(t *testing.T) {
	t.Parallel()
	secret := "gh-secret"
	body := []byte("payload=" + url.QueryEscape(`{"zen":"Design for failure."}`))
	d, err := webhookstest.Sign("github", secret, "https://hooks.example.com/webhooks/github",
		webhookstest.Message{Type: "ping", Body: body, ContentType: "application/x-www-form-urlencoded"})
	require.NoError(t, err)
	assert.Equal(t, "application/x-www-form-urlencoded", d.Header.Get("Content-Type"))
	assert.Equal(t, "ping", d.Header.Get("X-GitHub-Event"))
	assert.NotEmpty(t, d.Header.Get("X-GitHub-Delivery"))
	req, err := d.Request(context.Background())
	require.NoError(t, err)
	v, err := providers.New("github", providers.Config{Secrets: webhooks.StaticSecrets(secret)})
	require.NoError(t, err)
	got, err := webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: "github"}, req, 0)
	require.NoError(t, err)
	assert.Equal(t, d.EventID, got.EventID)
}

func TestChallenges(t *testing.T) {
	t.Parallel()
	names := webhookstest.ChallengeNames()
	for _, want := range []string{"meta", "twitter", "dropbox", "twitch", "msgraph", "asana", "okta", "slack", "zoom", "discord", "sns"} {
		assert.Contains(t, names, want)
	}
	s, err := webhookstest.NewSigner("stripe", "whsec_x")
	require.NoError(t, err)
	_, err = s.Challenge("https://x/", "")
	assert.ErrorContains(t, err, "no endpoint check")
	s, err = webhookstest.NewSigner("twitter", "consumer-secret")
	require.NoError(t, err)
	c, err := s.Challenge("https://hooks.example.com/webhooks/twitter", "")
	require.NoError(t, err)
	assert.Equal(t, http.MethodGet, c.Delivery.Method)
	assert.Contains(t, c.Delivery.URL, "crc_token=")
	assert.Contains(t, string(c.Want.Body), `"response_token":"sha256=`)
}
