package webhookstest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

// TokenMessage is a webhook for SignToken and SignBasicAuth.
type TokenMessage struct {
	// ID is the event ID, written to the options' Event.IDHeader when they
	// have one, or checked against the body at Event.IDPath when non-empty.
	ID string
	// Type is the event type, written to Event.TypeHeader or checked
	// against the body at Event.TypePath when non-empty.
	Type string
	// Body is the raw request body.
	Body []byte
	// ContentType is the Content-Type header to send. Defaults to
	// "application/json" when Body is valid JSON, and to no header
	// otherwise.
	ContentType string
}

// SignToken returns the headers of a request that authenticates with token
// as opts describes (in opts.Header, after opts.Scheme when set), with the
// event ID and type headers the options read and Content-Type (see
// TokenMessage.ContentType). For GitLab, pass providers.GitLabTokenOptions():
// the result carries X-Gitlab-Token, X-Gitlab-Event and Idempotency-Key.
func SignToken(opts providers.TokenOptions, token string, msg TokenMessage) (http.Header, error) {
	if _, err := providers.NewTokenVerifier(opts, webhooks.StaticSecrets(token)); err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	if token == "" {
		return nil, errors.New("webhookstest: the token is empty")
	}
	value := token
	if opts.Scheme != "" {
		value = opts.Scheme + " " + token
	}
	h := contentTypeHeader(msg.ContentType, msg.Body)
	if err := writeMetadata(h, opts.Event, msg.ID, msg.Type, msg.Body, "TokenMessage"); err != nil {
		return nil, err
	}
	h.Set(opts.Header, value)
	return h, nil
}

// SignBasicAuth returns the headers of a request that authenticates with
// Basic credentials (RFC 7617) for user and password, with the event ID and
// type headers opts reads and Content-Type (see TokenMessage.ContentType).
func SignBasicAuth(opts providers.BasicAuthOptions, user, password string, msg TokenMessage) (http.Header, error) {
	if _, err := providers.NewBasicAuthVerifier(opts, webhooks.StaticSecrets(user+":"+password)); err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	if strings.Contains(user, ":") {
		return nil, errors.New("webhookstest: a Basic user name cannot contain a colon")
	}
	h := contentTypeHeader(msg.ContentType, msg.Body)
	if err := writeMetadata(h, opts.Event, msg.ID, msg.Type, msg.Body, "TokenMessage"); err != nil {
		return nil, err
	}
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
	return h, nil
}

// NewTokenRequest returns a POST request to url carrying msg.Body and the
// headers SignToken makes, bound to t's context. It fails t if SignToken
// fails.
func NewTokenRequest(t testing.TB, url string, opts providers.TokenOptions, token string, msg TokenMessage) *http.Request {
	t.Helper()
	h, err := SignToken(opts, token, msg)
	if err != nil {
		t.Fatal(err)
	}
	return newRequest(t, http.MethodPost, url, msg.Body, h)
}
