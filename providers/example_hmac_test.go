package providers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// A preset is a plain HMACOptions value: register it as it is, or change a
// field first. Here GitHub's event type gets the body's action, so a
// pull request opening is "pull_request.opened" rather than "pull_request".
func ExampleGitHubOptions() {
	opts := providers.GitHubOptions()
	opts.Event.TypeSuffixPath = "action"
	verifier, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets("gh-secret"))
	if err != nil {
		fmt.Println(err)
		return
	}
	body := `{"action":"opened","number":42}`
	mac := hmac.New(sha256.New, []byte("gh-secret"))
	mac.Write([]byte(body))
	v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "github"}, &webhooks.Request{
		Method: http.MethodPost,
		Header: http.Header{
			"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(mac.Sum(nil))},
			"X-Github-Delivery":   {"72d3162e-cc78-11e3-81ab-4c9367dc0958"},
			"X-Github-Event":      {"pull_request"},
		},
		Body: []byte(body),
	})
	fmt.Println(v.EventType, err)
	// Output: pull_request.opened <nil>
}

// Stripe's scheme: a timestamp and one or more v1 signatures in
// Stripe-Signature, the event ID and type in the JSON body, and a
// five-minute window around the signed timestamp.
func ExampleStripeOptions() {
	now := time.Unix(1700000030, 0)
	opts := providers.StripeOptions()
	opts.Clock = webhookstest.NewClock(now)
	verifier, err := webhooks.NewHMACVerifier(opts,
		webhooks.StaticSecrets("whsec_old", "whsec_new")) // rolling the endpoint secret
	if err != nil {
		fmt.Println(err)
		return
	}
	body := `{"id":"evt_1","object":"event","type":"invoice.paid"}`
	sign := func(secret, ts string) string {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "." + body))
		return hex.EncodeToString(mac.Sum(nil))
	}
	verify := func(header string) {
		v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "stripe"}, &webhooks.Request{
			Method: http.MethodPost,
			Header: http.Header{"Stripe-Signature": {header}},
			Body:   []byte(body),
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(v.EventID, v.EventType, v.KeyID, v.OccurredAt.Unix())
	}
	verify("t=1700000000,v1=" + sign("whsec_new", "1700000000"))
	verify("t=1699990000,v1=" + sign("whsec_new", "1699990000"))
	// Output:
	// evt_1 invoice.paid static:1 1700000000
	// webhooks: verification failed: timestamp_expired: the timestamp is more than 5m0s in the past
}

// Slack checks that its Request URL answers: the url_verification
// challenge is signed like any event, and once its signature verified the
// verifier answers it. The gateway writes that answer and stores nothing.
func ExampleSlackOptions() {
	const secret = "slack-signing-secret"
	now := time.Unix(1741964966, 0)
	opts := providers.SlackOptions()
	opts.Clock = webhookstest.NewClock(now)
	verifier, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets(secret))
	if err != nil {
		fmt.Println(err)
		return
	}
	body := `{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:1741964966:" + body))
	req := &webhooks.Request{
		Method: http.MethodPost,
		Header: http.Header{
			"X-Slack-Signature":         {"v0=" + hex.EncodeToString(mac.Sum(nil))},
			"X-Slack-Request-Timestamp": {"1741964966"},
		},
		Body: []byte(body),
	}
	v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "slack"}, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Handshake.Header.Get("Content-Type"))
	fmt.Println(string(v.Handshake.Body))

	// Without the signature, the challenge is refused.
	req.Header.Del("X-Slack-Signature")
	_, err = verifier.Verify(context.Background(), webhooks.Route{Provider: "slack"}, req)
	fmt.Println(err)
	// Output:
	// text/plain; charset=utf-8
	// 3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P
	// webhooks: verification failed: missing_signature: header X-Slack-Signature is missing
}
