package webhookstest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"
)

// Answer is what a provider expects back from its endpoint check.
type Answer struct {
	StatusCode int
	// ContentType is the media type expected, "" when any will do.
	ContentType string
	// Header holds other headers the answer must carry.
	Header http.Header
	// Body is the expected body; JSON bodies compare as JSON.
	Body []byte
}

// Challenge is a provider's endpoint check and the answer it expects,
// computed here from the provider's documentation, independently of the
// verifiers.
type Challenge struct {
	// Kind names the check, for example "GET hub.challenge".
	Kind     string
	Delivery *Delivery
	Want     Answer
}

// ChallengeNames lists the catalog entries that check an endpoint, sorted.
func ChallengeNames() []string {
	names := make([]string, 0, len(challenges))
	for n := range challenges {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Challenge returns the check the provider sends to url to verify the
// endpoint (the first challenge when it has several), and the answer it
// expects. verifyToken is the token the host configured, for providers
// that send one (meta). Asana's and Notion's handshakes hand the signer's
// secret over.
func (s *Signer) Challenge(rawURL, verifyToken string) (*Challenge, error) {
	mk, ok := challenges[s.name]
	if !ok {
		return nil, fmt.Errorf("webhookstest: %s sends no endpoint check", s.name)
	}
	return mk(s, rawURL, verifyToken)
}

func text(body string) Answer {
	return Answer{StatusCode: http.StatusOK, ContentType: "text/plain", Body: []byte(body)}
}

func jsonAnswer(v any) Answer {
	b, _ := json.Marshal(v)
	return Answer{StatusCode: http.StatusOK, ContentType: "application/json", Body: b}
}

func getTo(rawURL string, query url.Values, h http.Header) *Delivery {
	if h == nil {
		h = http.Header{}
	}
	u := rawURL
	if len(query) > 0 {
		u = addQuery(rawURL, query.Encode())
	}
	return &Delivery{Method: http.MethodGet, URL: u, Header: h}
}

// signedChallenge signs a body as an ordinary delivery of the entry.
func signedChallenge(s *Signer, rawURL string, body []byte, id string) (*Delivery, error) {
	return s.Sign(rawURL, Message{Body: body, ID: id, Type: "-"})
}

var challenges = map[string]func(s *Signer, rawURL, verifyToken string) (*Challenge, error){
	"meta": func(_ *Signer, rawURL, verifyToken string) (*Challenge, error) {
		c := "1158201444"
		return &Challenge{Kind: "GET hub.challenge", Want: text(c),
			Delivery: getTo(rawURL, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {verifyToken}, "hub.challenge": {c}}, nil)}, nil
	},
	"twitter": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		token := "crc-" + rand16()
		resp := "sha256=" + b64(macOf(sha256.New, []byte(s.secret), []byte(token)))
		return &Challenge{Kind: "GET crc_token", Want: jsonAnswer(map[string]string{"response_token": resp}),
			Delivery: getTo(rawURL, url.Values{"crc_token": {token}}, nil)}, nil
	},
	"dropbox": func(_ *Signer, rawURL, _ string) (*Challenge, error) {
		c := "dbx-" + rand16()
		want := text(c)
		want.Header = http.Header{"X-Content-Type-Options": {"nosniff"}}
		return &Challenge{Kind: "GET challenge", Want: want, Delivery: getTo(rawURL, url.Values{"challenge": {c}}, nil)}, nil
	},
	"okta": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		// Okta sends the hook's authentication header on the
		// verification GET as on every delivery.
		c := "okta-" + rand16()
		return &Challenge{Kind: "GET X-Okta-Verification-Challenge", Want: jsonAnswer(map[string]string{"verification": c}),
			Delivery: getTo(rawURL, nil, http.Header{"X-Okta-Verification-Challenge": {c}, "Authorization": {s.secret}})}, nil
	},
	"msgraph": func(_ *Signer, rawURL, _ string) (*Challenge, error) {
		token := "Validation: Testing client application reachability for subscription Request-Id: " + randomUUID()
		d := &Delivery{Method: http.MethodPost, URL: addQuery(rawURL, url.Values{"validationToken": {token}}.Encode()), Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}}
		return &Challenge{Kind: "POST validationToken", Want: text(token), Delivery: d}, nil
	},
	"twitch": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		c := "pogchamp-kappa-" + rand16()
		body := fmt.Appendf(nil, `{"challenge":%s,"subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","status":"webhook_callback_verification_pending","type":"channel.follow","version":"2","cost":1,"condition":{"broadcaster_user_id":"12826"},"transport":{"method":"webhook","callback":"https://example.com/webhooks/callback"},"created_at":%s}}`, q(c), q(time.Now().UTC().Format(time.RFC3339Nano)))
		d, err := s.Sign(rawURL, Message{Body: body, Type: "channel.follow"})
		if err != nil {
			return nil, err
		}
		d.Header.Set("Twitch-Eventsub-Message-Type", "webhook_callback_verification")
		return &Challenge{Kind: "webhook_callback_verification", Want: text(c), Delivery: d}, nil
	},
	"slack": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		c := "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
		d, err := signedChallenge(s, rawURL, fmt.Appendf(nil, `{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":%s,"type":"url_verification"}`, q(c)), "")
		if err != nil {
			return nil, err
		}
		return &Challenge{Kind: "url_verification", Want: text(c), Delivery: d}, nil
	},
	"zoom": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		plain := "qgg8vlvZRS6UYooatFL8Aw"
		d, err := signedChallenge(s, rawURL, fmt.Appendf(nil, `{"payload":{"plainToken":%s},"event_ts":%d,"event":"endpoint.url_validation"}`, q(plain), time.Now().UnixMilli()), "")
		if err != nil {
			return nil, err
		}
		enc := hex.EncodeToString(macOf(sha256.New, []byte(s.secret), []byte(plain)))
		return &Challenge{Kind: "endpoint.url_validation", Want: jsonAnswer(map[string]string{"plainToken": plain, "encryptedToken": enc}), Delivery: d}, nil
	},
	"discord": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		d, err := signedChallenge(s, rawURL, []byte(`{"id":"1312222222222222222","application_id":"1311111111111111111","type":1,"version":1}`), "")
		if err != nil {
			return nil, err
		}
		return &Challenge{Kind: "PING", Want: Answer{StatusCode: http.StatusOK, ContentType: "application/json", Body: []byte(`{"type":1}`)}, Delivery: d}, nil
	},
	"discord-events": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		d, err := signedChallenge(s, rawURL, []byte(`{"version":1,"application_id":"1311111111111111111","type":0}`), "")
		if err != nil {
			return nil, err
		}
		return &Challenge{Kind: "PING", Want: Answer{StatusCode: http.StatusNoContent}, Delivery: d}, nil
	},
	"asana": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		d := &Delivery{Method: http.MethodPost, URL: rawURL, Header: http.Header{"X-Hook-Secret": {s.secret}, "Content-Type": {"application/json"}}}
		return &Challenge{Kind: "X-Hook-Secret", Want: Answer{StatusCode: http.StatusOK, Header: http.Header{"X-Hook-Secret": {s.secret}}}, Delivery: d}, nil
	},
	"notion": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		d := &Delivery{Method: http.MethodPost, URL: rawURL, Header: http.Header{"Content-Type": {"application/json"}},
			Body: fmt.Appendf(nil, `{"verification_token":%s}`, q(s.secret))}
		return &Challenge{Kind: "verification_token", Want: Answer{StatusCode: http.StatusOK}, Delivery: d}, nil
	},
	"line": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		d, err := signedChallenge(s, rawURL, []byte(`{"destination":"U0123456789abcdef","events":[]}`), "")
		if err != nil {
			return nil, err
		}
		return &Challenge{Kind: "verification (no events)", Want: Answer{StatusCode: http.StatusOK}, Delivery: d}, nil
	},
	"woocommerce": func(_ *Signer, rawURL, _ string) (*Challenge, error) {
		d := &Delivery{Method: http.MethodPost, URL: rawURL, Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: []byte("webhook_id=12")}
		return &Challenge{Kind: "ping", Want: Answer{StatusCode: http.StatusOK}, Delivery: d}, nil
	},
	"figma": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		d, err := s.Sign(rawURL, Message{Type: "PING"})
		if err != nil {
			return nil, err
		}
		return &Challenge{Kind: "PING", Want: Answer{StatusCode: http.StatusOK}, Delivery: d}, nil
	},
	"sns": func(s *Signer, rawURL, _ string) (*Challenge, error) {
		if s.sns == nil {
			return nil, fmt.Errorf("webhookstest: sns signs with a certificate: use NewKeySigner")
		}
		id := randomUUID()
		body, err := s.sns.Sign(SNSMessage{Type: "SubscriptionConfirmation", MessageID: id, Token: rand16() + rand16(),
			Message:      "You have chosen to subscribe to the topic " + s.sns.TopicARN + ".\nTo confirm the subscription, visit the SubscribeURL included in this message.",
			SubscribeURL: "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=" + s.sns.TopicARN + "&Token=" + rand16()})
		if err != nil {
			return nil, err
		}
		d := &Delivery{Method: http.MethodPost, URL: rawURL, Header: http.Header{}, Body: body}
		setSNSHeaders(d, "SubscriptionConfirmation", id, s.sns.TopicARN)
		return &Challenge{Kind: "SubscriptionConfirmation", Want: Answer{StatusCode: http.StatusOK}, Delivery: d}, nil
	},
}

// HasChallenge reports whether the named entry checks its endpoint.
func HasChallenge(name string) bool {
	_, ok := challenges[name]
	return ok
}
