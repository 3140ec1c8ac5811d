package providers_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// fuzzPreset is a preset with a secret, ready to sign fuzzed requests.
type fuzzPreset struct {
	name   string
	opts   webhooks.HMACOptions
	v      *webhooks.HMACVerifier
	secret string
	key    []byte
	// content is the provider's documented signed content, written out
	// here rather than taken from the verifier under test.
	content func(ts, id string, body []byte) []byte
}

func fuzzPresets(f *testing.F, now time.Time) []fuzzPreset {
	clock := webhookstest.NewClock(now)
	swKey := []byte("fuzz-standard-webhooks-key-32byt")
	body := func(_, _ string, body []byte) []byte { return body }
	joined := func(prefix, sep string) func(ts, id string, body []byte) []byte {
		return func(ts, _ string, body []byte) []byte { return slices.Concat([]byte(prefix+ts+sep), body) }
	}
	list := []struct {
		name    string
		opts    webhooks.HMACOptions
		secret  string
		key     []byte
		content func(ts, id string, body []byte) []byte
	}{
		{"stripe", providers.StripeOptions(), "whsec_fuzz", nil, joined("", ".")},
		{"github", providers.GitHubOptions(), "gh-fuzz", nil, body},
		{"standardwebhooks", providers.StandardWebhooksOptions(), "whsec_" + base64.StdEncoding.EncodeToString(swKey), swKey,
			func(ts, id string, body []byte) []byte { return slices.Concat([]byte(id+"."+ts+"."), body) }},
		{"slack", providers.SlackOptions(), "slack-fuzz", nil, joined("v0:", ":")},
		{"shopify", providers.ShopifyOptions(), "shpss_fuzz", nil, body},
		{"paddle", providers.PaddleOptions(), "pdl_ntfset_fuzz", nil, joined("", ":")},
		{"linear", providers.LinearOptions(), "lin_wh_fuzz", nil, body},
		{"zoom", providers.ZoomOptions(), "zoom-fuzz", nil, joined("v0:", ":")},
	}
	out := make([]fuzzPreset, 0, len(list))
	for _, p := range list {
		opts := p.opts
		opts.Clock = clock
		v, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets(p.secret))
		if err != nil {
			f.Fatal(err)
		}
		key := p.key
		if key == nil {
			key = []byte(p.secret)
		}
		out = append(out, fuzzPreset{p.name, p.opts, v, p.secret, key, p.content})
	}
	return out
}

// sign adds a valid signature (and timestamp and ID headers) for req.
// HTTP strips blanks around header values, so the ID is trimmed as the
// server would.
func (p *fuzzPreset) sign(req *webhooks.Request, ts, id string) {
	o := &p.opts
	id = strings.TrimSpace(id)
	if o.Timestamp.Header != "" {
		req.Header.Set(o.Timestamp.Header, ts)
	}
	if o.Event.IDHeader != "" && id != "" {
		req.Header.Set(o.Event.IDHeader, id)
	}
	if o.Event.TypeHeader != "" {
		req.Header.Set(o.Event.TypeHeader, "fuzz.type")
	}
	mac := hmac.New(sha256.New, p.key) // every preset signs with HMAC-SHA-256
	mac.Write(p.content(ts, id, req.Body))
	sig := hex.EncodeToString(mac.Sum(nil))
	if o.Encoding == webhooks.EncodingBase64 {
		sig = base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	switch {
	case o.ItemSeparator == "":
		req.Header.Set(o.SignatureHeader, o.SignaturePrefix+sig)
	case o.Timestamp.Key != "":
		req.Header.Set(o.SignatureHeader, o.Timestamp.Key+o.KeyValueSeparator+ts+o.ItemSeparator+o.SignatureKey+o.KeyValueSeparator+sig)
	default:
		req.Header.Set(o.SignatureHeader, o.SignatureKey+o.KeyValueSeparator+sig)
	}
}

// FuzzHMACPresets signs arbitrary bodies correctly for every preset: the
// verifier must never panic, must answer only with a verification or a
// *VerificationError, and must never put the secret in an error.
func FuzzHMACPresets(f *testing.F) {
	now := time.Unix(1700000000, 0).UTC()
	presets := fuzzPresets(f, now)
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	for _, body := range []string{
		`{"type":"url_verification","challenge":"abc"}`,
		`{"type":"url_verification","challenge":7}`,
		`{"type":"app_rate_limited"}`,
		`{"event_id":"Ev1","event":{"type":"message"}}`,
		`{"event":"endpoint.url_validation","payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"}}`,
		`{"event":"endpoint.url_validation","payload":"x"}`,
		`{"event":"meeting.started","payload":{}}`,
		`{"id":"evt_1","type":"invoice.paid"}`,
		`{"event_id":"evt_1","event_type":"t"}`,
		`{"action":"create","webhookTimestamp":` + ms + `}`,
		`{"action":"create","webhookTimestamp":"` + ms + `"}`,
		`{"webhookTimestamp":1e400}`,
		`{"type":"user.created"}`,
		`[]`, `null`, `"s"`, `{`, ``,
	} {
		for i := range presets {
			f.Add([]byte(body), uint8(i), "msg_1")
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8, id string) {
		p := &presets[int(which)%len(presets)]
		req := &webhooks.Request{Method: http.MethodPost, Header: http.Header{}, Body: body}
		p.sign(req, strconv.FormatInt(now.Unix(), 10), id)
		got, err := p.v.Verify(context.Background(), webhooks.Route{Provider: p.name}, req)
		if err != nil {
			vErr, ok := errors.AsType[*webhooks.VerificationError](err)
			if !ok {
				t.Fatalf("%s: Verify returned a non-rejection error: %v", p.name, err)
			}
			if vErr.Reason == webhooks.ReasonBadSignature || vErr.Reason == webhooks.ReasonMissingSignature || vErr.Reason == webhooks.ReasonNoCredentials {
				// A header value the fuzzer chose (the ID) may be
				// malformed, but a correct signature is never "bad".
				t.Fatalf("%s: correctly signed request rejected: %v", p.name, err)
			}
			if !reflect.DeepEqual(got, webhooks.Verification{}) {
				t.Fatalf("%s: rejected request returned metadata %+v", p.name, got)
			}
			if strings.Contains(err.Error(), p.secret) || bytes.Contains([]byte(err.Error()), p.key) {
				t.Fatalf("%s: error %q contains the secret", p.name, err)
			}
			return
		}
		if got.Handshake == nil && got.EventID == "" {
			t.Fatalf("%s: accepted without an event ID or handshake: %+v", p.name, got)
		}
		wantDigest := [sha256.Size]byte{} // the Receiver's to compute
		if p.opts.Event.IDFromBody && got.Handshake == nil {
			wantDigest = sha256.Sum256(body) // the ID is made of it
		}
		if got.KeyID != "static:0" || got.PayloadSHA256 != wantDigest {
			t.Fatalf("%s: accepted request returned %+v", p.name, got)
		}
		if got.Handshake != nil && bytes.Contains(got.Handshake.Body, p.key) {
			t.Fatalf("%s: handshake answer contains the key", p.name)
		}
	})
}
