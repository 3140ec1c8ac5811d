package main

import (
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestPostgresStoresNoCredentials sends signed deliveries of several
// catalog entries (signatures in headers, tokens in headers, credentials in
// the body) through the example server on PostgreSQL, and conflicting
// deliveries the inbox quarantines, then reads every table of the schema
// with SQL: no stored row holds a signature, a signature header's value,
// a credential field's value or a secret, as text or as the hex of a
// bytea column.
func TestPostgresStoresNoCredentials(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	schema := pgtest.NewSchemaAt(t, dsn)
	names := []string{"stripe", "github", "shopify", "slack", "gitlab", "okta", "figma", "msgraph", "mailgun"}
	env := map[string]string{"DATABASE_URL": dsn}
	signers := map[string]*webhookstest.Signer{}
	for _, name := range names {
		s, err := webhookstest.NewKeySigner(name)
		require.NoError(t, err, name)
		signers[name] = s
		e, ok := providers.Lookup(name)
		require.True(t, ok, name)
		env[e.SecretEnv()] = s.Credential()
	}
	s := start(t, env, "-schema", schema)

	send := func(d *webhookstest.Delivery) int {
		t.Helper()
		req, err := d.Request(t.Context())
		require.NoError(t, err)
		resp, err := testClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	var needles []string
	at := time.Now()
	stored, quarantined := 0, 0
	for _, name := range names {
		signer := signers[name]
		url := s.url + "/webhooks/" + name
		d, err := signer.Sign(url, webhookstest.Message{Timestamp: at})
		require.NoError(t, err, name)
		code := send(d)
		require.True(t, code == http.StatusAccepted || code == http.StatusOK, "%s: %d", name, code)
		stored++
		needles = append(needles, d.Credentials...)
		needles = append(needles, signer.Credential())

		// The same event ID with another payload: kept for the operator
		// (409), or, where the ID is not signed, stored under a key of its
		// own (202), under the same rules.
		msg := webhookstest.Message{ID: d.EventID, Timestamp: at.Add(2 * time.Second)}
		if name == "github" || name == "shopify" || name == "gitlab" { // samples that sign no time
			msg.Body = []byte(`{"conflicting":true}`)
		}
		d2, err := signer.Sign(url, msg)
		require.NoError(t, err, name)
		if d2.EventID == d.EventID && string(d2.Body) != string(d.Body) {
			want := http.StatusConflict
			if name == "github" || name == "shopify" || name == "gitlab" || name == "okta" || name == "mailgun" {
				want = http.StatusAccepted // the catalog's "not signed" event IDs
			}
			require.Equal(t, want, send(d2), name)
			if want == http.StatusAccepted {
				stored++
			}
			needles = append(needles, d2.Credentials...)
			quarantined++
		}
	}
	require.GreaterOrEqual(t, quarantined, 7, "conflicts to look into")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name", schema)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, tables, "inbox_events")
	require.Contains(t, tables, "inbox_quarantine")

	var all strings.Builder
	counts := map[string]int{}
	for _, table := range tables {
		rows, err := conn.Query(ctx, "SELECT t::text FROM "+pgx.Identifier{schema, table}.Sanitize()+" t")
		require.NoError(t, err, table)
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err, table)
		counts[table] = len(texts)
		for _, row := range texts {
			all.WriteString(row)
			all.WriteString("\n")
		}
	}
	assert.Equal(t, stored, counts["inbox_events"], "every delivery is stored once")
	assert.Equal(t, quarantined, counts["inbox_quarantine"], "every conflict is quarantined")
	dump := all.String()
	// The search sees into bytea columns (the payloads, as hex) and jsonb
	// ones (the headers, whose quotes a row's text doubles): what is
	// stored is found.
	found := func(s string) bool {
		return strings.Contains(dump, s) || strings.Contains(dump, hex.EncodeToString([]byte(s)))
	}
	require.True(t, found(`"file_name":"Design"`), "a payload is found as the hex of its bytes")
	require.True(t, found(`""X-Github-Event""`), "headers are found")
	assert.True(t, found(`"passcode":"`+providers.RedactedValue+`"`), "Figma's payload is stored, redacted")
	for _, n := range needles {
		require.NotEmpty(t, n)
		if found(n) {
			t.Errorf("a stored row holds the credential %q", n)
		}
	}
	for _, h := range []string{"Stripe-Signature", "X-Hub-Signature", "X-Hub-Signature-256", "X-Shopify-Hmac-Sha256", "X-Slack-Signature", "X-Gitlab-Token", "Authorization"} {
		if found(`""` + h + `""`) {
			t.Errorf("a stored row has a %s header", h)
		}
	}
}
