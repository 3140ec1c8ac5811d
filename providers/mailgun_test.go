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

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

// TestMailgunWindowIsTheSignedTimestamp: a captured signature triple is not
// made fresh again by a second timestamp key in another case (encoding/json
// reads keys without regard to case and keeps the last, and the signature
// covers the one it read): the window is checked on the signed timestamp,
// and a body giving a signature field twice is refused.
func TestMailgunWindowIsTheSignedTimestamp(t *testing.T) {
	t.Parallel()
	const key = "mailgun-signing-key"
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v, err := providers.NewMailgunVerifier(providers.MailgunOptions{Clock: fixedClock(now)}, webhooks.StaticSecrets(key))
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
