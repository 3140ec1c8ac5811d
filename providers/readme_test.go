package providers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

// readmeRegistrations are the Register column of the README's provider
// table, compiled: TestREADMEProviderTable checks that the two lists hold
// the same expressions, character for character, so the table cannot
// drift from the API.
func readmeRegistrations(t *testing.T) []webhooks.Verifier {
	register := func(v webhooks.Verifier, err error) webhooks.Verifier {
		t.Helper()
		require.NoError(t, err)
		require.NotNil(t, v)
		return v
	}
	return []webhooks.Verifier{
		register(webhooks.NewHMACVerifier(providers.StripeOptions(), webhooks.StaticSecrets(os.Getenv("STRIPE_WEBHOOK_SECRET")))),
		register(webhooks.NewHMACVerifier(providers.GitHubOptions(), webhooks.StaticSecrets(os.Getenv("GITHUB_WEBHOOK_SECRET")))),
		register(webhooks.NewHMACVerifier(providers.StandardWebhooksOptions(), webhooks.StaticSecrets(os.Getenv("CLERK_WEBHOOK_SECRET")))),
		register(webhooks.NewHMACVerifier(providers.SlackOptions(), webhooks.StaticSecrets(os.Getenv("SLACK_SIGNING_SECRET")))),
		register(webhooks.NewHMACVerifier(providers.ShopifyOptions(), webhooks.StaticSecrets(os.Getenv("SHOPIFY_CLIENT_SECRET")))),
		register(webhooks.NewHMACVerifier(providers.PaddleOptions(), webhooks.StaticSecrets(os.Getenv("PADDLE_WEBHOOK_SECRET")))),
		register(webhooks.NewHMACVerifier(providers.LinearOptions(), webhooks.StaticSecrets(os.Getenv("LINEAR_WEBHOOK_SECRET")))),
		register(webhooks.NewHMACVerifier(providers.ZoomOptions(), webhooks.StaticSecrets(os.Getenv("ZOOM_WEBHOOK_SECRET_TOKEN")))),
		register(providers.NewTokenVerifier(providers.GitLabTokenOptions(), webhooks.StaticSecrets(os.Getenv("GITLAB_WEBHOOK_TOKEN")))),
		register(webhooks.NewHMACVerifier(providers.GitLabSigningOptions(), webhooks.StaticSecrets(os.Getenv("GITLAB_SIGNING_TOKEN")))),
		register(providers.NewTwilioVerifier(providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, webhooks.StaticSecrets(os.Getenv("TWILIO_AUTH_TOKEN")))),
		register(providers.NewEd25519Verifier(providers.DiscordInteractionsOptions(), webhooks.StaticSecrets(os.Getenv("DISCORD_PUBLIC_KEY")))),
		register(providers.NewEd25519Verifier(providers.DiscordWebhookEventsOptions(), webhooks.StaticSecrets(os.Getenv("DISCORD_PUBLIC_KEY")))),
		register(providers.NewEd25519Verifier(providers.StandardWebhooksEd25519Options(), webhooks.StaticSecrets(os.Getenv("ACME_WEBHOOK_PUBLIC_KEY")))),
		register(webhooks.NewHMACVerifier(webhooks.HMACOptions{SignatureHeader: "X-Signature", SignedContent: "{timestamp}.{body}", Timestamp: webhooks.TimestampSource{Header: "X-Timestamp"}, Event: webhooks.EventSource{IDHeader: "X-Id"}}, webhooks.StaticSecrets(os.Getenv("X_WEBHOOK_SECRET")))),
		register(providers.NewEd25519Verifier(providers.Ed25519Options{SignatureHeader: "X-Signature", Event: webhooks.EventSource{IDHeader: "X-Id"}}, webhooks.StaticSecrets(os.Getenv("X_PUBLIC_KEY")))),
		register(providers.NewTokenVerifier(providers.TokenOptions{Header: "X-Acme-Token", Event: webhooks.EventSource{IDHeader: "X-Acme-Delivery"}}, webhooks.StaticSecrets(os.Getenv("ACME_TOKEN")))),
		register(providers.NewBasicAuthVerifier(providers.BasicAuthOptions{Event: webhooks.EventSource{IDPath: "id"}}, webhooks.StaticSecrets(os.Getenv("ACME_BASIC")))),
		register(providers.InsecureAcceptUnsigned(providers.UnsignedOptions{Event: webhooks.EventSource{IDPath: "id"}})),
	}
}

