package providers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/hookinbox/webhooks"
)

// preset is a catalog verifier: a scheme's verifier with what the
// provider documents beyond the signature. It answers challenges that
// come before any signature (GET checks, unsigned handshakes), finishes
// the verification (an event type or ID the options cannot express, a
// semantic digest), and sets the provider's own answer.
type preset struct {
	inner webhooks.Verifier
	// challenge answers a request that is a provider challenge, before
	// the signature is checked: those the provider cannot sign (GET
	// checks, handshakes that hand a secret over). It returns nil, nil
	// for anything else.
	challenge func(ctx context.Context, route webhooks.Route, req *webhooks.Request) (*webhooks.Response, error)
	// get reports that the provider checks the endpoint with GET;
	// getDeliveries that it may deliver events with GET, which are then
	// the inner verifier's to verify (webhooks.GETDeliverer).
	get, getDeliveries bool
	// finish adjusts the verification of an authentic delivery; it may
	// set Handshake to answer it without storing it.
	finish func(req *webhooks.Request, v *webhooks.Verification) error
	answer *webhooks.Response
}

// Verify implements webhooks.Verifier.
func (p *preset) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if req == nil {
		return webhooks.Verification{}, errors.New("webhooks: nil request")
	}
	if p.challenge != nil {
		resp, err := p.challenge(ctx, route, req)
		if err != nil {
			return webhooks.Verification{}, err
		}
		if resp != nil {
			return webhooks.Verification{Handshake: resp}, nil
		}
	}
	if req.Method == http.MethodGet && !p.getDeliveries {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "a GET request that is not the provider's challenge")
	}
	v, err := p.inner.Verify(ctx, route, req)
	if err != nil || v.Handshake != nil {
		return v, err
	}
	if p.finish != nil {
		if err := p.finish(req, &v); err != nil {
			return webhooks.Verification{}, webhooks.HookError("preset verifier: reading the delivery", err)
		}
		if v.Handshake != nil {
			return v, nil
		}
	}
	if p.answer != nil {
		v.Answer = cloneResponse(p.answer)
	}
	return v, nil
}

// AcceptsGET implements webhooks.GETVerifier.
func (p *preset) AcceptsGET() bool { return p.get }

// DeliversByGET implements webhooks.GETDeliverer.
func (p *preset) DeliversByGET() bool { return p.getDeliveries }

// SecretHeaders implements webhooks.SecretHeaderVerifier for the schemes
// whose credential travels in a header.
func (p *preset) SecretHeaders() []string {
	if sv, ok := p.inner.(webhooks.SecretHeaderVerifier); ok {
		return sv.SecretHeaders()
	}
	return nil
}

// NeedsReplayStore implements webhooks.ReplayGuarded as the verifier it
// wraps does.
func (p *preset) NeedsReplayStore() bool { return webhooks.NeedsReplayStore(p.inner) }

// Every verifier of the package whose credential travels in a header says
// which headers (the body schemes redact theirs in Verification.Payload).
var (
	_ webhooks.SecretHeaderVerifier = (*preset)(nil)
	_ webhooks.SecretHeaderVerifier = (*TokenVerifier)(nil)
	_ webhooks.SecretHeaderVerifier = (*BasicAuthVerifier)(nil)
	_ webhooks.SecretHeaderVerifier = (*Ed25519Verifier)(nil)
	_ webhooks.SecretHeaderVerifier = (*TwilioVerifier)(nil)
	_ webhooks.SecretHeaderVerifier = (*sendGridVerifier)(nil)
	_ webhooks.SecretHeaderVerifier = (*anyHeader)(nil)
)

// Every verifier of the package that may need a ReplayStore says whether
// it does.
var (
	_ webhooks.ReplayGuarded = (*preset)(nil)
	_ webhooks.ReplayGuarded = (*anyHeader)(nil)
	_ webhooks.ReplayGuarded = (*mailgunVerifier)(nil)
	_ webhooks.ReplayGuarded = (*Ed25519Verifier)(nil)
)

// Format prints the verifier's type only, whatever the verb.
func (p *preset) Format(f fmt.State, _ rune) { formatVerifier(f, "Verifier") }

// cloneResponse returns a copy of r that its receiver may change.
func cloneResponse(r *webhooks.Response) *webhooks.Response {
	return &webhooks.Response{StatusCode: r.StatusCode, Header: r.Header.Clone(), Body: slices.Clone(r.Body)}
}

// Answers the catalog's providers document.
var (
	// answerOK is a 200 with no body, for providers that count only 200
	// as delivered (Meta, X).
	answerOK = &webhooks.Response{StatusCode: http.StatusOK}
	// answerAccepted is Microsoft Graph's 202 with no body.
	answerAccepted = &webhooks.Response{StatusCode: http.StatusAccepted}
)

// textResponse is a 200 text/plain answer.
func textResponse(body string) *webhooks.Response {
	return &webhooks.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "X-Content-Type-Options": {"nosniff"}},
		Body:       []byte(body),
	}
}

// jsonResponse is a 200 application/json answer of v.
func jsonResponse(v any) (*webhooks.Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &webhooks.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: b}, nil
}

// maxChallengeBytes bounds a challenge the verifier echoes.
const maxChallengeBytes = 1024

// maxKeyedTokenBytes bounds a challenge token a keyed answer is computed
// from (opaqueToken).
const maxKeyedTokenBytes = 128

// opaqueToken reports whether a challenge token that an answer keyed with
// the delivery secret is computed from (X's crc_token, Zoom's plainToken)
// has the shape of the opaque tokens those providers send: 1 to
// maxKeyedTokenBytes characters of the base64 and base64url alphabets
// (A-Z a-z 0-9 + / = _ -, which a UUID fits too). Such a token holds no
// "{", no white space and no ":", so it is neither a JSON body nor a
// "v0:{timestamp}:{body}" string: its HMAC is never a delivery's
// signature.
func opaqueToken(s string) bool {
	if s == "" || len(s) > maxKeyedTokenBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '=', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// jsonObject reports whether body is a JSON object by its first byte past
// JSON white space (the rest is parsed where it is read).
func jsonObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// hmacPreset builds the verifier of HMAC options with the config's clock.
func hmacPreset(c Config, opts webhooks.HMACOptions) (webhooks.Verifier, error) {
	opts.Clock = c.Clock
	return webhooks.NewHMACVerifier(opts, c.Secrets)
}

// semanticDigest returns the SHA-256 of a JSON body with the fields at the
// given paths removed (fields a provider changes on each redelivery, such
// as a retry count), so a redelivery is a duplicate rather than a
// conflict. Object keys are written sorted. A body that is not a JSON
// object is digested as it is.
func semanticDigest(body []byte, drop ...[]string) [sha256.Size]byte {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return sha256.Sum256(body)
	}
	for _, path := range drop {
		dropPath(doc, path)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return sha256.Sum256(body)
	}
	return sha256.Sum256(b)
}

// dropPath removes the field at path; a "*" segment stands for every item
// of an array.
func dropPath(node any, path []string) {
	switch n := node.(type) {
	case map[string]any:
		if len(path) == 1 {
			delete(n, path[0])
			return
		}
		dropPath(n[path[0]], path[1:])
	case []any:
		if path[0] == "*" {
			for _, item := range n {
				dropPath(item, path[1:])
			}
		}
	}
}

// firstKey returns the first key of a JSON object body, in sorted order,
// that satisfies keep; "" when there is none.
func firstKey(body []byte, keep func(string) bool) string {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		if keep(k) {
			return k
		}
	}
	return ""
}
