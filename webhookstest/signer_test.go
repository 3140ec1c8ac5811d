package webhookstest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestNewPrivateKeySigner: a signer given the caller's key signs with it:
// a SendGrid delivery signed with a P-256 key verifies against that key's
// public half (checked with crypto/ecdsa directly, and by the catalog
// entry configured with Credential), as does a Discord interaction signed
// with an Ed25519 key; keys of the wrong kind, curve or size, and entries
// that sign otherwise, are refused.
func TestNewPrivateKeySigner(t *testing.T) {
	t.Parallel()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	s, err := webhookstest.NewPrivateKeySigner("sendgrid", ec)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	require.NoError(t, err)
	assert.Equal(t, base64.StdEncoding.EncodeToString(der), s.Credential(), "the public half of the caller's key")
	d, err := s.Sign("https://hooks.example.com/webhooks/sendgrid", webhookstest.Message{Type: "delivered", Timestamp: time.Now()})
	require.NoError(t, err)
	sig, err := base64.StdEncoding.DecodeString(d.Header.Get(providers.SendGridSignatureHeader))
	require.NoError(t, err)
	sum := sha256.Sum256(append([]byte(d.Header.Get(providers.SendGridTimestampHeader)), d.Body...))
	assert.True(t, ecdsa.VerifyASN1(&ec.PublicKey, sum[:], sig), "signed with the caller's key")
	verifyDelivery(t, "sendgrid", s.Credential(), d)

	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	s, err = webhookstest.NewPrivateKeySigner("discord", edPriv)
	require.NoError(t, err)
	d, err = s.Sign("https://hooks.example.com/webhooks/discord", webhookstest.Message{Type: "2", Timestamp: time.Now()})
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(edPub), s.Credential(), "the public half of the caller's key, as Discord shows it")
	verifyDelivery(t, "discord", hex.EncodeToString(edPub), d)
	_, otherPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	other, err := webhookstest.NewPrivateKeySigner("discord", otherPriv)
	require.NoError(t, err)
	require.NotEqual(t, other.Credential(), s.Credential())
	v, err := providers.New("discord", providers.Config{Secrets: webhooks.StaticSecrets(other.Credential())})
	require.NoError(t, err)
	req, err := d.Request(context.Background())
	require.NoError(t, err)
	_, err = webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: "discord"}, req, 0)
	assert.Error(t, err, "another key's public half refuses the delivery")

	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		key  any
		want string
	}{
		{"sendgrid", edPriv, "does not sign with an Ed25519 key"},
		{"sendgrid", p384, "P-256"},
		{"discord", ec, "does not sign with an ECDSA key"},
		{"discord", edPriv[:32], "bytes"},
		{"stripe", edPriv, "does not sign with an Ed25519 key"},
		{"sns", ec, "does not sign with an ECDSA key"},
		{"discord", "a secret", "is not a key it signs with"},
		{"nope", ec, "unknown catalog entry"},
	} {
		_, err := webhookstest.NewPrivateKeySigner(c.name, c.key)
		assert.ErrorContains(t, err, c.want, "%s with a %T", c.name, c.key)
	}
}

// verifyDelivery requires the catalog entry name, configured with
// credential, to verify d.
func verifyDelivery(t *testing.T, name, credential string, d *webhookstest.Delivery) {
	t.Helper()
	v, err := providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(credential)})
	require.NoError(t, err)
	req, err := d.Request(context.Background())
	require.NoError(t, err)
	_, err = webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: name}, req, 0)
	require.NoError(t, err, "%s verifies the delivery signed with the caller's key", name)
}

// TestTwitchTimestampNanoseconds: webhookstest writes Twitch's
// Twitch-Eventsub-Message-Timestamp to the nanosecond, as Twitch does
// (2019-11-16T10:11:12.634234626Z in its documentation), signs it as
// written, and the twitch entry verifies it; other RFC 3339 timestamps
// stay to the second (Box). Mutation: the twitch spec without nanos.
func TestTwitchTimestampNanoseconds(t *testing.T) {
	t.Parallel()
	at := time.Now().UTC().Truncate(time.Second).Add(634234626 * time.Nanosecond)
	secret := webhookstest.NewSecret("twitch")
	d, err := webhookstest.Sign("twitch", secret, "https://hooks.example.com/webhooks/twitch", webhookstest.Message{Type: "channel.follow", Timestamp: at})
	require.NoError(t, err)
	assert.Equal(t, at.Format(time.RFC3339Nano), d.Header.Get("Twitch-Eventsub-Message-Timestamp"))
	assert.Contains(t, d.Header.Get("Twitch-Eventsub-Message-Timestamp"), ".634234626Z")
	verifyDelivery(t, "twitch", secret, d)

	box, err := webhookstest.Sign("box", webhookstest.NewSecret("box"), "https://hooks.example.com/webhooks/box", webhookstest.Message{Type: "FILE.UPLOADED", Timestamp: at})
	require.NoError(t, err)
	assert.Equal(t, at.Format(time.RFC3339), box.Header.Get("Box-Delivery-Timestamp"), "Box's timestamp is to the second")
}
