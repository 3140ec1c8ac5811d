package providers

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/webhooks"
)

// Presets for productivity and content platforms: Dropbox, Asana, Notion,
// Airtable, Box, DocuSign, Zendesk and Okta.

// DropboxOptions returns the options for Dropbox app webhooks:
// X-Dropbox-Signature is the hex HMAC-SHA-256 of the raw body keyed with
// the app secret. A notification lists the accounts with changes and
// carries no event ID, so the ID is derived from the signed body
// (Event.IDFromBody); there is no type. No time is signed.
//
// The catalog entry also answers Dropbox's GET verification request
// (?challenge=…) by echoing the challenge as text/plain with
// X-Content-Type-Options: nosniff. Dropbox does not authenticate it; the
// echo reveals nothing.
//
// Source: https://www.dropbox.com/developers/reference/webhooks.
func DropboxOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Dropbox-Signature",
			Event:           webhooks.EventSource{IDFromBody: true},
		},
	}
}

// dropboxChallenge echoes Dropbox's GET challenge.
func dropboxChallenge(_ context.Context, _ webhooks.Route, req *webhooks.Request) (*webhooks.Response, error) {
	if req.Method != http.MethodGet {
		return nil, nil
	}
	challenge := parseQuery(req).Get("challenge")
	if challenge == "" || len(challenge) > maxChallengeBytes {
		return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the verification request has no usable challenge")
	}
	return textResponse(challenge), nil
}

// OktaVerificationHeader carries Okta's one-time verification challenge.
const OktaVerificationHeader = "X-Okta-Verification-Challenge"

// OktaOptions returns the TokenOptions for Okta event hooks with header
// authentication: Okta sends the configured secret as the value of the
// configured header (Authorization by default; set Header to the
// authScheme key the hook was created with) and signs nothing. The event
// ID is the body's "eventId" and the type the first event's
// "data.events.0.eventType" ("user.lifecycle.create").
//
// The catalog entry answers Okta's one-time verification, a GET carrying
// X-Okta-Verification-Challenge, with {"verification": <the value>}, once
// the configured header of that GET matched a secret: Okta sends the
// authentication header on the verification request too, so an
// unauthenticated challenge is refused (401) and nothing is echoed.
//
// Source: https://developer.okta.com/docs/concepts/event-hooks/,
// https://developer.okta.com/docs/guides/event-hook-implementation/nodejs/main/
// (the one-time verification request and its JSON answer; the
// authorization header on every request) and Okta's support article
// "Unable to verify event hook" (a verification GET shown with its
// Authorization header).
func OktaOptions() TokenOptions {
	return TokenOptions{Header: "Authorization", Event: webhooks.EventSource{IDPath: "eventId", TypePath: "data.events.0.eventType"}}
}

// oktaVerification answers Okta's one-time GET verification once the
// token verifier authenticated it.
func oktaVerification(v *TokenVerifier) challengeFunc {
	return func(ctx context.Context, route webhooks.Route, req *webhooks.Request) (*webhooks.Response, error) {
		if req.Method != http.MethodGet {
			return nil, nil
		}
		if err := v.authenticate(ctx, route, req); err != nil {
			return nil, err
		}
		challenge, rej := webhooks.SingleHeader(req.Header, OktaVerificationHeader, webhooks.ReasonMalformedPayload)
		if rej != nil {
			return nil, rej
		}
		if len(challenge) > maxChallengeBytes {
			return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "header %s is too long", OktaVerificationHeader)
		}
		return jsonResponse(map[string]string{"verification": challenge})
	}
}

// AsanaOptions returns the options for Asana webhooks: X-Hook-Signature is
// the hex HMAC-SHA-256 of the raw body keyed with the secret Asana handed
// over in the webhook's handshake. A delivery lists events (a heartbeat
// lists none) and carries no event ID, so the ID is derived from the
// signed body (Event.IDFromBody); the type is the first event's "action"
// ("changed"), empty for a heartbeat. No time is signed.
//
// The handshake: while the host creates a webhook through Asana's API,
// Asana POSTs to the target with an X-Hook-Secret header and expects it
// echoed in a 200. Nothing authenticates that request, so whoever sends
// one could try to plant a secret of their own: the catalog entry hands
// the secret to Config.Secrets, which must implement SecretSaver, accept
// it only while the host expects a handshake for the route, and use it
// only once the host confirmed that its create call succeeded; two
// handshakes in one window discard both (HandshakeSecrets: Expect, then
// PendingHandshake.Confirm). Without a SecretSaver a handshake is refused
// (503).
//
// Source: https://developers.asana.com/docs/webhooks-guide (the
// X-Hook-Secret handshake, X-Hook-Signature, heartbeat events) and
// https://developers.asana.com/reference/createwebhook.
func AsanaOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Hook-Signature",
			Event:           webhooks.EventSource{IDFromBody: true, TypePath: "events.0.action", TypeOptional: true},
		},
	}
}

