package providers_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// leaks reports how secret shows in out, if it does: as text, as hex, or as
// the decimal bytes fmt prints for a []byte.
func leaks(out, secret string) string {
	dec := strings.Trim(fmt.Sprint([]byte(secret)), "[]")
	for form, s := range map[string]string{"text": secret, "hex": hex.EncodeToString([]byte(secret)), "HEX": strings.ToUpper(hex.EncodeToString([]byte(secret))), "decimal": dec} {
		if strings.Contains(out, s) {
			return form
		}
	}
	return ""
}

func TestPrintingVerifiersNeverShowsSecrets(t *testing.T) {
	t.Parallel()
	const secret = "Zq7-super-secret-value"
	creds := webhooks.StaticSecrets(secret)
	must := func(v any, err error) any {
		t.Helper()
		require.NoError(t, err)
		return v
	}
	idHeader := webhooks.EventSource{IDHeader: "X-Id"}
	values := map[string]any{
		"TokenVerifier":     must(providers.NewTokenVerifier(providers.TokenOptions{Header: "X-Token", Event: idHeader}, creds)),
		"BasicAuthVerifier": must(providers.NewBasicAuthVerifier(providers.BasicAuthOptions{Event: webhooks.EventSource{IDPath: "id"}}, webhooks.StaticSecrets("user:"+secret))),
		"TwilioVerifier":    must(providers.NewTwilioVerifier(providers.TwilioOptions{BaseURL: "https://hooks.example.com", SharedKeys: creds}, creds)),
		"Ed25519Verifier": must(providers.NewEd25519Verifier(providers.DiscordInteractionsOptions(),
			webhooks.StaticSecrets("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))),
		"catalog": must(providers.New("stripe", providers.Config{Secrets: webhooks.TenantSecrets(map[string][]string{"acme": {secret}})})),
	}
	secrets := map[string]string{}
	for name := range values {
		secrets[name] = secret
	}
	// Every catalog entry, with a credential in its provider's format.
	for _, name := range providers.Names() {
		s, err := webhookstest.NewKeySigner(name)
		require.NoError(t, err)
		cfg := providers.Config{Secrets: webhooks.StaticSecrets(s.Credential()), PublicURL: "https://hooks.example.com", VerifyToken: "vt-" + secret}
		values["catalog:"+name] = must(providers.New(name, cfg))
		secrets["catalog:"+name] = s.Credential()
		if name == "sns" || strings.HasPrefix(name, "discord") || name == "sendgrid" || name == "standardwebhooks-ed25519" {
			secrets["catalog:"+name] = "vt-" + secret // public keys and ARNs are not secret
		}
	}
	hs := providers.NewHandshakeSecrets(providers.HandshakeSecretsOptions{})
	hs.Add(webhooks.Route{Provider: "asana"}, []byte(secret))
	values["HandshakeSecrets"], secrets["HandshakeSecrets"] = hs, secret
	for name, v := range values {
		secret := secrets[name]
		for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%d", "%x", "%X", "%q"} {
			out := fmt.Sprintf(verb, v)
			assert.Empty(t, leaks(out, secret), "%s printed with %s: %q", name, verb, out)
			wrapped := fmt.Sprintf(verb, struct{ V any }{v})
			assert.Empty(t, leaks(wrapped, secret), "%s inside a struct printed with %s: %q", name, verb, wrapped)
		}
		var buf bytes.Buffer
		slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "v", v)
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "v", v)
		assert.Empty(t, leaks(buf.String(), secret), "%s through slog: %q", name, buf.String())
	}
}

func TestStaticTokensWithWhiteSpaceAreRefused(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"whsec_\n", " ", "\tsecret", "secret\n"} {
		_, err := providers.NewTokenVerifier(providers.TokenOptions{Header: "X-Token", Event: webhooks.EventSource{IDHeader: "X-Id"}}, webhooks.StaticSecrets(s))
		assert.Error(t, err, "token %q", s)
		_, err = providers.NewTokenVerifier(providers.GitLabTokenOptions(), webhooks.TenantSecrets(map[string][]string{"team-a": {s}}))
		assert.Error(t, err, "tenant token %q", s)
	}
}
