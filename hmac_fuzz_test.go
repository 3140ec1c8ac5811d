package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzHeaderFormats are the header shapes the parser fuzz target cycles
// through: GitHub, Stripe, Standard Webhooks, and an unprefixed base64
// SHA-512 value.
var fuzzHeaderFormats = []signatureFormat{
	{prefix: "sha256=", encoding: EncodingHex, size: sha256.Size},
	{itemSep: ",", kvSep: "=", signatureKey: "v1", timestampKey: "t", encoding: EncodingHex, size: sha256.Size},
	{itemSep: " ", kvSep: ",", signatureKey: "v1", encoding: EncodingBase64, size: sha256.Size},
	{encoding: EncodingBase64, size: 64},
}

const fuzzHeaderName = "X-Fuzz-Signature"

// canonicalHeader writes parsed back in f's shape, lower-case hex or padded
// standard base64.
func canonicalHeader(f *signatureFormat, p parsedSignatureHeader) string {
	encode := hex.EncodeToString
	if f.encoding == EncodingBase64 {
		encode = base64.StdEncoding.EncodeToString
	}
	if f.itemSep == "" {
		return f.prefix + encode(p.signatures[0])
	}
	var items []string
	if p.timestamp != "" {
		items = append(items, f.timestampKey+f.kvSep+p.timestamp)
	}
	for _, sig := range p.signatures {
		items = append(items, f.signatureKey+f.kvSep+encode(sig))
	}
	return strings.Join(items, f.itemSep)
}

// knownDetails collects the rejection details f can produce, from inputs
// that reach each rejection. Every detail of a fuzzed input must be one of
// them: a detail that depended on the input could echo it.
func knownDetails(f *signatureFormat) map[string]bool {
	sig := strings.Repeat("a", hex.EncodedLen(f.size))
	if f.encoding == EncodingBase64 {
		sig = base64.StdEncoding.EncodeToString(make([]byte, f.size))
	}
	inputs := []string{"", "x", f.prefix + "x"}
	if f.itemSep != "" {
		kv := func(k, v string) string { return k + f.kvSep + v }
		inputs = append(inputs,
			kv("other", "1"),
			kv(f.signatureKey, "x"),
			f.signatureKey,
			kv(f.timestampKey, "1")+f.itemSep+kv(f.timestampKey, "1")+f.itemSep+kv(f.signatureKey, sig),
		)
	}
	details := make(map[string]bool)
	for _, in := range inputs {
		if _, rej := f.parse(in, fuzzHeaderName); rej != nil {
			details[rej.Detail] = true
		}
	}
	return details
}

func FuzzHMACSignatureHeader(f *testing.F) {
	hexSig := hex.EncodeToString(bytes.Repeat([]byte{0xab}, 32))
	b64Sig := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xcd}, 32))
	b64Sig512 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xef}, 64))
	seeds := []struct {
		value  string
		format uint8
	}{
		{"sha256=" + hexSig, 0},
		{"sha256=" + strings.ToUpper(hexSig), 0},
		{"sha1=" + hexSig[:40], 0},
		{"sha256=" + hexSig + "0", 0},
		{"t=1492774577,v1=" + hexSig + ",v1=" + hexSig + ",v0=" + hexSig, 1},
		{" t=1 , v1=" + hexSig + " ,", 1},
		{"t=1,t=2,v1=" + hexSig, 1},
		{"v1=" + hexSig + ",v1", 1},
		{"v1," + b64Sig + " v1a," + b64Sig + "  v1," + strings.TrimRight(b64Sig, "="), 2},
		{"v1," + strings.NewReplacer("+", "-", "/", "_").Replace(b64Sig), 2},
		{"v1,\r\n" + b64Sig, 2},
		{b64Sig512, 3},
		{strings.TrimRight(b64Sig512, "="), 3},
		{"", 1},
	}
	for _, s := range seeds {
		f.Add(s.value, s.format)
	}
	details := make([]map[string]bool, len(fuzzHeaderFormats))
	for i := range fuzzHeaderFormats {
		details[i] = knownDetails(&fuzzHeaderFormats[i])
	}

	f.Fuzz(func(t *testing.T, value string, format uint8) {
		i := int(format) % len(fuzzHeaderFormats)
		sf := &fuzzHeaderFormats[i]
		got, rej := sf.parse(value, fuzzHeaderName)

		// Deterministic.
		again, rej2 := sf.parse(value, fuzzHeaderName)
		if !sameParse(got, again) || !sameRejection(rej, rej2) {
			t.Fatalf("parse(%q) is not deterministic", value)
		}

		if rej != nil {
			if rej.Reason != ReasonMissingSignature && rej.Reason != ReasonMalformedHeader {
				t.Fatalf("parse(%q): unexpected reason %q", value, rej.Reason)
			}
			if got.signatures != nil || got.timestamp != "" {
				t.Fatalf("parse(%q) rejected but returned %+v", value, got)
			}
			if !details[i][rej.Detail] {
				t.Fatalf("parse(%q): detail %q is not one of the fixed details", value, rej.Detail)
			}
		} else {
			if len(got.signatures) == 0 {
				t.Fatalf("parse(%q) accepted no signatures", value)
			}
			for _, sig := range got.signatures {
				if len(sig) != sf.size {
					t.Fatalf("parse(%q) returned a %d-byte signature, want %d", value, len(sig), sf.size)
				}
			}
			if sf.timestampKey == "" && got.timestamp != "" {
				t.Fatalf("parse(%q) found a timestamp without a timestamp key", value)
			}
			if strings.Trim(got.timestamp, " \t") != got.timestamp || (sf.itemSep != "" && strings.Contains(got.timestamp, sf.itemSep)) {
				t.Fatalf("parse(%q) returned timestamp %q with blanks or a separator", value, got.timestamp)
			}
			// Written back canonically, the header parses to the same.
			canon := canonicalHeader(sf, got)
			back, rej := sf.parse(canon, fuzzHeaderName)
			if rej != nil || !sameParse(got, back) {
				t.Fatalf("parse(%q) = %+v, but its canonical form %q parses to %+v, %v", value, got, canon, back, rej)
			}
		}

		if sf.itemSep != "" {
			// Items with unknown keys change nothing.
			extra := value + sf.itemSep + "x-unknown" + sf.kvSep + "1"
			withExtra, rejExtra := sf.parse(extra, fuzzHeaderName)
			if !sameParse(got, withExtra) || (rej == nil) != (rejExtra == nil) || (rej != nil && rej.Reason != rejExtra.Reason) {
				t.Fatalf("parse(%q) = %+v, %v but with an unknown item %+v, %v", value, got, rej, withExtra, rejExtra)
			}
		}
	})
}

