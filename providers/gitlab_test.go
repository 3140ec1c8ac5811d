package providers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

const (
	gitlabBody = `{"object_kind":"push","ref":"refs/heads/main"}`
	gitlabKey  = "f5e5f430-f57b-4e6e-9fac-d9128cd7232f"
)

func newGitLabVerifier(t *testing.T, opts providers.TokenOptions, creds webhooks.CredentialResolver) *providers.TokenVerifier {
	t.Helper()
	v, err := providers.NewTokenVerifier(opts, creds)
	if err != nil {
		t.Fatalf("NewTokenVerifier: %v", err)
	}
	return v
}

func TestGitLabToken(t *testing.T) {
	t.Parallel()
	v := newGitLabVerifier(t, providers.GitLabTokenOptions(), webhooks.StaticSecrets("glpat-like-secret"))
	got := nhVerify(t, v, nhRequest(gitlabBody,
		"X-Gitlab-Token", "glpat-like-secret",
		"X-Gitlab-Event", "Push Hook",
		"Idempotency-Key", gitlabKey,
		"X-Gitlab-Event-UUID", "13792a34-cac6-4fda-95a8-c58e00a3954e",
		"X-Gitlab-Webhook-UUID", "02affd2d-2cba-4033-917d-ec22d5dc4b38",
	))
	want := webhooks.Verification{
		EventID:   gitlabKey,
		EventType: "Push Hook",
		KeyID:     "static:0",
		Unsigned:  webhooks.UnsignedFields{EventID: true, EventType: true, Body: true}, // a token signs nothing
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Verification = %+v, want %+v", got, want)
	}

	tests := []struct {
		name string
		req  *webhooks.Request
		want webhooks.Reason
	}{
		{"wrong token", nhRequest(gitlabBody, "X-Gitlab-Token", "glpat-like-secreT", "X-Gitlab-Event", "Push Hook", "Idempotency-Key", gitlabKey), webhooks.ReasonBadSignature},
		{"missing token", nhRequest(gitlabBody, "X-Gitlab-Event", "Push Hook", "Idempotency-Key", gitlabKey), webhooks.ReasonMissingSignature},
		{"duplicated token", nhRequest(gitlabBody, "X-Gitlab-Token", "glpat-like-secret", "X-Gitlab-Token", "glpat-like-secret", "Idempotency-Key", gitlabKey), webhooks.ReasonMalformedHeader},
		{"no Idempotency-Key (GitLab before 17.4)", nhRequest(gitlabBody, "X-Gitlab-Token", "glpat-like-secret", "X-Gitlab-Event", "Push Hook", "X-Gitlab-Event-UUID", "13792a34"), webhooks.ReasonMissingEventID},
		{"missing event type", nhRequest(gitlabBody, "X-Gitlab-Token", "glpat-like-secret", "Idempotency-Key", gitlabKey), webhooks.ReasonMissingEventType},
		{"duplicated event type", nhRequest(gitlabBody, "X-Gitlab-Token", "glpat-like-secret", "Idempotency-Key", gitlabKey, "X-Gitlab-Event", "Push Hook", "X-Gitlab-Event", "Tag Push Hook"), webhooks.ReasonMalformedHeader},
		// A token that does not match reveals nothing about the rest.
		{"wrong token and nothing else", nhRequest(gitlabBody, "X-Gitlab-Token", "nope"), webhooks.ReasonBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nhNoLeak(t, nhReject(t, v, tt.req, tt.want), "glpat-like-secret")
		})
	}
}

