package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// Verification alone, in front of a host's own handler, for a host that
// handles each request as it comes instead of through the inbox: the handler
// sees only verified requests, with the body intact and the Verification in
// the context; the middleware answers rejected ones itself. It neither
// stores nor deduplicates: the Receiver does that.
func ExampleVerifyMiddleware() {
	const secret = "It's a Secret to Everybody"
	github, err := providers.New("github", providers.Config{Secrets: webhooks.StaticSecrets(secret)})
	if err != nil {
		fmt.Println(err)
		return
	}
	verify := webhooks.VerifyMiddleware("github", github)

	mux := http.NewServeMux()
	mux.Handle("POST /hooks/github", verify(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := webhooks.VerificationFromContext(r.Context())
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("handler: %s %s, %d bytes, verified with %s\n", v.EventType, v.EventID, len(body), v.KeyID)
		fmt.Fprint(w, "handled")
	})))

	serve := func(d *webhookstest.Delivery) {
		req, err := d.Request(context.Background())
		if err != nil {
			fmt.Println(err)
			return
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Println(rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	d, err := webhookstest.Sign("github", secret, "https://example.com/hooks/github",
		webhookstest.Message{Type: "issues", ID: "72d3162e-cc78-11e3-81ab-4c9367dc0958", Body: []byte(`{"action":"opened"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	serve(d)

	d.Body = []byte(`{"action":"closed"}`) // changed after it was signed
	serve(d)
	// Output:
	// handler: issues 72d3162e-cc78-11e3-81ab-4c9367dc0958, 19 bytes, verified with static:0
	// 200 handled
	// 401 {"status":"rejected","reason":"bad_signature"}
}
