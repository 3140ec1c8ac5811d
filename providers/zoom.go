package providers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/hookinbox/webhooks"
)

// ZoomOptions returns the options for Zoom webhooks (event subscriptions
// verified with the webhook secret token).
//
// x-zm-signature is "v0=" and the hex HMAC-SHA-256 of "v0:" +
// x-zm-request-timestamp + ":" + raw body keyed with the secret token; the
// timestamp (Unix seconds) must lie within webhooks.DefaultTolerance (five
// minutes; Zoom documents no window) of the clock. The type is the body's
// "event" ("meeting.started").
//
// Zoom sends no event ID, so the ID is derived from the body
// (Event.IDFromBody): "sha256:" and the hex SHA-256 of the raw body, so a
// redelivery of the same body is a duplicate. Zoom retries after 5, 20 and
// 60 minutes and does not document whether a retry is signed anew; if
// retries arrive with their first timestamp, raise Timestamp.Tolerance to
// about 90 minutes (a replay inside the window has the same body, hence
// the same ID, and is stored once).
//
// The endpoint.url_validation challenge (sent when the endpoint is saved
// and every 72 hours) is signed like any event; after its signature
// verified it is answered with {"plainToken": …, "encryptedToken": …}, the
// encrypted token being the hex HMAC-SHA-256 of the plain token under the
// secret that verified the request, and never stored. That HMAC is made
// like a delivery's signature, under the same key, so a plain token must
// be of Zoom's opaque shape (1 to 128 characters of the base64 and
// base64url alphabets): it then holds no ":" and is never the
// "v0:{timestamp}:{body}" of a delivery, and its answer never a signature.
//
//	webhooks.NewHMACVerifier(providers.ZoomOptions(), webhooks.StaticSecrets(os.Getenv("ZOOM_WEBHOOK_SECRET_TOKEN")))
//
// Sources: https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events
// (the message "v0:{x-zm-request-timestamp}:{request body}", HMAC SHA-256
// with the secret token, hex, prefixed "v0=", compared to x-zm-signature),
// https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint
// (the endpoint.url_validation body with payload.plainToken, the response
// {"plainToken", "encryptedToken"} with the token hashed with HMAC SHA-256
// under the secret token in hex, within 3 seconds, 200 or 204), Zoom's
// sample https://github.com/zoom/webhook-sample (verifies x-zm-signature
// before answering the challenge) and
// https://devsupport.zoom.us/hc/en-us/articles/360059893812-Webhook-delays
// (retries after 5, 20 and 60 minutes).
func ZoomOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Zm-Signature",
			SignaturePrefix: "v0=",
			Encoding:        webhooks.EncodingHex,
			SignedContent:   "v0:{timestamp}:{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Zm-Request-Timestamp", Tolerance: webhooks.DefaultTolerance},
			Event:           webhooks.EventSource{IDFromBody: true, TypePath: "event"},
		},
		Handshake: zoomHandshake,
	}
}

// zoomHandshake answers Zoom's endpoint.url_validation challenge with the
// plain token and its HMAC under the key that verified the request.
func zoomHandshake(req *webhooks.Request, _ webhooks.Verification, key []byte) (*webhooks.Response, error) {
	if !mayHoldString(req.Body, "endpoint.url_validation") {
		return nil, nil // an event: skip decoding it
	}
	var msg struct {
		Event   string `json:"event"`
		Payload struct {
			PlainToken json.RawMessage `json:"plainToken"`
		} `json:"payload"`
	}
	if json.Unmarshal(req.Body, &msg) != nil || msg.Event != "endpoint.url_validation" {
		return nil, nil
	}
	var plainToken string
	if json.Unmarshal(msg.Payload.PlainToken, &plainToken) != nil || plainToken == "" {
		return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the endpoint.url_validation request has no payload.plainToken string")
	}
	// The answer is an HMAC under the key deliveries are signed with:
	// only a token with no ":" can never be a "v0:{timestamp}:{body}".
	if !opaqueToken(plainToken) {
		return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the endpoint.url_validation plainToken is not 1 to 128 characters A-Z, a-z, 0-9, +, /, =, _ and -")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(plainToken))
	body, err := json.Marshal(struct {
		PlainToken     string `json:"plainToken"`
		EncryptedToken string `json:"encryptedToken"`
	}{plainToken, hex.EncodeToString(mac.Sum(nil))})
	if err != nil {
		return nil, err
	}
	return &webhooks.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       body,
	}, nil
}