func TestGitLabTokenRotationAndOldGitLab(t *testing.T) {
	t.Parallel()
	v := newGitLabVerifier(t, providers.GitLabTokenOptions(), nhSecrets("2024-token", "old-token", "2025-token", "new-token"))
	for token, keyID := range map[string]string{"old-token": "2024-token", "new-token": "2025-token"} {
		got := nhVerify(t, v, nhRequest(gitlabBody, "X-Gitlab-Token", token, "X-Gitlab-Event", "Push Hook", "Idempotency-Key", gitlabKey))
		if got.KeyID != keyID {
			t.Errorf("KeyID %q, want %q", got.KeyID, keyID)
		}
	}

	// GitLab before 17.4: the body's digest identifies resends.
	opts := providers.GitLabTokenOptions()
	opts.Event.IDFromBody = true
	old := newGitLabVerifier(t, opts, webhooks.StaticSecrets("old-token"))
	got := nhVerify(t, old, nhRequest(gitlabBody, "X-Gitlab-Token", "old-token", "X-Gitlab-Event", "Push Hook"))
	if got.EventID != bodyID([]byte(gitlabBody)) {
		t.Errorf("EventID %q, want the body digest", got.EventID)
	}
	// A newer GitLab's key still wins.
	got = nhVerify(t, old, nhRequest(gitlabBody, "X-Gitlab-Token", "old-token", "X-Gitlab-Event", "Push Hook", "Idempotency-Key", gitlabKey))
	if got.EventID != gitlabKey {
		t.Errorf("EventID %q, want the Idempotency-Key", got.EventID)
	}
}

func TestGitLabTokenThroughGateway(t *testing.T) {
	t.Parallel()
	v := newGitLabVerifier(t, providers.GitLabTokenOptions(), webhooks.TenantSecrets(map[string][]string{"team-a": {"the-token"}}))
	gw, inbox, _ := nhGateway(t, "gitlab", v, nil)
	msg := webhookstest.TokenMessage{ID: gitlabKey, Type: "Push Hook", Body: []byte(gitlabBody)}
	for i, want := range []int{http.StatusAccepted, http.StatusOK} { // then a retry: duplicate
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, webhookstest.NewTokenRequest(t, "/webhooks/gitlab/team-a", providers.GitLabTokenOptions(), "the-token", msg))
		if rec.Code != want {
			t.Fatalf("delivery %d: status %d %s, want %d", i, rec.Code, rec.Body, want)
		}
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "gitlab", Tenant: "team-a", EventID: gitlabKey})
	if err != nil {
		t.Fatal(err)
	}
	if item.EventType != "Push Hook" || item.KeyID != "tenant:team-a:0" {
		t.Errorf("item type %q key %q", item.EventType, item.KeyID)
	}
	for name := range item.Headers {
		if strings.EqualFold(name, providers.GitLabTokenHeader) {
			t.Fatal("the GitLab token was stored with the item")
		}
	}
}

// gitlabSigningVector is testdata/gitlab/signing-token.json.
type gitlabSigningVector struct {
	Source       string            `json:"source"`
	SigningToken string            `json:"signing_token"`
	Body         string            `json:"body"`
	Headers      map[string]string `json:"headers"`
}

