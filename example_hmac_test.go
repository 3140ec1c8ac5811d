package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/webhookstest"
)

// The generic HMAC verifier is configured by fields: here GitHub's scheme
// (package providers has it ready as providers.GitHubOptions). The request
// is GitHub's documented test delivery.
func ExampleNewHMACVerifier() {
	verifier, err := webhooks.NewHMACVerifier(webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Hub-Signature-256",
			SignaturePrefix: "sha256=",
			SignedContent:   "{body}",
			Event:           webhooks.EventSource{IDHeader: "X-GitHub-Delivery", TypeHeader: "X-GitHub-Event"},
		},
	}, webhooks.StaticSecrets("It's a Secret to Everybody"))
	if err != nil {
		fmt.Println(err)
		return
	}

	req := &webhooks.Request{
		Method: http.MethodPost,
		Header: http.Header{
			"X-Hub-Signature-256": {"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"},
			"X-Github-Delivery":   {"72d3162e-cc78-11e3-81ab-4c9367dc0958"},
			"X-Github-Event":      {"ping"},
		},
		Body: []byte("Hello, World!"),
	}
	v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "github"}, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("event:", v.EventID, v.EventType)
	fmt.Println("verified with:", v.KeyID)

	// A tampered body is rejected with a reason code and no secret.
	req.Body = []byte("Hello, World?")
	_, err = verifier.Verify(context.Background(), webhooks.Route{Provider: "github"}, req)
	fmt.Println(errors.Is(err, webhooks.ReasonBadSignature))
	fmt.Println(err)
	// Output:
	// event: 72d3162e-cc78-11e3-81ab-4c9367dc0958 ping
	// verified with: static:0
	// true
	// webhooks: verification failed: bad_signature: no signature in X-Hub-Signature-256 matches
}

// A host that receives one provider's webhooks for several accounts gives
// each tenant its own secrets: a request for tenant acme verifies only with
// acme's, and a tenant with none configured is refused.
func ExampleTenantSecrets() {
	now := time.Unix(1700000000, 0)
	verifier, err := webhooks.NewHMACVerifier(webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			SignedContent:   "{timestamp}.{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Timestamp"},
			Event:           webhooks.EventSource{IDHeader: "X-Event-Id"},
		},
		Clock: webhookstest.NewClock(now),
	}, webhooks.TenantSecrets(map[string][]string{
		"acme":   {"acme-old", "acme-new"}, // rotating
		"globex": {"globex-secret"},
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, ts := `{"amount":42}`, strconv.FormatInt(now.Unix(), 10)
	send := func(tenant, secret string) {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "." + body))
		v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "billing", Tenant: tenant}, &webhooks.Request{
			Method: http.MethodPost,
			Header: http.Header{"X-Signature": {hex.EncodeToString(mac.Sum(nil))}, "X-Timestamp": {ts}, "X-Event-Id": {"e1"}},
			Body:   []byte(body),
		})
		if err != nil {
			fmt.Println(tenant+":", err)
			return
		}
		fmt.Println(tenant+":", "verified with", v.KeyID)
	}
	send("acme", "acme-new")
	send("acme", "globex-secret")
	send("initech", "acme-new")
	// Output:
	// acme: verified with tenant:acme:1
	// acme: webhooks: verification failed: bad_signature: no signature in X-Signature matches
	// initech: webhooks: verification failed: no_credentials: no usable secret is configured for this route
}
