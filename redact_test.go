package webhooks_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
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
	values := map[string]any{
		"StaticCredentials": creds,
		"TenantSecrets":     webhooks.TenantSecrets(map[string][]string{"acme": {secret}}),
		"Secret":            webhooks.Secret{ID: "k", Value: []byte(secret)},
		"HMACVerifier":      must(webhooks.NewHMACVerifier(providers.GitHubOptions(), creds)),
		"HMACVerifier with tenants": must(webhooks.NewHMACVerifier(providers.GitHubOptions(),
			webhooks.TenantSecrets(map[string][]string{"acme": {secret}}))),
	}
	for name, v := range values {
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

func TestStaticSecretsWithWhiteSpaceAreRefused(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"whsec_\n", " ", "\tsecret", "secret\n"} {
		_, err := webhooks.NewHMACVerifier(providers.StripeOptions(), webhooks.StaticSecrets(s))
		assert.Error(t, err, "secret %q", s)
		_, err = webhooks.NewHMACVerifier(providers.StripeOptions(), webhooks.TenantSecrets(map[string][]string{"acme": {"whsec_ok", s}}))
		assert.Error(t, err, "tenant secret %q", s)
	}
}

func TestVerifyHTTPRequestHugeLimit(t *testing.T) {
	t.Parallel()
	req := githubRequest(ghPayload)
	_, err := webhooks.VerifyHTTPRequest(req.Context(), githubVerifier(t, ghSecret), webhooks.Route{Provider: "github"}, req, math.MaxInt64)
	require.NoError(t, err, "the body must reach the verifier whole")
}
