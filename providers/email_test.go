package providers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// Mailgun and SendGrid sign their time at one place each: the Timestamp
// option takes only a window there.
func TestFixedTimestampOptions(t *testing.T) {
	t.Parallel()
	sendgrid, err := webhookstest.NewKeySigner("sendgrid")
	require.NoError(t, err)
	mailgunKey := webhookstest.NewSecret("mailgun")
	mailgun, err := webhookstest.NewSigner("mailgun", mailgunKey)
	require.NoError(t, err)
	build := map[string]func(ts webhooks.TimestampSource, clock webhooks.Clock) (webhooks.Verifier, error){
		"mailgun": func(ts webhooks.TimestampSource, clock webhooks.Clock) (webhooks.Verifier, error) {
			return providers.NewMailgunVerifier(providers.MailgunOptions{Timestamp: ts, Clock: clock}, webhooks.StaticSecrets(mailgunKey))
		},
		"sendgrid": func(ts webhooks.TimestampSource, clock webhooks.Clock) (webhooks.Verifier, error) {
			return providers.NewSendGridVerifier(providers.SendGridOptions{Timestamp: ts, Clock: clock}, webhooks.StaticSecrets(sendgrid.Credential()))
		},
	}
	signers := map[string]*webhookstest.Signer{"mailgun": mailgun, "sendgrid": sendgrid}
	documented := map[string]webhooks.TimestampSource{
		"mailgun":  {Path: providers.MailgunTimestampPath},
		"sendgrid": {Header: "x-twilio-email-event-webhook-timestamp"},
	}
	for name, newVerifier := range build {
		for _, bad := range []webhooks.TimestampSource{
			{Header: "Date"},
			{Path: "event-data.timestamp"},
			{Key: "t"},
			{Format: webhooks.TimestampRFC3339},
			{Tolerance: -time.Second},
		} {
			_, err := newVerifier(bad, nil)
			assert.Error(t, err, "%s: %+v", name, bad)
		}
		_, err := newVerifier(documented[name], nil)
		require.NoError(t, err, "%s: the documented source, named", name)

		now := time.Now()
		clock := webhookstest.NewClock(now)
		d, err := signers[name].Sign("https://hooks.example.com/webhooks/"+name, webhookstest.Message{Timestamp: now.Add(-10 * time.Minute)})
		require.NoError(t, err)
		verify := func(v webhooks.Verifier) error {
			req, err := d.Request(context.Background())
			require.NoError(t, err)
			_, err = webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: name}, req, 0)
			return err
		}
		v, err := newVerifier(webhooks.TimestampSource{}, clock)
		require.NoError(t, err)
		wantReason(t, verify(v), webhooks.ReasonTimestampExpired)
		v, err = newVerifier(webhooks.TimestampSource{Tolerance: 15 * time.Minute}, clock)
		require.NoError(t, err)
		assert.NoError(t, verify(v), "%s: Timestamp.Tolerance widens the window", name)
	}
}
