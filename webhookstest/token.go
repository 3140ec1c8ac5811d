package webhookstest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hookinbox/webhooks"
)

// TokenMessage is a webhook for SignToken and SignBasicAuth.
type TokenMessage struct {
	// ID is the event ID, written to the options' EventIDHeader when they
	// have one, or checked against the body at EventIDPath when non-empty.
	ID string
	// Type is the event type, written to EventTypeHeader or checked
	// against the body at EventTypePath when non-empty.
	Type string
	// Body is the raw request body.
	Body []byte
}

// SignToken returns the headers of a request that authenticates with token
// as opts describes (in opts.Header, after opts.Scheme when set), with the
// event ID and type headers the options read and Content-Type
// application/json when the body is JSON. For GitLab, pass
// webhooks.GitLabTokenOptions(): the result carries X-Gitlab-Token,
// X-Gitlab-Event and Idempotency-Key.
func SignToken(opts webhooks.TokenOptions, token string, msg TokenMessage) (http.Header, error) {
	if _, err := webhooks.NewTokenVerifier("webhookstest", opts, webhooks.StaticSecrets(token)); err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	if token == "" {
		return nil, errors.New("webhookstest: the token is empty")
	}
	value := token
	if opts.Scheme != "" {
		value = opts.Scheme + " " + token
	}
	h, err := metadataHeaders(opts.EventIDHeader, opts.EventIDPath, opts.EventTypeHeader, opts.EventTypePath, msg)
	if err != nil {
		return nil, err
	}
	h.Set(opts.Header, value)
	return h, nil
}

// SignBasicAuth returns the headers of a request that authenticates with
// Basic credentials (RFC 7617) for user and password, with the event ID and
// type headers opts reads and Content-Type application/json when the body
// is JSON.
func SignBasicAuth(opts webhooks.BasicAuthOptions, user, password string, msg TokenMessage) (http.Header, error) {
	if _, err := webhooks.NewBasicAuthVerifier("webhookstest", opts, webhooks.StaticSecrets(user+":"+password)); err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	if strings.Contains(user, ":") {
		return nil, errors.New("webhookstest: a Basic user name cannot contain a colon")
	}
	h, err := metadataHeaders(opts.EventIDHeader, opts.EventIDPath, opts.EventTypeHeader, opts.EventTypePath, msg)
	if err != nil {
		return nil, err
	}
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
	return h, nil
}

// NewTokenRequest returns a POST request to url carrying msg.Body and the
// headers SignToken makes, bound to t's context. It fails t if SignToken
// fails.
func NewTokenRequest(t testing.TB, url string, opts webhooks.TokenOptions, token string, msg TokenMessage) *http.Request {
	t.Helper()
	h, err := SignToken(opts, token, msg)
	if err != nil {
		t.Fatal(err)
	}
	return newRequest(t, http.MethodPost, url, msg.Body, h)
}

// metadataHeaders writes the event ID and type headers and Content-Type,
// and checks body-borne values.
func metadataHeaders(idHeader, idPath, typeHeader, typePath string, msg TokenMessage) (http.Header, error) {
	h := http.Header{}
	if json.Valid(msg.Body) {
		h.Set("Content-Type", "application/json")
	}
	for _, f := range []struct{ header, path, field, value string }{
		{idHeader, idPath, "ID", msg.ID},
		{typeHeader, typePath, "Type", msg.Type},
	} {
		switch {
		case f.header != "" && f.value != "":
			h.Set(f.header, f.value)
		case f.path != "" && f.value != "":
			got, ok := bodyValue(msg.Body, f.path)
			if !ok || got != f.value {
				return nil, fmt.Errorf("webhookstest: the body's %q is not TokenMessage.%s", f.path, f.field)
			}
		}
	}
	return h, nil
}
