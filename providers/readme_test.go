package providers_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

// TestREADMEProviders checks the README's Providers section against the
// catalog: it links the generated CATALOG.md, states the catalog's size,
// and every provider it wires by name is a catalog entry that builds.
func TestREADMEProviders(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Providers\n")
	require.True(t, ok, "README.md has no Providers section")
	section, _, _ = strings.Cut(section, "\n## ")
	assert.Contains(t, section, "(providers/CATALOG.md)", "the Providers section links the catalog page")
	assert.Contains(t, section, fmt.Sprintf("**%d providers by name**", len(providers.Names())), "the Providers section states the catalog's size")

	named := regexp.MustCompile(`providers\.New\("([a-z0-9-]+)"`).FindAllStringSubmatch(section, -1)
	require.NotEmpty(t, named, "the Providers section wires providers by name")
	for _, m := range named {
		e, ok := providers.Lookup(m[1])
		if !assert.True(t, ok, "README wires %q, which is not a catalog name", m[1]) {
			continue
		}
		assert.Contains(t, section, `os.Getenv("`+e.SecretEnv()+`")`, "README reads %s's secret from %s", m[1], e.SecretEnv())
		_, err := providers.New(m[1], providers.Config{Secrets: webhooks.StaticSecrets("whsec_readme")})
		assert.NoError(t, err, m[1])
	}
	for _, m := range regexp.MustCompile(`-provider ([a-z0-9-]+)`).FindAllStringSubmatch(section, -1) {
		_, ok := providers.Lookup(m[1])
		assert.True(t, ok, "README sends a sample for %q, which is not a catalog name", m[1])
	}
}
