package providers_test

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/providers"
)

var update = flag.Bool("update", false, "rewrite CATALOG.md from the catalog")

// legacyVectors describes the vectors of the entries tested before the
// catalog-vector format, in their own tests (vectors_test.go and the
// scheme tests).
var legacyVectors = map[string]string{
	"discord":                  "made (Discord publishes none), RFC 8032 key — `testdata/discord`",
	"discord-events":           "none: round trips only (Discord publishes none)",
	"github":                   "**published** (docs.github.com example) — `testdata/github`",
	"gitlab":                   "none: a plain token comparison",
	"gitlab-signing":           "**published** Standard Webhooks reference vector — `testdata/gitlab`",
	"linear":                   "computed with openssl — `testdata/linear`",
	"paddle":                   "computed with openssl, Paddle's documented secret and ts — `testdata/paddle`",
	"shopify":                  "computed with openssl — `testdata/shopify`",
	"slack":                    "**published** (Slack's worked example) — `testdata/slack`",
	"standardwebhooks":         "**published** (standard-webhooks reference vector) — `testdata/standardwebhooks`",
	"standardwebhooks-ed25519": "made under RFC 8032 keys — `testdata/standardwebhooks-v1a`",
	"stripe":                   "computed with openssl — `testdata/stripe`",
	"svix":                     "**published** (standard-webhooks reference vector, svix-* names) — `testdata/standardwebhooks`",
	"twilio":                   "**published** (Twilio's worked example) — `testdata/twilio`",
	"zoom":                     "computed with openssl — `testdata/zoom`",
	"sns":                      "none: keys and certificates generated in the test (AWS publishes no key-and-message pair)",
}

// sdkChecks says, per entry, whether a test cross-checks it against the
// provider's own Go SDK, and why not where it does not.
var sdkChecks = map[string]string{
	"stripe":   "**yes**: stripe-go verifies webhookstest's delivery, the entry verifies stripe-go's (`providers/internal/sdkcheck`)",
	"slack":    "**yes**: slack-go's SecretsVerifier accepts webhookstest's delivery (`providers/internal/sdkcheck`)",
	"discord":  "**yes**: discordgo's VerifyInteraction accepts webhookstest's interaction (`providers/internal/sdkcheck`)",
	"sendgrid": "no Go SDK module on the proxy here; the published SDK test vector is used instead",
}

func sdkCheck(name string) string {
	if s, ok := sdkChecks[name]; ok {
		return s
	}
	return "no: no Go SDK of the provider is served by the module proxy here"
}

// renderCatalog writes CATALOG.md from the catalog.
func renderCatalog(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Provider catalog\n\n")
	b.WriteString("Generated from `providers.Entries()` by `go test ./providers -run TestCatalogPage -update`;\n")
	b.WriteString("the test fails when this page and the code differ. Every entry is built by name with\n")
	b.WriteString("`providers.New(name, providers.Config{…})` and runs the same harness (`providers/catalog_test.go`):\n")
	b.WriteString("a round trip through `webhooks.NewReceiver` on memstore (202, then a duplicate 200, with the\n")
	b.WriteString("provider's own answer), a tampered body, another credential, stale and future timestamps where\n")
	b.WriteString("one is signed, a missing and a duplicated signature header, a duplicated timestamp or event ID\n")
	b.WriteString("header where one is read from a header, a tampered, missing and duplicated credential where it\n")
	b.WriteString("is in the body (mailgun, figma, msgraph), GET refused (405) unless the provider checks endpoints\n")
	b.WriteString("with GET, HEAD answered 200 with no body, and its endpoint checks with the answers computed\n")
	b.WriteString("independently by `webhookstest`. \"**not signed**\" marks an event ID the signature does not\n")
	b.WriteString("cover: a captured delivery can be replayed under a new ID there.\n\n")
	fmt.Fprintf(&b, "%d entries. The credential is read, by convention, from `<NAME>_WEBHOOK_SECRET` (`providers.Entry.SecretEnv`); `meta` also reads `META_WEBHOOK_VERIFY_TOKEN`.\n\n", len(providers.Names()))
	b.WriteString("| Name | Provider | Scheme | Credential | Headers | Signed content | Window | Event ID | Handshakes | Answer | Vector | SDK cross-check |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range providers.Entries() {
		handshakes := e.Handshakes
		if handshakes == "" {
			handshakes = "—"
		}
		answer := "any 2xx (the receiver's 202/200)"
		if e.Answer != nil {
			code := e.Answer.StatusCode
			if code == 0 {
				code = http.StatusOK
			}
			answer = fmt.Sprintf("%d", code)
			if len(e.Answer.Body) > 0 {
				answer += " `" + string(e.Answer.Body) + "`"
			} else {
				answer += ", no body"
			}
		}
		vec := legacyVectors[e.Name]
		if v, ok := loadCatalogVector(t, e.Name); ok {
			vec = "unpublished, computed from the documented scheme — `testdata/" + e.Name + "`"
			if v.Published {
				vec = "**published**: " + v.Source
			}
		}
		require.NotEmpty(t, vec, "%s has no vector and no reason", e.Name)
		env := "`" + e.SecretEnv() + "`"
		if e.NeedsPublicURL {
			env += " + `Config.PublicURL`"
		}
		fmt.Fprintf(&b, "| `%s` | [%s](%s) | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			e.Name, e.Title, e.Docs, e.Scheme, e.Credential, env, e.Headers, e.Signed, e.Window, e.EventID, handshakes, answer, vec, sdkCheck(e.Name))
	}
	return b.String()
}

// TestCatalogPage checks that CATALOG.md is the catalog as the code has
// it; run with -update to rewrite it.
func TestCatalogPage(t *testing.T) {
	t.Parallel()
	want := renderCatalog(t)
	if *update {
		require.NoError(t, os.WriteFile("CATALOG.md", []byte(want), 0o644))
	}
	got, err := os.ReadFile("CATALOG.md")
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "CATALOG.md is stale: run go test ./providers -run TestCatalogPage -update")
}
