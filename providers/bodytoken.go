package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/hookinbox/webhooks"
)

// Schemes whose shared token travels in the JSON body: Microsoft Graph
// change notifications (clientState) and Figma webhooks (passcode). A
// token covers neither the body nor a time (see TokenOptions).

// bodyTokenVerifier compares the strings at paths of a JSON body with the
// route's secrets: every token the body carries must equal the same
// secret.
type bodyTokenVerifier struct {
	creds webhooks.CredentialResolver
	// tokens returns the tokens of a body, or a rejection.
	tokens func(body []byte) ([]string, error)
	event  webhooks.EventSource
	where  string // for messages
	// unique are the dotted paths of the body (see duplicateField) whose
	// keys must appear once. They are checked once the tokens matched, so
	// a body from anyone without the secret costs no walk.
	unique []string
	// secret are the paths of the tokens (and other credentials), which
	// the stored payload holds redacted.
	secret credentialPaths
}

func (v *bodyTokenVerifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if len(req.Body) == 0 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonEmptyBody, "the request body is empty")
	}
	tokens, err := v.tokens(req.Body)
	if err != nil {
		return webhooks.Verification{}, err
	}
	secrets, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return webhooks.Verification{}, fmt.Errorf("webhooks: body token verifier: resolving secrets: %w", err)
	}
	keyID, tried := "", 0
	for _, s := range secrets {
		if len(s.Value) == 0 {
			continue
		}
		tried++
		all := true
		for _, t := range tokens {
			if !constantTimeEqual([]byte(t), s.Value) {
				all = false
			}
		}
		if all && keyID == "" {
			keyID = s.ID
		}
	}
	if tried == 0 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonNoCredentials, "no secret is configured for this route")
	}
	if keyID == "" {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "the %s matches no secret", v.where)
	}
	if duplicateField(req.Body, v.unique...) {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body gives its %s twice", v.where)
	}
	// The payload is stored without the tokens, and an ID derived from
	// the body is the digest of that payload, not of one with the token
	// (which would let whoever reads the inbox test guesses of it).
	out := webhooks.Verification{KeyID: keyID}
	if err := v.secret.redact(req.Body, &out, true); err != nil {
		return webhooks.Verification{}, err
	}
	// The token authenticates the sender, not the content: nothing is
	// signed.
	return v.event.Extract(req, out, webhooks.SignedParts{})
}

// Format prints the verifier's type only, whatever the verb.
func (v *bodyTokenVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "bodyTokenVerifier") }

// Where the body token schemes carry credentials. Graph's notifications
// with resource data also carry validationTokens, JWTs Microsoft signs
// for the receiver: as good as a signature to a receiver that checks
// them, so not stored either.
var (
	figmaSecrets = pathsOf("passcode")
	graphSecrets = pathsOf("value.*.clientState", "validationTokens.*")
)

// graphEvent is where the msgraph entry finds the event ID and type: a
// notification collection carries no ID, so the ID is derived from the
// body; the type is the first notification's "changeType" ("created"), or
// its "lifecycleEvent" for lifecycle notifications.
var graphEvent = webhooks.EventSource{IDFromBody: true}

// graphTokens returns the clientState of every notification in a Microsoft
// Graph notification collection; each must be present.
func graphTokens(body []byte) ([]string, error) {
	var msg struct {
		Value []struct {
			ClientState *string `json:"clientState"`
		} `json:"value"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.Value) == 0 {
		return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body is not a Microsoft Graph notification collection")
	}
	out := make([]string, 0, len(msg.Value))
	for _, n := range msg.Value {
		if n.ClientState == nil || *n.ClientState == "" {
			return nil, webhooks.Reject(webhooks.ReasonMissingSignature, "a notification has no clientState")
		}
		out = append(out, *n.ClientState)
	}
	return out, nil
}

// graphType reads the first notification's changeType or lifecycleEvent.
func graphType(req *webhooks.Request, v *webhooks.Verification) error {
	var msg struct {
		Value []struct {
			ChangeType     string `json:"changeType"`
			LifecycleEvent string `json:"lifecycleEvent"`
		} `json:"value"`
	}
	if json.Unmarshal(req.Body, &msg) == nil && len(msg.Value) > 0 {
		v.EventType = msg.Value[0].ChangeType
		if msg.Value[0].LifecycleEvent != "" {
			v.EventType = msg.Value[0].LifecycleEvent
		}
	}
	return nil
}

// graphValidation answers Microsoft Graph's endpoint validation: a POST
// with a validationToken query parameter, echoed as text/plain. It cannot
// be authenticated (it carries no clientState); the echo reveals nothing.
func graphValidation(_ context.Context, _ webhooks.Route, req *webhooks.Request) (*webhooks.Response, error) {
	q := parseQuery(req)
	if _, ok := q["validationToken"]; !ok {
		return nil, nil
	}
	token := q.Get("validationToken")
	if token == "" || len(token) > maxChallengeBytes {
		return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the validation request has no usable validationToken")
	}
	return textResponse(token), nil
}

// figmaTokens returns the passcode of a Figma webhook body.
func figmaTokens(body []byte) ([]string, error) {
	var msg struct {
		Passcode *string `json:"passcode"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if dec.Decode(&msg) != nil {
		return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body is not JSON")
	}
	if msg.Passcode == nil || *msg.Passcode == "" {
		return nil, webhooks.Reject(webhooks.ReasonMissingSignature, "the body has no passcode")
	}
	return []string{*msg.Passcode}, nil
}

// figmaPing answers Figma's PING event, sent when a webhook is created,
// once its passcode matched.
func figmaPing(_ *webhooks.Request, v *webhooks.Verification) error {
	if v.EventType == "PING" {
		v.Handshake = &webhooks.Response{StatusCode: http.StatusOK}
	}
	return nil
}

// newBodyTokenVerifier checks the options of a body token scheme: secret
// are the paths of the credentials to redact, unique those whose keys
// must appear once.
func newBodyTokenVerifier(creds webhooks.CredentialResolver, where string, tokens func([]byte) ([]string, error), event webhooks.EventSource, secret credentialPaths, unique ...string) (*bodyTokenVerifier, error) {
	if err := optionsError("body token", event.Validate(), webhooks.CheckCredentials(creds, "secret", nil)); err != nil {
		return nil, err
	}
	if tokens == nil {
		return nil, errors.New("webhooks: body token verifier: no token reader")
	}
	return &bodyTokenVerifier{creds: creds, tokens: tokens, event: event, where: where, unique: unique, secret: secret}, nil
}