func sameParse(a, b parsedSignatureHeader) bool {
	return a.timestamp == b.timestamp && slices.EqualFunc(a.signatures, b.signatures, bytes.Equal)
}

func sameRejection(a, b *VerificationError) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// FuzzHMACVerify runs whole requests through a Standard-Webhooks-style
// verifier: it must never panic, must reject with a *VerificationError, and
// may accept only a correctly signed request.
func FuzzHMACVerify(f *testing.F) {
	key := []byte("fuzz-key-0123456789abcdef")
	now := time.Unix(1700000000, 0).UTC()
	opts := HMACOptions{
		SignatureHeader:   "Webhook-Signature",
		ItemSeparator:     " ",
		KeyValueSeparator: ",",
		SignatureKey:      "v1",
		TimestampHeader:   "Webhook-Timestamp",
		Encoding:          EncodingBase64,
		SignedContent:     SignIDTimestampBody,
		EventIDHeader:     "Webhook-Id",
		EventTypePath:     "type",
		DecodeSecret: func(b []byte) ([]byte, error) {
			return base64.StdEncoding.DecodeString(strings.TrimPrefix(string(b), "whsec_"))
		},
	}
	v, err := NewHMACVerifier("fuzz", opts, StaticSecrets("whsec_"+base64.StdEncoding.EncodeToString(key)), ClockFunc(func() time.Time { return now }))
	if err != nil {
		f.Fatal(err)
	}
	sign := func(id, ts string, body []byte) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte(`{"type":"user.created","data":{"id":1}}`)
	f.Add(body, "v1,"+sign("msg_1", ts, body), ts, "msg_1")
	f.Add(body, "v1,"+sign("msg_1", ts, body)+" v1,AAAA", ts, "msg_1")
	f.Add([]byte("{"), "v1,"+sign("msg_1", ts, []byte("{")), ts, "msg_1")
	f.Add([]byte(`{"type":7}`), "v1,"+sign("m", "1", []byte(`{"type":7}`)), "1", "m")
	f.Add([]byte{}, "", "", "")

	f.Fuzz(func(t *testing.T, body []byte, sig, ts, id string) {
		h := http.Header{}
		for name, val := range map[string]string{"Webhook-Signature": sig, "Webhook-Timestamp": ts, "Webhook-Id": id} {
			if val != "" {
				h[name] = []string{val}
			}
		}
		got, err := v.Verify(context.Background(), Route{Provider: "fuzz"}, &Request{Header: h, Body: body})
		if err != nil {
			var vErr *VerificationError
			if !errors.As(err, &vErr) {
				t.Fatalf("Verify returned a non-rejection error: %v", err)
			}
			if got != (Verification{}) {
				t.Fatalf("rejected request returned metadata %+v", got)
			}
			return
		}
		if got.EventID != strings.TrimSpace(id) || got.KeyID != "static:0" || got.EventType == "" || got.PayloadSHA256 != sha256.Sum256(body) {
			t.Fatalf("accepted request returned %+v", got)
		}
		if got.OccurredAt.Before(now.Add(-DefaultTolerance)) || got.OccurredAt.After(now.Add(DefaultTolerance)) {
			t.Fatalf("accepted timestamp %v outside the window", got.OccurredAt)
		}
	})
}