// AsanaSecretHeader carries the secret of Asana's handshake.
const AsanaSecretHeader = "X-Hook-Secret"

// asanaHandshake saves the secret of Asana's handshake and echoes it.
func asanaHandshake(creds webhooks.CredentialResolver) func(context.Context, webhooks.Route, *webhooks.Request) (*webhooks.Response, error) {
	return func(ctx context.Context, route webhooks.Route, req *webhooks.Request) (*webhooks.Response, error) {
		if len(req.Header.Values(AsanaSecretHeader)) == 0 {
			return nil, nil
		}
		secret, rej := webhooks.SingleHeader(req.Header, AsanaSecretHeader, webhooks.ReasonMissingSignature)
		if rej != nil {
			return nil, rej
		}
		if err := saveHandshakeSecret(ctx, creds, route, "Asana", []byte(secret)); err != nil {
			return nil, err
		}
		return &webhooks.Response{StatusCode: http.StatusOK, Header: http.Header{AsanaSecretHeader: {secret}}}, nil
	}
}

// NotionOptions returns the options for Notion integration webhooks:
// X-Notion-Signature is "sha256=" and the hex HMAC-SHA-256 of the raw body
// keyed with the subscription's verification_token. The event ID is the
// body's "id" and the type its "type" ("page.created"), both signed. No
// time is signed.
//
// When a subscription is created, Notion POSTs the verification_token in
// an unsigned body ({"verification_token": …}); the host pastes it into
// Notion's settings to verify the subscription, and it becomes the
// signing secret. The catalog entry hands it to Config.Secrets, which must
// implement SecretSaver (see AsanaOptions for why it holds a token only
// while the host expects one, and uses it only once confirmed), and
// answers 200. With HandshakeSecrets, PendingHandshake.HeldSecret gives
// the token to paste, and Confirm keeps it once Notion accepted it.
// Without a SecretSaver the request is refused (503).
//
// Source: https://developers.notion.com/reference/webhooks (the
// verification_token request, X-Notion-Signature "sha256=" HMAC-SHA-256
// of the body).
func NotionOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Notion-Signature",
			SignaturePrefix: "sha256=",
			Event:           webhooks.EventSource{IDPath: "id", TypePath: "type"},
		},
	}
}

// notionVerification saves the token of Notion's unsigned verification
// request.
func notionVerification(creds webhooks.CredentialResolver) func(context.Context, webhooks.Route, *webhooks.Request) (*webhooks.Response, error) {
	return func(ctx context.Context, route webhooks.Route, req *webhooks.Request) (*webhooks.Response, error) {
		if len(req.Header.Values("X-Notion-Signature")) > 0 || req.Method != http.MethodPost {
			return nil, nil
		}
		var msg map[string]json.RawMessage
		if json.Unmarshal(req.Body, &msg) != nil || len(msg) != 1 || msg["verification_token"] == nil {
			return nil, nil
		}
		var token string
		if json.Unmarshal(msg["verification_token"], &token) != nil || token == "" {
			return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the verification request has no verification_token string")
		}
		if err := saveHandshakeSecret(ctx, creds, route, "Notion", []byte(token)); err != nil {
			return nil, err
		}
		return &webhooks.Response{StatusCode: http.StatusOK}, nil
	}
}

