package sdkcheck

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sendgrid/sendgrid-go/helpers/eventwebhook"
	"github.com/twilio/twilio-go/client"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// Twilio: twilio-go's RequestValidator accepts webhookstest's form post;
// twilio-go and the entry both accept Twilio's documented example and
// refuse it with a parameter changed. The SDK cannot sign.
func TestTwilio(t *testing.T) {
	s := newSigner(t, "twilio")
	d := sign(t, s, "twilio")
	form, err := url.ParseQuery(string(d.Body))
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	for k := range form {
		params[k] = form.Get(k)
	}
	rv := client.NewRequestValidator(s.Credential())
	sig := d.Header.Get("X-Twilio-Signature")
	if !rv.Validate(d.URL, params, sig) {
		t.Fatal("twilio-go refuses webhookstest's delivery")
	}
	for k := range params {
		params[k] += "x"
		break
	}
	if rv.Validate(d.URL, params, sig) {
		t.Fatal("twilio-go accepted a changed parameter: the cross-check proves nothing")
	}

	var vec struct {
		AuthToken string            `json:"auth_token"`
		URL       string            `json:"url"`
		Params    map[string]string `json:"params"`
		Signature string            `json:"signature"`
	}
	loadVector(t, "twilio/webhooks-security-example.json", &vec)
	rv = client.NewRequestValidator(vec.AuthToken)
	if !rv.Validate(vec.URL, vec.Params, vec.Signature) {
		t.Fatal("twilio-go refuses Twilio's documented example")
	}
	u, err := url.Parse(vec.URL)
	if err != nil {
		t.Fatal(err)
	}
	post := func(params map[string]string) error {
		body := url.Values{}
		for k, v := range params {
			body.Set(k, v)
		}
		h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Twilio-Signature": {vec.Signature}}
		v, err := providers.New("twilio", providers.Config{Secrets: webhooks.StaticSecrets(vec.AuthToken), PublicURL: u.Scheme + "://" + u.Host})
		if err != nil {
			t.Fatal(err)
		}
		_, err = webhooks.VerifyHTTPRequest(t.Context(), v, webhooks.Route{Provider: "twilio"}, newRequest(t, vec.URL, []byte(body.Encode()), h), 0)
		return err
	}
	if err := post(vec.Params); err != nil {
		t.Fatalf("the entry refuses Twilio's documented example: %v", err)
	}
	changed := map[string]string{}
	for k, v := range vec.Params {
		changed[k] = v
	}
	changed["Digits"] = "4321"
	if rv.Validate(vec.URL, changed, vec.Signature) {
		t.Fatal("twilio-go accepted a changed parameter")
	}
	if post(changed) == nil {
		t.Fatal("the entry accepted a changed parameter")
	}
}

// SendGrid: sendgrid-go's eventwebhook.VerifySignature accepts
// webhookstest's delivery; sendgrid-go and the entry both accept
// SendGrid's published SDK test vector and refuse it tampered. The SDK
// cannot sign.
func TestSendGrid(t *testing.T) {
	s := newSigner(t, "sendgrid")
	key, err := eventwebhook.ConvertPublicKeyBase64ToECDSA(s.Credential())
	if err != nil {
		t.Fatal(err)
	}
	d := sign(t, s, "sendgrid")
	sig, ts := d.Header.Get(eventwebhook.VerificationHTTPHeader), d.Header.Get(eventwebhook.TimestampHTTPHeader)
	if ok, err := eventwebhook.VerifySignature(key, d.Body, sig, ts); !ok || err != nil {
		t.Fatalf("sendgrid-go refuses webhookstest's delivery: %v %v", ok, err)
	}
	if ok, _ := eventwebhook.VerifySignature(key, tampered(d.Body), sig, ts); ok {
		t.Fatal("sendgrid-go accepted a tampered body: the cross-check proves nothing")
	}

	var vec struct {
		Secret  string            `json:"secret"`
		Body    string            `json:"body"`
		Headers map[string]string `json:"headers"`
		Now     int64             `json:"now"`
	}
	loadVector(t, "sendgrid/catalog-vector.json", &vec)
	key, err = eventwebhook.ConvertPublicKeyBase64ToECDSA(vec.Secret)
	if err != nil {
		t.Fatal(err)
	}
	sig, ts = vec.Headers[eventwebhook.VerificationHTTPHeader], vec.Headers[eventwebhook.TimestampHTTPHeader]
	if ok, err := eventwebhook.VerifySignature(key, []byte(vec.Body), sig, ts); !ok || err != nil {
		t.Fatalf("sendgrid-go refuses SendGrid's published vector: %v %v", ok, err)
	}
	at := func(body string) error {
		v, err := providers.New("sendgrid", providers.Config{Secrets: webhooks.StaticSecrets(vec.Secret), Clock: webhookstest.NewClock(time.Unix(vec.Now, 0))})
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{"Content-Type": {"application/json"}}
		for k, v := range vec.Headers {
			h.Set(k, v)
		}
		_, err = webhooks.VerifyHTTPRequest(t.Context(), v, webhooks.Route{Provider: "sendgrid"}, newRequest(t, base+"sendgrid", []byte(body), h), 0)
		return err
	}
	if err := at(vec.Body); err != nil {
		t.Fatalf("the entry refuses SendGrid's published vector: %v", err)
	}
	bad := strings.Replace(vec.Body, "test_event", "test_evenT", 1)
	if ok, _ := eventwebhook.VerifySignature(key, []byte(bad), sig, ts); ok {
		t.Fatal("sendgrid-go accepted the vector tampered")
	}
	if at(bad) == nil {
		t.Fatal("the entry accepted the vector tampered")
	}
}