// readmeEnv holds a valid credential for every variable the table reads.
var readmeEnv = map[string]string{
	"STRIPE_WEBHOOK_SECRET":     "whsec_readme",
	"GITHUB_WEBHOOK_SECRET":     "readme",
	"CLERK_WEBHOOK_SECRET":      "whsec_cmVhZG1lLXJlYWRtZS1yZWFkbWUtcmVhZG1lLTA=",
	"SLACK_SIGNING_SECRET":      "readme",
	"SHOPIFY_CLIENT_SECRET":     "readme",
	"PADDLE_WEBHOOK_SECRET":     "pdl_ntfset_readme",
	"LINEAR_WEBHOOK_SECRET":     "readme",
	"ZOOM_WEBHOOK_SECRET_TOKEN": "readme",
	"GITLAB_WEBHOOK_TOKEN":      "readme",
	"GITLAB_SIGNING_TOKEN":      "whsec_cmVhZG1lLXJlYWRtZS1yZWFkbWUtcmVhZG1lLTA=",
	"TWILIO_AUTH_TOKEN":         "readme",
	"DISCORD_PUBLIC_KEY":        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
	"ACME_WEBHOOK_PUBLIC_KEY":   "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
	"X_WEBHOOK_SECRET":          "readme",
	"X_PUBLIC_KEY":              "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
	"ACME_TOKEN":                "readme",
	"ACME_BASIC":                "user:password",
}

// TestREADMEProviderTable is not parallel: it sets environment variables.
func TestREADMEProviderTable(t *testing.T) {
	rows := readmeProviderTable(t)
	var inREADME []string
	catalogNames := map[string]bool{}
	for _, row := range rows {
		inREADME = append(inREADME, row.register)
		for _, name := range row.names {
			catalogNames[name] = true
		}
	}
	assert.Equal(t, inREADME, compiledRegistrations(t), "the README's Register column and readmeRegistrations differ")

	// Every catalog name is in the table, and every name there is one.
	assert.Equal(t, providers.Names(), slices.Sorted(func(yield func(string) bool) {
		for name := range catalogNames {
			if !yield(name) {
				return
			}
		}
	}), "the README's catalog names and providers.Names() differ")

	// Every expression compiles (this file builds) and runs with
	// credentials in the environment.
	for name, value := range readmeEnv {
		t.Setenv(name, value)
	}
	assert.Len(t, readmeRegistrations(t), len(inREADME))
	for _, expr := range inREADME {
		for _, m := range regexp.MustCompile(`os\.Getenv\("([A-Z0-9_]+)"\)`).FindAllStringSubmatch(expr, -1) {
			assert.Contains(t, readmeEnv, m[1], "readmeEnv has no value for %s", m[1])
		}
	}
}

// readmeRow is one row of the README's provider table.
type readmeRow struct {
	register string   // the expression in the Register column
	names    []string // the Catalog name column
}

// readmeProviderTable reads the provider table of ../README.md's
// "## Providers" section.
func readmeProviderTable(t *testing.T) []readmeRow {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Providers\n")
	require.True(t, ok, "README.md has no Providers section")
	section, _, _ = strings.Cut(section, "\n## ")
	var (
		header []string
		rows   []readmeRow
	)
	code := regexp.MustCompile("`([^`]+)`")
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if header != nil {
				break // the table ended
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil:
			header = cells
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		require.Len(t, cells, len(header), "row %q", line)
		reg := code.FindStringSubmatch(cells[slices.Index(header, "Register")])
		require.NotNil(t, reg, "row %q has no registration", cells[0])
		row := readmeRow{register: reg[1]}
		for _, m := range code.FindAllStringSubmatch(cells[slices.Index(header, "Catalog name")], -1) {
			row.names = append(row.names, m[1])
		}
		rows = append(rows, row)
	}
	require.NotEmpty(t, rows, "README.md's Providers section has no table")
	require.Contains(t, header, "Register")
	require.Contains(t, header, "Catalog name")
	return rows
}

// compiledRegistrations returns the source of each register(…) argument in
// readmeRegistrations, as written in this file.
func compiledRegistrations(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("readme_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "readme_test.go", src, 0)
	require.NoError(t, err)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if ok && fn.Name.Name != "readmeRegistrations" {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if ok && len(call.Args) == 1 {
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "register" {
				arg := call.Args[0]
				out = append(out, string(src[fset.Position(arg.Pos()).Offset:fset.Position(arg.End()).Offset]))
				return false
			}
		}
		return true
	})
	require.NotEmpty(t, out)
	return out
}