func TestGitLabSigningToken(t *testing.T) {
	t.Parallel()
	var vec gitlabSigningVector
	nhLoad(t, "gitlab/signing-token.json", &vec)
	if vec.Source == "" || vec.SigningToken == "" {
		t.Fatal("incomplete vector")
	}
	signedAt := time.Unix(1614265330, 0)
	v, err := newHMAC(providers.GitLabSigningOptions(), webhooks.StaticSecrets(vec.SigningToken), nhClock(signedAt.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	var kv []string
	for k, val := range vec.Headers {
		kv = append(kv, k, val)
	}
	got := nhVerify(t, v, nhRequest(vec.Body, kv...))
	if got.EventID != vec.Headers["Webhook-Id"] || got.EventType != "Push Hook" || !got.OccurredAt.Equal(signedAt) {
		t.Errorf("Verification %+v", got)
	}

	// Tampered body, wrong token, stale and future timestamps.
	tampered := nhRequest(strings.Replace(vec.Body, "2432232314", "2432232315", 1), kv...)
	nhReject(t, v, tampered, webhooks.ReasonBadSignature)
	wrong, err := newHMAC(providers.GitLabSigningOptions(), webhooks.StaticSecrets("whsec_"+"bm90IHRoZSBzaWduaW5nIHRva2Vu"), nhClock(signedAt))
	if err != nil {
		t.Fatal(err)
	}
	nhReject(t, wrong, nhRequest(vec.Body, kv...), webhooks.ReasonBadSignature)
	// Rotation: with the old and the new signing token live, the one that
	// matched is reported.
	rotating, err := newHMAC(providers.GitLabSigningOptions(), webhooks.StaticSecrets("whsec_"+"bm90IHRoZSBzaWduaW5nIHRva2Vu", vec.SigningToken), nhClock(signedAt))
	if err != nil {
		t.Fatal(err)
	}
	if got := nhVerify(t, rotating, nhRequest(vec.Body, kv...)); got.KeyID != "static:1" {
		t.Errorf("rotation: KeyID %q, want static:1", got.KeyID)
	}
	for _, now := range []time.Time{signedAt.Add(6 * time.Minute), signedAt.Add(-6 * time.Minute)} {
		late, err := newHMAC(providers.GitLabSigningOptions(), webhooks.StaticSecrets(vec.SigningToken), nhClock(now))
		if err != nil {
			t.Fatal(err)
		}
		nhReject(t, late, nhRequest(vec.Body, kv...), webhooks.ReasonTimestampExpired)
	}

	// Round trip through webhookstest, with GitLab's headers.
	msg := webhookstest.SignedMessage{ID: gitlabKey, Type: "Merge Request Hook", Timestamp: signedAt, Body: []byte(gitlabBody)}
	h, err := webhookstest.SignHMAC(providers.GitLabSigningOptions(), vec.SigningToken, msg)
	if err != nil {
		t.Fatal(err)
	}
	got = nhVerify(t, v, &webhooks.Request{Method: http.MethodPost, Header: h, Body: []byte(gitlabBody)})
	if got.EventID != gitlabKey || got.EventType != "Merge Request Hook" {
		t.Errorf("round trip: %+v", got)
	}
}

// TestGitLabSigningKeepsTheSecretTokenOut: a GitLab webhook may have a
// secret token beside its signing token, and then sends the token in
// X-Gitlab-Token beside the signature. The signing verifier declares that
// header, so a Receiver never stores the token with the item; the root
// names no provider's header of its own.
func TestGitLabSigningKeepsTheSecretTokenOut(t *testing.T) {
	t.Parallel()
	const signingToken = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	v, err := webhooks.NewHMACVerifier(providers.GitLabSigningOptions(), webhooks.StaticSecrets(signingToken))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(v.SecretHeaders(), func(h string) bool { return strings.EqualFold(h, providers.GitLabTokenHeader) }) {
		t.Errorf("SecretHeaders() = %q: the signing verifier does not declare %s", v.SecretHeaders(), providers.GitLabTokenHeader)
	}
	gw, inbox, _ := nhGateway(t, "gitlab", v, nil)
	msg := webhookstest.SignedMessage{ID: gitlabKey, Type: "Push Hook", Timestamp: time.Now(), Body: []byte(gitlabBody)}
	h, err := webhookstest.SignHMAC(providers.GitLabSigningOptions(), signingToken, msg)
	if err != nil {
		t.Fatal(err)
	}
	h.Set(providers.GitLabTokenHeader, "the-secret-token")
	req := httptest.NewRequest(http.MethodPost, "/webhooks/gitlab", strings.NewReader(gitlabBody))
	req.Header = h
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d %s, want 202", rec.Code, rec.Body)
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "gitlab", EventID: gitlabKey})
	if err != nil {
		t.Fatal(err)
	}
	for name := range item.Headers {
		if strings.EqualFold(name, providers.GitLabTokenHeader) {
			t.Fatal("the GitLab secret token was stored with a signed item")
		}
	}
}
