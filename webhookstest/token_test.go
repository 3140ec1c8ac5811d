package webhookstest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

func TestSignToken(t *testing.T) {
	t.Parallel()
	h, err := webhookstest.SignToken(providers.GitLabTokenOptions(), "tok", webhookstest.TokenMessage{ID: "idem-1", Type: "Push Hook", Body: []byte(`{"object_kind":"push"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"X-Gitlab-Token": "tok", "X-Gitlab-Event": "Push Hook", "Idempotency-Key": "idem-1", "Content-Type": "application/json"} {
		if got := h.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}

	bearer := providers.BearerTokenOptions()
	bearer.Event.IDPath = "id"
	h, err = webhookstest.SignToken(bearer, "tok", webhookstest.TokenMessage{ID: "e1", Body: []byte(`{"id":"e1"}`)})
	if err != nil || h.Get("Authorization") != "Bearer tok" {
		t.Fatalf("bearer: %v %v", h, err)
	}
	v, err := providers.NewTokenVerifier(bearer, webhooks.StaticSecrets("tok"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v.Verify(context.Background(), webhooks.Route{}, &webhooks.Request{Header: h, Body: []byte(`{"id":"e1"}`)}); err != nil || got.EventID != "e1" {
		t.Fatalf("round trip %+v, %v", got, err)
	}

	for name, tc := range map[string]struct {
		opts  providers.TokenOptions
		token string
		msg   webhookstest.TokenMessage
	}{
		"no header":       {providers.TokenOptions{Event: webhooks.EventSource{IDHeader: "X-Id"}}, "tok", webhookstest.TokenMessage{}},
		"empty token":     {providers.GitLabTokenOptions(), "", webhookstest.TokenMessage{}},
		"ID not in body":  {bearer, "tok", webhookstest.TokenMessage{ID: "e2", Body: []byte(`{"id":"e1"}`)}},
		"body not JSON":   {bearer, "tok", webhookstest.TokenMessage{ID: "e1", Body: []byte(`id=e1`)}},
		"no ID source":    {providers.BearerTokenOptions(), "tok", webhookstest.TokenMessage{}},
		"bad type header": {providers.TokenOptions{Header: "X-T", Event: webhooks.EventSource{IDHeader: "X-Id", TypeHeader: "X Type"}}, "tok", webhookstest.TokenMessage{}},
	} {
		if _, err := webhookstest.SignToken(tc.opts, tc.token, tc.msg); err == nil {
			t.Errorf("%s: SignToken succeeded", name)
		}
	}
}

func TestSignBasicAuth(t *testing.T) {
	t.Parallel()
	opts := providers.BasicAuthOptions{Event: webhooks.EventSource{IDHeader: "X-Id"}}
	h, err := webhookstest.SignBasicAuth(opts, "hooks", "p:w", webhookstest.TokenMessage{ID: "1", Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	req := &http.Request{Header: h}
	if user, pass, ok := req.BasicAuth(); !ok || user != "hooks" || pass != "p:w" || h.Get("X-Id") != "1" {
		t.Errorf("headers %v", h)
	}
	if _, err := webhookstest.SignBasicAuth(opts, "ho:oks", "pw", webhookstest.TokenMessage{}); err == nil {
		t.Error("a user name with a colon was accepted")
	}
	if _, err := webhookstest.SignBasicAuth(providers.BasicAuthOptions{}, "u", "p", webhookstest.TokenMessage{}); err == nil {
		t.Error("options without an ID source were accepted")
	}
}

func TestNewTokenRequest(t *testing.T) {
	t.Parallel()
	req := webhookstest.NewTokenRequest(t, "/webhooks/gitlab", providers.GitLabTokenOptions(), "tok", webhookstest.TokenMessage{ID: "k", Type: "Push Hook", Body: []byte("{}")})
	if req.Method != http.MethodPost || req.URL.Path != "/webhooks/gitlab" || req.Header.Get("X-Gitlab-Token") != "tok" {
		t.Errorf("request %s %s %v", req.Method, req.URL, req.Header)
	}
}
