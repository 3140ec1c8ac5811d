package providers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// catalogVector is a vector of testdata/<name>/catalog-vector.json: a
// delivery as the provider sends it, and what the entry must read from it.
// Unpublished ones were computed by testdata/catalog_vectors.py with
// Python's hmac, independently of the Go code.
type catalogVector struct {
	Source       string            `json:"source"`
	Published    bool              `json:"published"`
	ComputedWith string            `json:"computed_with"`
	Secret       string            `json:"secret"`
	URL          string            `json:"url"`
	Headers      map[string]string `json:"headers"`
	Body         string            `json:"body"`
	Now          int64             `json:"now"`
	VerifyToken  string            `json:"verify_token"`
	WantID       string            `json:"want_id"`
	WantType     string            `json:"want_type"`
}

func loadCatalogVector(t *testing.T, name string) (catalogVector, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name, "catalog-vector.json"))
	if os.IsNotExist(err) {
		return catalogVector{}, false
	}
	require.NoError(t, err)
	var v catalogVector
	require.NoError(t, json.Unmarshal(b, &v), name)
	require.NotEmpty(t, v.Source, name)
	require.True(t, v.Published || v.ComputedWith != "", "%s: an unpublished vector says how it was computed", name)
	return v, true
}

// TestCatalogVectors verifies every catalog vector through the entry built
// by name, at the vector's time; then with one byte of the body changed.
func TestCatalogVectors(t *testing.T) {
	t.Parallel()
	n := 0
	for _, name := range providers.Names() {
		v, ok := loadCatalogVector(t, name)
		if !ok {
			continue
		}
		n++
		verifyToken := v.VerifyToken
		if verifyToken == "" {
			verifyToken = "vt"
		}
		verifier, err := providers.New(name, providers.Config{
			Secrets: webhooks.StaticSecrets(v.Secret), PublicURL: "https://hooks.example.com", VerifyToken: verifyToken,
			Clock: webhookstest.NewClock(time.Unix(v.Now, 0)),
		})
		require.NoError(t, err, name)
		u, err := url.Parse(v.URL)
		require.NoError(t, err)
		req := &webhooks.Request{Method: http.MethodPost, URL: &url.URL{Path: u.Path, RawQuery: u.RawQuery}, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(v.Body)}
		for k, val := range v.Headers {
			req.Header.Set(k, val)
		}
		got, err := verifier.Verify(context.Background(), webhooks.Route{Provider: name}, req)
		if !assert.NoError(t, err, name) {
			continue
		}
		assert.Equal(t, v.WantID, got.EventID, name)
		assert.Equal(t, v.WantType, got.EventType, name)
		assert.Equal(t, "static:0", got.KeyID, name)
		if strings.Contains(v.Body, v.Secret) {
			assert.NotNil(t, got.Payload, "%s: the body carries the secret: the verifier redacts it", name)
			assert.NotContains(t, string(got.Payload), v.Secret, name)
		}
	}
	assert.GreaterOrEqual(t, n, 38)
}
