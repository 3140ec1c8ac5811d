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
	"github.com/hookinbox/webhooks/webhookstest"
)

var update = flag.Bool("update", false, "rewrite CATALOG.md from the catalog")

// legacyVectors describes the vectors of the entries tested before the
// catalog-vector format, in their own tests (vectors_test.go and the
// scheme tests).
var legacyVectors = map[string]string{
	"discord":                  "made (Discord publishes none), RFC 8032 key — `testdata/discord`",
	"github":                   "**published** (docs.github.com example) — `testdata/github`",
	"gitlab":                   "none: a plain token comparison, for which GitLab publishes no vector",
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

// sdkChecks says, per entry, which test of internal/testing/sdkcheck
// cross-checks it against the provider's own Go SDK, or why none does.
// What was looked for is listed in that package's doc.
var sdkChecks = map[string]string{
	"stripe":                   "**yes**: stripe-go verifies webhookstest's delivery, the entry verifies stripe-go's (`sdkcheck.TestStripe`)",
	"slack":                    "**yes**: slack-go's SecretsVerifier accepts webhookstest's delivery, refuses a zero signature (`sdkcheck.TestSlack`)",
	"discord":                  "**yes**: discordgo's VerifyInteraction accepts webhookstest's interaction, refuses another key's and a tampered body (`sdkcheck.TestDiscord`)",
	"discord-events":           "**yes**: discordgo's VerifyInteraction (the same scheme) accepts webhookstest's event, refuses another key's and a tampered body (`sdkcheck.TestDiscord`)",
	"github":                   "**yes**: go-github's ValidatePayload accepts webhookstest's JSON and form deliveries; go-github and the entry accept GitHub's documented values and refuse them tampered (`sdkcheck.TestGitHub`)",
	"standardwebhooks":         "**yes**: the Standard Webhooks Go library verifies webhookstest's delivery, the entry verifies the library's signature, both refuse a tampered body (`sdkcheck.TestStandardWebhooksLibraries`)",
	"gitlab-signing":           "**yes**: the Standard Webhooks Go library, both ways, tampered refused (`sdkcheck.TestStandardWebhooksLibraries`); GitLab publishes no Go SDK of its own that verifies webhooks",
	"openai":                   "**yes**: openai-go's Webhooks.VerifySignature accepts webhookstest's delivery, refuses it tampered (`sdkcheck.TestOpenAI`); the Standard Webhooks Go library both ways (`sdkcheck.TestStandardWebhooksLibraries`)",
	"replicate":                "**yes**: the Standard Webhooks Go library, both ways, tampered refused (`sdkcheck.TestStandardWebhooksLibraries`); replicate-go (ValidateWebhookRequest) was not available from the module proxy these checks were written against (403)",
	"svix":                     "**yes**: Svix's Go library (svix-webhooks) verifies webhookstest's delivery, the entry verifies the library's signature, both refuse a tampered body (`sdkcheck.TestStandardWebhooksLibraries`)",
	"clerk":                    "**yes**: Svix's Go library, which Clerk's docs use for verification, both ways, tampered refused (`sdkcheck.TestStandardWebhooksLibraries`)",
	"resend":                   "**yes**: resend-go's Webhooks.Verify accepts webhookstest's delivery, refuses it tampered (`sdkcheck.TestResend`); Svix's Go library both ways (`sdkcheck.TestStandardWebhooksLibraries`)",
	"twilio":                   "**yes**: twilio-go's RequestValidator accepts webhookstest's form post; twilio-go and the entry accept Twilio's documented example and refuse a changed parameter (`sdkcheck.TestTwilio`)",
	"sendgrid":                 "**yes**: sendgrid-go's eventwebhook.VerifySignature accepts webhookstest's delivery; sendgrid-go and the entry accept the published SDK test vector and refuse it tampered (`sdkcheck.TestSendGrid`)",
	"paddle":                   "**yes**: paddle-go-sdk's WebhookVerifier accepts webhookstest's delivery, refuses it tampered; the SDK cannot sign (`sdkcheck.TestPaddle`)",
	"pagerduty":                "**yes**: go-pagerduty's webhookv3.VerifySignature accepts webhookstest's delivery, refuses it tampered; the SDK cannot sign (`sdkcheck.TestPagerDuty`)",
	"line":                     "**yes**: line-bot-sdk-go's webhook.ValidateSignature accepts webhookstest's delivery, refuses it tampered; the SDK cannot sign (`sdkcheck.TestLINE`)",
	"razorpay":                 "**yes**: razorpay-go's VerifyWebhookSignature accepts webhookstest's delivery, refuses it tampered; the SDK cannot sign (`sdkcheck.TestRazorpay`)",
	"mailgun":                  "**yes**: mailgun-go's VerifyWebhookSignature accepts the signature object of webhookstest's delivery, refuses another token; the SDK cannot sign (`sdkcheck.TestMailgun`)",
	"square":                   "no: Square's Go SDK (square-go-sdk) was not available from the module proxy these checks were written against (403)",
	"box":                      "no: Box's Go SDK (box-go-sdk-gen) was not available from the module proxy these checks were written against (403)",
	"standardwebhooks-ed25519": "no: the Standard Webhooks Go library (v0.0.1) and Svix's implement only the v1 (HMAC) scheme, not v1a",
	"sns":                      "no: AWS's Go SDKs have no SNS message verifier (AWS's validators are for other languages, aws/aws-sdk-go#567)",
}

func sdkCheck(name string) string {
	if s, ok := sdkChecks[name]; ok {
		return s
	}
	return "no: no official Go SDK of the provider that verifies webhooks is known; none among the modules looked for (`internal/testing/sdkcheck` doc)"
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
	b.WriteString("with GET or delivers by GET (twilio), HEAD answered 200 with no body, and its endpoint checks with the answers computed\n")
	b.WriteString("independently by `webhookstest`. \"**not signed**\" marks an event ID the signature does not\n")
	b.WriteString("cover: a captured delivery can be replayed under a new ID there. The *Signed fields* column is\n")
	b.WriteString("found by sending altered copies of a genuine delivery (`TestCatalogUnsignedFields`): where the\n")
	b.WriteString("event ID is not signed, a delivery that reuses a stored ID with another body is stored too,\n")
	b.WriteString("under a key of its own, and both are flagged; where the type is not signed, a body is refused\n")
	b.WriteString("under another type than it came with (`webhooks.UnsignedFields`, [docs/security.md](../docs/security.md)).\n")
	b.WriteString("Nothing stored with an item\n")
	b.WriteString("holds a signature or a credential: the headers a verifier reads them from are dropped\n")
	b.WriteString("(`webhooks.SecretHeaderVerifier`), and credentials in a JSON body are stored as `\"[redacted]\"`\n")
	b.WriteString("(`providers.RedactedValue`, \"stored redacted\" below); `TestCatalogStoresNoCredentials` checks both.\n")
	b.WriteString("The *Headers*, *Signed content*, *Window* and *Event ID* columns are rendered from each entry's\n")
	b.WriteString("definition (the `HMACOptions`, `Ed25519Options` or `TokenOptions` its verifier and `webhookstest`'s\n")
	b.WriteString("signer are built from), with notes only for what no field says; six verifiers of fixed formats\n")
	b.WriteString("(figma, mailgun, msgraph, sendgrid, sns, twilio) are described in prose, which the harness and\n")
	b.WriteString("`TestCatalogWindow` check against them. The *Ordering key* column says where an event's ordering key\n")
	b.WriteString("and version come from (`webhooks.OrderSource`, for ordered handlers, [docs/handlers.md](../docs/handlers.md)),\n")
	b.WriteString("always from the signed body; `TestCatalogOrdering` checks it against what each verifier stores.\n\n")
	fmt.Fprintf(&b, "%d entries. The credential is read, by convention, from `<NAME>_WEBHOOK_SECRET` (`providers.Entry.SecretEnv`); `meta` also reads `META_WEBHOOK_VERIFY_TOKEN`.\n\n", len(providers.Names()))
	b.WriteString("| Name | Provider | Scheme | Credential | Headers | Signed content | Window | Event ID | Signed fields | Ordering key | Handshakes | Answer | Vector | SDK cross-check |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	sns := newSNSServer(t)
	for _, e := range providers.Entries() {
		b.WriteString(catalogRow(t, e, sns))
	}
	return b.String()
}

// catalogRow writes an entry's row of CATALOG.md: its text, what the
// attacks of TestCatalogUnsignedFields find signed, its vector and SDK
// cross-check.
func catalogRow(t *testing.T, e providers.Entry, sns *snsServer) string {
	t.Helper()
	f := newEntryFixture(t, e, sns, acknowledge)
	base := f.sign(t, webhookstest.Message{})
	signed := findSigned(t, f, base).describe(base.EventType != "")
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
	return fmt.Sprintf("| `%s` | [%s](%s) | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
		e.Name, e.Title, e.Docs, e.Scheme, e.Credential, env, e.Headers(), e.Signed(), e.Window(), e.EventID(), signed, e.Ordering(), handshakes, answer, vec, sdkCheck(e.Name))
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

// The replay table of docs/security.md, written from the catalog between
// these markers.
const (
	replayTableStart = "<!-- replay table: generated by go test ./providers -run TestSecurityPage -update; do not edit -->\n"
	replayTableEnd   = "<!-- end of the replay table -->\n"
)

// renderReplayTable says, per entry, what whoever holds one captured
// delivery can do with it, from what the attacks of
// TestCatalogUnsignedFields find signed and the entry's window (which the
// harness checks).
func renderReplayTable(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("| Entry | Time signed | A captured delivery sent again |\n|---|---|---|\n")
	sns := newSNSServer(t)
	for _, e := range providers.Entries() {
		f := newFixture(t, e.Name, sns, acknowledge)
		base := f.sign(t, webhookstest.Message{})
		s := findSigned(t, f, base)
		guarded := f.verification(t, base).ReplayKey != ""
		timed := !strings.HasPrefix(e.Window(), "none")
		window := "no"
		if timed {
			window = e.Window()
		}
		var what string
		switch {
		case !s.body && !guarded:
			what = "**the credential travels with every delivery**: whoever holds one can send any event, at any time"
		case !s.body && guarded:
			what = "the signed token is registered (24 h): sent again, a duplicate; its event data is not signed, so only the token's first body is taken"
		case !s.id && timed:
			what = "within the window, under a new event ID: **stored and handled again**; after it, refused"
		case !s.id:
			what = "under a new event ID: **stored and handled again, at any time**"
		case timed:
			what = "within the window: a duplicate (200), nothing runs; after it, refused"
		default:
			what = "a duplicate (200) while its item is kept; **after retention deletes the item, stored and handled again**"
		}
		if !s.typ && s.body && base.EventType != "" {
			what += "; under another type: refused (409)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", e.Name, window, what)
	}
	return b.String()
}

// TestSecurityPage checks the replay table of docs/security.md; run with
// -update to rewrite it.
func TestSecurityPage(t *testing.T) {
	t.Parallel()
	const path = "../docs/security.md"
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(page), replayTableStart)
	require.True(t, ok, "docs/security.md has no replay table marker")
	got, after, ok := strings.Cut(rest, replayTableEnd)
	require.True(t, ok, "docs/security.md has no end marker of the replay table")
	want := renderReplayTable(t)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(before+replayTableStart+want+replayTableEnd+after), 0o644))
		return
	}
	assert.Equal(t, want, got, "the replay table of docs/security.md is stale: run go test ./providers -run TestSecurityPage -update")
}
