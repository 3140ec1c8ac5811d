//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/pgstore"
)

// TestPostgresListPagesOverLargeDeadLetters: the server, in a process of
// its own on PostgreSQL, pages dead letters of 1 MiB each through the
// admin API, page after page, without reading their payloads: its peak
// resident memory (VmHWM) grows by less than a page's worth of payloads.
// (Reading them, each page of 64 took 64 MiB and more.)
func TestPostgresListPagesOverLargeDeadLetters(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	const (
		deadLetters  = 64
		payloadBytes = 1 << 20
		pages        = 5
		token        = "tok-memory"
		// bound is what the peak may grow by while the pages are listed:
		// well under one page's payloads (64 MiB).
		bound = 24 << 20
	)
	schema := pgtest.NewSchemaAt(t, dsn)
	seedLargeDeadLetters(t, dsn, schema, deadLetters, payloadBytes)

	srv := startProcess(t, map[string]string{"DEMO_WEBHOOK_SECRET": "demo-secret"},
		"-dsn", dsn, "-schema", schema, "-admin-token", token)
	list := func() adminjson.Page {
		t.Helper()
		code, _, body := srv.get(t, http.MethodGet, "/admin/api/dead-letters?limit=500", "", "Authorization", "Bearer "+token)
		require.Equal(t, http.StatusOK, code, body)
		var p adminjson.Page
		require.NoError(t, json.Unmarshal([]byte(body), &p))
		return p
	}
	// A first listing, small, warms the server up (connections, templates
	// and buffers of its own), so the peak after it is the baseline.
	code, _, body := srv.get(t, http.MethodGet, "/admin/api/dead-letters?limit=1", "", "Authorization", "Bearer "+token)
	require.Equal(t, http.StatusOK, code, body)
	before := srv.memory(t)
	for range pages {
		p := list()
		require.Len(t, p.Items, deadLetters)
		for _, it := range p.Items {
			assert.Equal(t, payloadBytes, it.PayloadBytes, "the payload's length is listed, not its bytes: %s", it.EventID)
		}
	}
	after := srv.memory(t)
	t.Logf("server memory: peak %d MiB before %d pages of %d dead letters of %d KiB, %d MiB after (resident %d MiB → %d MiB)",
		before.hwm>>20, pages, deadLetters, payloadBytes>>10, after.hwm>>20, before.rss>>20, after.rss>>20)
	assert.Less(t, after.hwm-before.hwm, int64(bound), "the server's peak resident memory grew by %d MiB while listing", (after.hwm-before.hwm)>>20)
}

// seedLargeDeadLetters stores n dead letters of size bytes each in schema,
// through pgstore.
func seedLargeDeadLetters(t *testing.T, dsn, schema string, n, size int) {
	t.Helper()
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	defer pool.Close()
	s, err := pgstore.New(pool, pgstore.WithSchema(schema), pgstore.WithEnqueueBatch(1))
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	now := time.Now().Add(-time.Hour).UTC()
	filler := strings.Repeat("x", size-64)
	for i := range n {
		payload := []byte(fmt.Sprintf(`{"id":"large-%03d","filler":"%s`, i, filler))
		payload = append(payload, strings.Repeat(" ", size-len(payload)-2)+`"}`...)
		env := webhooks.Envelope{
			Key:           webhooks.InboxKey{Provider: "demo", EventID: fmt.Sprintf("large-%03d", i)},
			EventType:     "order.large",
			Payload:       payload,
			Headers:       http.Header{"Content-Type": {"application/json"}},
			PayloadSHA256: sha256.Sum256(payload),
			ReceivedAt:    now,
		}
		_, err := s.Enqueue(ctx, env)
		require.NoError(t, err)
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 1})
		require.NoError(t, err)
		require.Len(t, leases, 1)
		require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptDeadLettered,
			Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: "too large"}, Now: now}))
	}
}
