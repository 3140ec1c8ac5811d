package providers

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/hookinbox/webhooks"
)

// SlackOptions returns the options for the Slack Events API.
//
// X-Slack-Signature is "v0=" and the hex HMAC-SHA-256 of "v0:" +
// X-Slack-Request-Timestamp + ":" + raw body, keyed with the app's signing
// secret (a Slack token, xoxb-… or xapp-…, is refused at construction);
// the timestamp (Unix seconds) must lie within
// webhooks.DefaultTolerance (five minutes) of the clock. The event ID is
// the envelope's "event_id" (Ev…) and the type the inner "event.type"
// ("app_mention", "message").
//
// Two Events API requests carry no event and are answered directly, after
// their signature verified, and never stored: the url_verification
// challenge Slack sends when a Request URL is saved (answered 200 with the
// challenge as text/plain), and the app_rate_limited notice (answered 200,
// since Slack counts failed deliveries when it disables subscriptions). An
// unsigned or stale challenge is rejected like any request.
//
// Slash commands and interactive components are signed the same way but
// expect an answer in the response, so they do not belong in an inbox;
// their form-encoded bodies have no event_id and are rejected with
// ReasonMalformedPayload.
//
//	webhooks.NewHMACVerifier(providers.SlackOptions(), webhooks.StaticSecrets(os.Getenv("SLACK_SIGNING_SECRET")))
//
// Sources: https://api.slack.com/authentication/verifying-requests-from-slack
// (now docs.slack.dev/authentication/verifying-requests-from-slack): the
// basestring "v0:timestamp:body", HMAC SHA256 with the signing secret, the
// "v0=" prefix, rejecting timestamps more than five minutes from local time,
// and the worked example in testdata/slack;
// https://api.slack.com/events/url_verification ("verify the request's
// authenticity and then respond in plaintext with the challenge attribute
// value"); https://api.slack.com/events/app_rate_limited (no inner event;
// subscriptions may be disabled when deliveries are not answered with 200);
// https://api.slack.com/apis/events-api (the outer envelope's event_id and
// event).
func SlackOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Slack-Signature",
			SignaturePrefix: "v0=",
			Encoding:        webhooks.EncodingHex,
			SignedContent:   "v0:{timestamp}:{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Slack-Request-Timestamp", Tolerance: webhooks.DefaultTolerance},
			Event:           webhooks.EventSource{IDPath: "event_id", TypePath: "event.type"},
		},
		CheckSecret: slackWrongKind,
		Handshake:   slackHandshake,
	}
}

// slackSecrets is where a Slack Events API body carries the app's
// deprecated verification token, a credential of its own: an app that
// still checks it accepts any request that carries it.
var slackSecrets = pathsOf("token")

// slackRedact stores an event without its verification token.
func slackRedact(req *webhooks.Request, v *webhooks.Verification) error {
	return slackSecrets.redact(req.Body, v, false)
}

// slackHandshake answers url_verification and acknowledges app_rate_limited.
// Any other body, JSON or not, goes on as an event.
func slackHandshake(req *webhooks.Request, _ webhooks.Verification, _ []byte) (*webhooks.Response, error) {
	// Only these two types answer here. A body that holds neither name,
	// as it is or with \u escapes, is an event: skip decoding it.
	if !mayHoldString(req.Body, "url_verification") && !mayHoldString(req.Body, "app_rate_limited") {
		return nil, nil
	}
	var msg struct {
		Type      string          `json:"type"`
		Challenge json.RawMessage `json:"challenge"`
	}
	if json.Unmarshal(req.Body, &msg) != nil {
		return nil, nil
	}
	switch msg.Type {
	case "url_verification":
		var challenge string
		if json.Unmarshal(msg.Challenge, &challenge) != nil || challenge == "" {
			return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the url_verification request has no challenge string")
		}
		return &webhooks.Response{
			StatusCode: http.StatusOK,
			Header:     http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
			Body:       []byte(challenge),
		}, nil
	case "app_rate_limited":
		return &webhooks.Response{StatusCode: http.StatusOK}, nil
	}
	return nil, nil
}

// mayHoldString reports whether a JSON body may hold the string s, which
// has no character JSON must escape: it holds it as it is, or has a \u
// escape that could write some of it.
func mayHoldString(body []byte, s string) bool {
	return bytes.Contains(body, []byte(s)) || bytes.Contains(body, []byte(`\u`))
}