// fuzzPreset is a preset with a secret, ready to sign fuzzed requests.
type fuzzPreset struct {
	name   string
	v      *HMACVerifier
	secret string
	key    []byte
	// content is the provider's documented signed content, written out
	// here rather than taken from the verifier under test.
	content func(ts, id string, body []byte) []byte
}

func fuzzPresets(f *testing.F, now time.Time) []fuzzPreset {
	clock := ClockFunc(func() time.Time { return now })
	swKey := []byte("fuzz-standard-webhooks-key-32byt")
	body := func(_, _ string, body []byte) []byte { return body }
	joined := func(prefix, sep string) func(ts, id string, body []byte) []byte {
		return func(ts, _ string, body []byte) []byte { return slices.Concat([]byte(prefix+ts+sep), body) }
	}
	list := []struct {
		name    string
		opts    HMACOptions
		secret  string
		key     []byte
		content func(ts, id string, body []byte) []byte
	}{
		{"stripe", StripeOptions(), "whsec_fuzz", nil, joined("", ".")},
		{"github", GitHubOptions(), "gh-fuzz", nil, body},
		{"standardwebhooks", StandardWebhooksOptions(), "whsec_" + base64.StdEncoding.EncodeToString(swKey), swKey,
			func(ts, id string, body []byte) []byte { return slices.Concat([]byte(id+"."+ts+"."), body) }},
		{"slack", SlackOptions(), "slack-fuzz", nil, joined("v0:", ":")},
		{"shopify", ShopifyOptions(), "shpss_fuzz", nil, body},
		{"paddle", PaddleOptions(), "pdl_ntfset_fuzz", nil, joined("", ":")},
		{"linear", LinearOptions(), "lin_wh_fuzz", nil, body},
		{"zoom", ZoomOptions(), "zoom-fuzz", nil, joined("v0:", ":")},
	}
	out := make([]fuzzPreset, 0, len(list))
	for _, p := range list {
		v, err := NewHMACVerifier(p.name, p.opts, StaticSecrets(p.secret), clock)
		if err != nil {
			f.Fatal(err)
		}
		key := p.key
		if key == nil {
			key = []byte(p.secret)
		}
		out = append(out, fuzzPreset{p.name, v, p.secret, key, p.content})
	}
	return out
}

// sign adds a valid signature (and timestamp and ID headers) for req.
// HTTP strips blanks around header values, so the ID is trimmed as the
// server would.
func (p *fuzzPreset) sign(req *Request, ts, id string) {
	o := &p.v.opts
	id = strings.TrimSpace(id)
	if o.TimestampHeader != "" {
		req.Header.Set(o.TimestampHeader, ts)
	}
	if o.EventIDHeader != "" && id != "" {
		req.Header.Set(o.EventIDHeader, id)
	}
	if o.EventTypeHeader != "" {
		req.Header.Set(o.EventTypeHeader, "fuzz.type")
	}
	mac := hmac.New(sha256.New, p.key) // every preset signs with HMAC-SHA-256
	mac.Write(p.content(ts, id, req.Body))
	sig := mac.Sum(nil)
	parsed := parsedSignatureHeader{signatures: [][]byte{sig}}
	if o.TimestampKey != "" {
		parsed.timestamp = ts
	}
	req.Header.Set(o.SignatureHeader, canonicalHeader(&p.v.format, parsed))
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
		req := &Request{Method: http.MethodPost, Header: http.Header{}, Body: body}
		p.sign(req, strconv.FormatInt(now.Unix(), 10), id)
		got, err := p.v.Verify(context.Background(), Route{Provider: p.name}, req)
		if err != nil {
			vErr, ok := errors.AsType[*VerificationError](err)
			if !ok {
				t.Fatalf("%s: Verify returned a non-rejection error: %v", p.name, err)
			}
			if vErr.Reason == ReasonBadSignature || vErr.Reason == ReasonMissingSignature || vErr.Reason == ReasonNoCredentials {
				// A header value the fuzzer chose (the ID) may be
				// malformed, but a correct signature is never "bad".
				t.Fatalf("%s: correctly signed request rejected: %v", p.name, err)
			}
			if got != (Verification{}) {
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
		if got.KeyID != "static:0" || got.PayloadSHA256 != sha256.Sum256(body) {
			t.Fatalf("%s: accepted request returned %+v", p.name, got)
		}
		if got.Handshake != nil && bytes.Contains(got.Handshake.Body, p.key) {
			t.Fatalf("%s: handshake answer contains the key", p.name)
		}
	})
}
