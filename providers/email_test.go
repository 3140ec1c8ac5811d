package providers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
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

// TestMailgunWindowIsTheSignedTimestamp: a captured signature triple is not
// made fresh again by a second timestamp key in another case (encoding/json
// reads keys without regard to case and keeps the last, and the signature
// covers the one it read): the window is checked on the signed timestamp,
// and a body giving a signature field twice is refused.
func TestMailgunWindowIsTheSignedTimestamp(t *testing.T) {
	t.Parallel()
	const key = "mailgun-signing-key"
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v, err := providers.NewMailgunVerifier(providers.MailgunOptions{Clock: webhookstest.NewClock(now)}, webhooks.StaticSecrets(key))
	require.NoError(t, err)
	sign := func(ts, token string) string {
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write([]byte(ts + token))
		return hex.EncodeToString(mac.Sum(nil))
	}
	const token = "0123456789abcdef0123456789abcdef0123456789abcdef01"
	fresh := strconv.FormatInt(now.Unix(), 10)
	old := strconv.FormatInt(now.Add(-30*24*time.Hour).Unix(), 10)
	event := `"event-data":{"id":"forged-1","event":"delivered"}`
	verify := func(signature string) error {
		body := fmt.Sprintf(`{"signature":{%s},%s}`, signature, event)
		_, err := v.Verify(context.Background(), webhooks.Route{Provider: "mailgun"}, &webhooks.Request{Body: []byte(body)})
		return err
	}

	require.NoError(t, verify(fmt.Sprintf(`"timestamp":%q,"token":%q,"signature":%q`, fresh, token, sign(fresh, token))))
	oldSig := sign(old, token)
	require.ErrorIs(t, verify(fmt.Sprintf(`"timestamp":%q,"token":%q,"signature":%q`, old, token, oldSig)), webhooks.ReasonTimestampExpired)
	// The captured old triple with a fresh timestamp under another case of the key, before or after it.
	require.ErrorIs(t, verify(fmt.Sprintf(`"timestamp":%q,"Timestamp":%s,"token":%q,"signature":%q`, fresh, old, token, oldSig)), webhooks.ReasonTimestampExpired)
	require.ErrorIs(t, verify(fmt.Sprintf(`"Timestamp":%s,"timestamp":%q,"token":%q,"signature":%q`, old, fresh, token, oldSig)), webhooks.ReasonBadSignature)
	// A fresh triple that gives a field twice is refused once it verified.
	freshSig := sign(fresh, token)
	require.ErrorIs(t, verify(fmt.Sprintf(`"timestamp":%q,"token":"other","TOKEN":%q,"signature":%q`, fresh, token, freshSig)), webhooks.ReasonMalformedPayload)
}