// saveHandshakeSecret hands a secret from a handshake to creds.
func saveHandshakeSecret(ctx context.Context, creds webhooks.CredentialResolver, route webhooks.Route, provider string, secret []byte) error {
	saver, ok := creds.(SecretSaver)
	if !ok {
		return fmt.Errorf("webhooks: %s handed over a secret in a handshake, but Config.Secrets (%T) cannot keep it: use a SecretSaver such as HandshakeSecrets", provider, creds)
	}
	if err := saver.SaveSecret(ctx, route, secret); err != nil {
		if vErr, ok := errors.AsType[*webhooks.VerificationError](err); ok {
			return vErr
		}
		return fmt.Errorf("webhooks: saving the %s handshake secret: %w", provider, err)
	}
	return nil
}

// AirtableOptions returns the options for Airtable webhooks:
// X-Airtable-Content-MAC is "hmac-sha256=" and the hex HMAC-SHA-256 of the
// raw body keyed with the base64-decoded macSecretBase64 returned when the
// webhook was created (a secret that is not base64 is refused at
// construction). A notification only says that a base changed ("ping")
// and carries no event ID, so the ID is derived from the signed body; the
// type is empty. No time is signed.
//
// Source: https://airtable.com/developers/web/api/webhooks-overview#webhook-notification-delivery.
func AirtableOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Airtable-Content-Mac",
			SignaturePrefix: "hmac-sha256=",
			Event:           webhooks.EventSource{IDFromBody: true},
		},
		DecodeSecret: decodeBase64Secret("an Airtable macSecretBase64"),
	}
}

// BoxTolerance is the window BoxOptions uses: Box says to check that
// BOX-DELIVERY-TIMESTAMP is within ten minutes.
const BoxTolerance = 10 * time.Minute

// BoxOptions returns the options for Box V2 webhooks: BOX-SIGNATURE-PRIMARY
// is the base64 HMAC-SHA-256 of the raw body followed by
// BOX-DELIVERY-TIMESTAMP (RFC 3339), keyed with the app's primary
// signature key, and BOX-SIGNATURE-SECONDARY the same under the secondary
// key. These options read the primary header; the catalog entry checks
// both, with every configured key, so either key verifies during a
// rotation. The timestamp must lie within BoxTolerance of the clock. The
// event ID is the body's "id", which a retry keeps (BOX-DELIVERY-ID
// changes), and the type its "trigger" ("FILE.UPLOADED"), both signed.
//
// Source: https://developer.box.com/guides/webhooks/v2/signatures-v2/ and
// https://developer.box.com/guides/webhooks/v2/ (the payload headers; the
// delivery ID changes on retries while the body's ID stays).
func BoxOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "Box-Signature-Primary",
			Encoding:        webhooks.EncodingBase64,
			SignedContent:   "{body}{timestamp}",
			Timestamp:       webhooks.TimestampSource{Header: "Box-Delivery-Timestamp", Format: webhooks.TimestampRFC3339, Tolerance: BoxTolerance},
			Event:           webhooks.EventSource{IDPath: "id", TypePath: "trigger"},
		},
	}
}

// DocuSignOptions returns the options for DocuSign Connect with HMAC
// security: X-DocuSign-Signature-1 is the base64 HMAC-SHA-256 of the raw
// body keyed with the first Connect HMAC key; with several keys, each
// signs its own X-DocuSign-Signature-N. These options read the first; the
// catalog entry checks X-DocuSign-Signature-1 to -5 with every configured
// key. The event ID is the body's "event", "data.envelopeId" and
// "generatedDateTime" joined with ":" (DocuSign sends no event ID); the
// catalog entry digests the body without "retryCount", which a retry
// raises, so a retry is a duplicate. The type is "event"
// ("envelope-completed") and the API version "apiVersion". No time is
// signed.
//
// Source: https://developers.docusign.com/platform/webhooks/connect/hmac/
// and https://developers.docusign.com/platform/webhooks/connect/json-sim-event-model/.
func DocuSignOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Docusign-Signature-1",
			Encoding:        webhooks.EncodingBase64,
			Event:           webhooks.EventSource{IDFunc: docuSignID, TypePath: "event"},
		},
	}
}

// docuSignID joins the event, the envelope and the time it was generated.
func docuSignID(req *webhooks.Request, _ webhooks.Verification) (string, error) {
	var msg struct {
		Event     string `json:"event"`
		Generated string `json:"generatedDateTime"`
		Data      struct {
			EnvelopeID string `json:"envelopeId"`
		} `json:"data"`
	}
	if json.Unmarshal(req.Body, &msg) != nil || msg.Event == "" || msg.Generated == "" {
		return "", webhooks.Reject(webhooks.ReasonMissingEventID, "the Connect message has no event and generatedDateTime")
	}
	return msg.Event + ":" + msg.Data.EnvelopeID + ":" + msg.Generated, nil
}

// docuSignFinish digests a message without its retry count and reads the
// API version.
func docuSignFinish(req *webhooks.Request, v *webhooks.Verification) error {
	v.PayloadSHA256 = semanticDigest(req.Body, []string{"retryCount"})
	var msg struct {
		APIVersion string `json:"apiVersion"`
	}
	if json.Unmarshal(req.Body, &msg) == nil {
		v.APIVersion = msg.APIVersion
	}
	return nil
}

// ZendeskOptions returns the options for Zendesk webhooks:
// X-Zendesk-Webhook-Signature is the base64 HMAC-SHA-256 of
// X-Zendesk-Webhook-Signature-Timestamp (RFC 3339) followed by the raw
// body, keyed with the webhook's signing secret. The timestamp must lie
// within webhooks.DefaultTolerance (Zendesk documents none). The event ID
// is X-Zendesk-Webhook-Invocation-Id, which is not signed; the type is the
// body's "type" for event-subscribed webhooks, empty for trigger webhooks
// whose body the admin wrote.
//
// Source: https://developer.zendesk.com/documentation/webhooks/verifying/.
func ZendeskOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Zendesk-Webhook-Signature",
			Encoding:        webhooks.EncodingBase64,
			SignedContent:   "{timestamp}{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Zendesk-Webhook-Signature-Timestamp", Format: webhooks.TimestampRFC3339, Tolerance: webhooks.DefaultTolerance},
			Event:           webhooks.EventSource{IDHeader: "X-Zendesk-Webhook-Invocation-Id", TypePath: "type", TypeOptional: true},
		},
	}
}

// anyHeader verifies a request whose signature may be in one of several
// headers (Box's primary and secondary, DocuSign's numbered ones): each
// verifier reads one header, and the first that verifies wins. When none
// does, the rejection of the first verifier whose header was present is
// returned.
type anyHeader struct {
	headers   []string
	verifiers []webhooks.Verifier
	secret    []string // SecretHeaders: headers, then what verifiers declare
}

func (a *anyHeader) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	var first error
	for i, v := range a.verifiers {
		if i > 0 && len(req.Header.Values(a.headers[i])) == 0 {
			continue
		}
		got, err := v.Verify(ctx, route, req)
		if err == nil {
			return got, nil
		}
		if _, ok := errors.AsType[*webhooks.VerificationError](err); !ok {
			return webhooks.Verification{}, err
		}
		if first == nil {
			first = err
		}
	}
	return webhooks.Verification{}, first
}

// SecretHeaders implements webhooks.SecretHeaderVerifier: every header a
// signature may be in, and every header its verifiers declare (their
// fallbacks and other signature headers).
func (a *anyHeader) SecretHeaders() []string { return a.secret }

// NeedsReplayStore implements webhooks.ReplayGuarded: whether any of its
// verifiers needs one.
func (a *anyHeader) NeedsReplayStore() bool {
	return slices.ContainsFunc(a.verifiers, webhooks.NeedsReplayStore)
}

// newAnyHeader builds one HMAC verifier per signature header.
func newAnyHeader(c Config, opts webhooks.HMACOptions, headers ...string) (webhooks.Verifier, error) {
	a := &anyHeader{headers: headers}
	for _, h := range headers {
		o := opts
		o.SignatureHeader = h
		v, err := hmacPreset(c, o)
		if err != nil {
			return nil, err
		}
		a.verifiers = append(a.verifiers, v)
	}
	a.secret = slices.Clone(headers)
	for _, v := range a.verifiers {
		if sv, ok := v.(webhooks.SecretHeaderVerifier); ok {
			for _, h := range sv.SecretHeaders() {
				if !slices.ContainsFunc(a.secret, func(k string) bool { return strings.EqualFold(k, h) }) {
					a.secret = append(a.secret, h)
				}
			}
		}
	}
	return a, nil
}

// constantTimeEqual compares two strings through their SHA-256 digests, so
// not even their lengths leak.
func constantTimeEqual(a, b []byte) bool {
	x, y := sha256.Sum256(a), sha256.Sum256(b)
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}
