package providers_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// Can a handshake's answer be used as a signature? For every catalog entry
// that answers a handshake, the handshake is sent with tokens an attacker
// chooses (JSON bodies, the bodies the harness signs and the exact bytes
// their signatures cover, random bytes, a token of the provider's own
// shape), and every value the answer carries (headers, body, the strings
// of a JSON body, decoded as hex or base64 and written either way) is put
// where the entry's deliveries carry their signature, on every body tried
// (those and the tokens themselves): none may be accepted. Signed
// handshakes are signed with the genuine credential, as if the provider
// itself sent the attacker's token, so the property does not rest on the
// handshake's own signature.

// handshakeAttack sends an entry's handshake carrying token where the
// provider puts its challenge. A nil build means the handshake carries no
// value the sender chooses: the genuine one (Signer.Challenge) is sent.
type handshakeAttack struct {
	build func(t *testing.T, f *catalogFixture, token string, at time.Time) *webhookstest.Delivery
	// inHeader reports that the token travels in a header, so tokens that
	// are not valid header values are not tried (net/http refuses them).
	inHeader bool
}

var handshakeAttacks = map[string]handshakeAttack{
	"twitter": {build: func(_ *testing.T, f *catalogFixture, token string, _ time.Time) *webhookstest.Delivery {
		return oracleGet(f.url, url.Values{"crc_token": {token}}, nil)
	}},
	"dropbox": {build: func(_ *testing.T, f *catalogFixture, token string, _ time.Time) *webhookstest.Delivery {
		return oracleGet(f.url, url.Values{"challenge": {token}}, nil)
	}},
	"meta": {build: func(_ *testing.T, f *catalogFixture, token string, _ time.Time) *webhookstest.Delivery {
		return oracleGet(f.url, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {"verify-meta"}, "hub.challenge": {token}}, nil)
	}},
	"okta": {inHeader: true, build: func(_ *testing.T, f *catalogFixture, token string, _ time.Time) *webhookstest.Delivery {
		return oracleGet(f.url, nil, http.Header{providers.OktaVerificationHeader: {token}, "Authorization": {f.signer.Credential()}})
	}},
	"msgraph": {build: func(_ *testing.T, f *catalogFixture, token string, _ time.Time) *webhookstest.Delivery {
		return &webhookstest.Delivery{Method: http.MethodPost, URL: f.url + "?" + url.Values{"validationToken": {token}}.Encode(),
			Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}}
	}},
	"slack": {build: func(t *testing.T, f *catalogFixture, token string, at time.Time) *webhookstest.Delivery {
		return oracleSigned(t, f, fmt.Sprintf(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":%s,"type":"url_verification"}`, jsonString(token)), at, nil)
	}},
	"twitch": {build: func(t *testing.T, f *catalogFixture, token string, at time.Time) *webhookstest.Delivery {
		body := fmt.Sprintf(`{"challenge":%s,"subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","status":"webhook_callback_verification_pending","type":"channel.follow","version":"2","cost":1,"condition":{"broadcaster_user_id":"12826"},"transport":{"method":"webhook","callback":"https://example.com/webhooks/callback"},"created_at":"2025-01-01T00:00:00Z"}}`, jsonString(token))
		return oracleSigned(t, f, body, at, func(d *webhookstest.Delivery) {
			d.Header.Set("Twitch-Eventsub-Message-Type", "webhook_callback_verification")
		})
	}},
	"zoom": {build: func(t *testing.T, f *catalogFixture, token string, at time.Time) *webhookstest.Delivery {
		return oracleSigned(t, f, fmt.Sprintf(`{"payload":{"plainToken":%s},"event_ts":%d,"event":"endpoint.url_validation"}`, jsonString(token), at.UnixMilli()), at, nil)
	}},
	"asana": {inHeader: true, build: func(_ *testing.T, f *catalogFixture, token string, _ time.Time) *webhookstest.Delivery {
		return &webhookstest.Delivery{Method: http.MethodPost, URL: f.url, Header: http.Header{providers.AsanaSecretHeader: {token}, "Content-Type": {"application/json"}}}
	}},
	"notion": {build: func(_ *testing.T, f *catalogFixture, token string, _ time.Time) *webhookstest.Delivery {
		return &webhookstest.Delivery{Method: http.MethodPost, URL: f.url, Header: http.Header{"Content-Type": {"application/json"}},
			Body: fmt.Appendf(nil, `{"verification_token":%s}`, jsonString(token))}
	}},
	"woocommerce": {build: func(_ *testing.T, f *catalogFixture, token string, _ time.Time) *webhookstest.Delivery {
		return &webhookstest.Delivery{Method: http.MethodPost, URL: f.url, Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
			Body: []byte(url.Values{"webhook_id": {token}}.Encode())}
	}},
	"trello": {build: func(_ *testing.T, f *catalogFixture, _ string, _ time.Time) *webhookstest.Delivery {
		return &webhookstest.Delivery{Method: http.MethodHead, URL: f.url, Header: http.Header{}}
	}},
	// Their handshakes carry nothing the sender chooses.
	"discord": {}, "discord-events": {}, "line": {}, "figma": {}, "sns": {},
}

// signedContentOptions are the options of the HMAC entries that answer a
// handshake, to compute the exact bytes a delivery's signature covers.
var signedContentOptions = map[string]func() webhooks.HMACOptions{
	"twitter": providers.TwitterOptions, "zoom": providers.ZoomOptions, "slack": providers.SlackOptions,
	"twitch": providers.TwitchOptions, "dropbox": providers.DropboxOptions, "meta": providers.MetaOptions,
	"line": providers.LINEOptions, "asana": providers.AsanaOptions, "notion": providers.NotionOptions,
	"woocommerce": providers.WooCommerceOptions,
	"trello":      func() webhooks.HMACOptions { return providers.TrelloOptions(hookBase) },
}

func TestHandshakeAnswersAreNoSignatures(t *testing.T) {
	t.Parallel()
	sns := newSNSServer(t)
	for _, e := range providers.Entries() {
		if e.Handshakes == "" {
			continue
		}
		attack, ok := handshakeAttacks[e.Name]
		require.True(t, ok, "%s answers a handshake: say in handshakeAttacks where its sender puts a token", e.Name)
		if e.Scheme == providers.SchemeHMAC {
			require.Contains(t, signedContentOptions, e.Name, "%s: name its options in signedContentOptions", e.Name)
		}
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			checkHandshakeOracle(t, e, attack, sns)
		})
	}
}

func checkHandshakeOracle(t *testing.T, e providers.Entry, attack handshakeAttack, sns *snsServer) {
	confirm := func(context.Context, webhooks.Route, providers.Confirmation) error { return nil }
	f := newFixture(t, e.Name, sns, confirm)
	other := newFixture(t, e.Name, sns, confirm)
	if e.Name == "sns" {
		other.signer.SNS().TopicARN = "arn:aws:sns:us-east-1:123456789012:someone-else"
	}
	at := time.Now().Truncate(time.Second)

	// The bodies tried: the entry's sample, a forged JSON event, random
	// bytes, and (below) every token.
	bodies := [][]byte{nil, []byte(`{"id":"evt_forged","type":"invoice.paid","event_id":"Ev0FORGED","data":{"amount":1000000}}`), randomBytes(t, 48)}
	var deliveries []oracleCase
	for _, b := range bodies {
		if c, ok := oracleDelivery(f, b, at); ok {
			deliveries = append(deliveries, c)
		}
	}
	require.NotEmpty(t, deliveries, "%s: the sample is signed", e.Name)

	// The tokens tried.
	const documentedShape = "a1B2c3D4e5F6g7H8i9J0kL"
	tokens := []string{documentedShape, "9b4507b3-9040-4669-9ca3-6b94edb50553", "1158201444", `{"id":"evt_forged","type":"invoice.paid"}`, string(randomBytes(t, 32))}
	for _, c := range deliveries {
		if _, ok := bodyCredentials[e.Name]; ok {
			break // its bodies hold the credential, which no attacker has
		}
		tokens = append(tokens, string(c.d.Body))
		if content := signedContent(t, e.Name, c.d); content != nil {
			tokens = append(tokens, string(content))
		}
	}
	for _, token := range tokens[:5] {
		if c, ok := oracleDelivery(f, []byte(token), at); ok {
			deliveries = append(deliveries, c)
		}
	}

	// Every keyed or echoed value the answers carry.
	var values []string
	answered := 0
	for _, token := range tokens {
		if attack.inHeader && !validHeaderValue(token) {
			continue
		}
		rec := sendHandshake(t, f, attack, token, at)
		if rec.Code/100 != 2 {
			continue
		}
		answered++
		values = append(values, answerValues(rec)...)
		if attack.build == nil {
			break // the same handshake each time
		}
	}
	require.NotZero(t, answered, "%s: the handshake of the provider's own shape is answered", e.Name)
	values = dedupe(values)

	accepted := 0
	for _, c := range deliveries {
		d := c.d
		// Only a body whose genuine delivery is accepted can be forged;
		// and a body accepted whatever its signature is not signed at
		// all (an unsigned handshake): neither tells anything here.
		if rec := f.send(t, d); rec.Code/100 != 2 {
			continue
		}
		accepted++
		twin := resign(t, other, c)
		place := signaturePlace(t, e.Name, d, twin)
		require.False(t, place.empty(), "%s: the harness finds where the delivery carries its credential", e.Name)
		if rec := f.send(t, place.put(t, d, "forged-"+hex.EncodeToString(randomBytes(t, 16)))); rec.Code/100 == 2 {
			continue
		}
		prefix := ""
		if place.header != "" {
			// The variants rebuild a signature from its raw bytes written
			// in the other encoding, so the search below is not blind.
			genuine := d.Header.Get(place.header)
			var mac string
			prefix, mac = splitSignature(genuine, twin.Header.Get(place.header))
			if raw := decodeAny(mac); len(raw) >= 16 {
				alt := hex.EncodeToString(raw)
				if isHex(mac) {
					alt = base64.StdEncoding.EncodeToString(raw)
				}
				assert.Contains(t, signatureVariants(alt, prefix), genuine, "%s: the variants rebuild the genuine signature", e.Name)
			}
		}
		for _, v := range values {
			for _, candidate := range signatureVariants(v, prefix) {
				if place.header != "" && !validHeaderValue(candidate) {
					continue
				}
				rec := f.send(t, place.put(t, d, candidate))
				assert.NotEqual(t, 2, rec.Code/100, "%s: a handshake's answer %q was accepted as the signature %q of the body %q: %s", e.Name, v, candidate, d.Body, rec.Body)
			}
		}
	}
	require.NotZero(t, accepted, "%s: a genuine delivery is accepted", e.Name)
}

// oracleCase is a delivery the test signed, and the message it signed.
type oracleCase struct {
	d   *webhookstest.Delivery
	msg webhookstest.Message
}

// oracleDelivery signs body (the entry's sample when nil) at a fixed time
// with f's credential; false when the entry cannot carry that body.
func oracleDelivery(f *catalogFixture, body []byte, at time.Time) (oracleCase, bool) {
	msg := webhookstest.Message{Body: body, Timestamp: at}
	if body != nil {
		msg.Type = "-"
	}
	d, err := f.signer.Sign(f.url, msg)
	if err != nil {
		return oracleCase{}, false
	}
	// The same message again: the same ID, type and body (SNS wraps the
	// body it is given in its envelope, so it gets the same input).
	msg.ID = d.EventID
	if d.EventType != "" {
		msg.Type = d.EventType
	}
	if f.name != "sns" {
		msg.Body = d.Body
	}
	return oracleCase{d: d, msg: msg}, true
}

// resign signs c's message again with f's credential.
func resign(t *testing.T, f *catalogFixture, c oracleCase) *webhookstest.Delivery {
	t.Helper()
	d, err := f.signer.Sign(f.url, c.msg)
	require.NoError(t, err, f.name)
	return d
}

// oracleSigned signs body as a handshake of the entry, then lets edit set
// the headers the signature does not cover.
func oracleSigned(t *testing.T, f *catalogFixture, body string, at time.Time, edit func(*webhookstest.Delivery)) *webhookstest.Delivery {
	t.Helper()
	d, err := f.signer.Sign(f.url, webhookstest.Message{Body: []byte(body), Type: "-", Timestamp: at})
	require.NoError(t, err)
	if edit != nil {
		edit(d)
	}
	return d
}

func oracleGet(rawURL string, q url.Values, h http.Header) *webhookstest.Delivery {
	if h == nil {
		h = http.Header{}
	}
	if len(q) > 0 {
		rawURL += "?" + q.Encode()
	}
	return &webhookstest.Delivery{Method: http.MethodGet, URL: rawURL, Header: h}
}

// sendHandshake sends the entry's handshake with token.
func sendHandshake(t *testing.T, f *catalogFixture, attack handshakeAttack, token string, at time.Time) *httptest.ResponseRecorder {
	t.Helper()
	if f.secrets != nil {
		pending, err := f.secrets.Expect(webhooks.Route{Provider: f.name}, time.Minute)
		require.NoError(t, err)
		defer pending.Discard()
	}
	var d *webhookstest.Delivery
	if attack.build != nil {
		d = attack.build(t, f, token, at)
	} else {
		c, err := f.signer.Challenge(f.url, "verify-"+f.name)
		require.NoError(t, err)
		d = c.Delivery
	}
	return f.send(t, d)
}

// signedContent is the exact bytes d's signature covers, for the HMAC
// entries of signedContentOptions; nil for the others.
func signedContent(t *testing.T, name string, d *webhookstest.Delivery) []byte {
	t.Helper()
	mk, ok := signedContentOptions[name]
	if !ok {
		return nil
	}
	opts := mk()
	ts := ""
	if opts.Timestamp.Header != "" {
		ts = d.Header.Get(opts.Timestamp.Header)
	}
	id := ""
	if opts.Event.IDHeader != "" {
		id = d.Header.Get(opts.Event.IDHeader)
	}
	if opts.SignedContentFunc != nil {
		u, err := url.Parse(d.URL)
		require.NoError(t, err)
		b, err := opts.SignedContentFunc(&webhooks.Request{Method: http.MethodPost, URL: &url.URL{Path: u.Path, RawQuery: u.RawQuery}, Header: d.Header.Clone(), Body: d.Body}, ts, id)
		require.NoError(t, err, name)
		return b
	}
	tmpl := opts.SignedContent
	if tmpl == "" {
		tmpl = "{body}"
	}
	before, after, _ := strings.Cut(tmpl, "{body}")
	r := strings.NewReplacer("{timestamp}", ts, "{id}", id, "{method}", http.MethodPost)
	return slices.Concat([]byte(r.Replace(before)), d.Body, []byte(r.Replace(after)))
}

// answerValues lists every value an answer carries: each header value,
// the body, and each string of a JSON body.
func answerValues(rec *httptest.ResponseRecorder) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(rec.Header())) {
		out = append(out, rec.Header()[k]...)
	}
	body := rec.Body.Bytes()
	if len(body) > 0 {
		out = append(out, string(body))
		var doc any
		if json.Unmarshal(body, &doc) == nil {
			out = append(out, jsonStrings(doc)...)
		}
	}
	return out
}

func jsonStrings(v any) []string {
	switch n := v.(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, item := range n {
			out = append(out, jsonStrings(item)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(n)) {
			out = append(out, jsonStrings(n[k])...)
		}
		return out
	}
	return nil
}

// signatureVariants writes a value every way it could stand for a
// signature: as it is, after prefix, each part after a separator, and the
// bytes any of those decode to (hex or base64) written in hex and base64.
func signatureVariants(v, prefix string) []string {
	parts := []string{v}
	for i := 0; i < len(v); i++ {
		if strings.IndexByte("=,;: ", v[i]) >= 0 && len(v)-i-1 >= 16 {
			parts = append(parts, v[i+1:])
		}
	}
	var out []string
	for _, p := range parts {
		forms := []string{p}
		if raw := decodeAny(p); len(raw) >= 16 {
			forms = append(forms, hex.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw))
		}
		for _, s := range forms {
			out = append(out, s, prefix+s)
		}
	}
	return dedupe(out)
}

// decodeAny decodes a hex or base64 string (either alphabet, padded or
// not); nil when it is neither.
func decodeAny(s string) []byte {
	if b, err := hex.DecodeString(s); err == nil {
		return b
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b
		}
	}
	return nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// splitSignature splits a signature header into the text before the
// signature and the signature, by what it shares with the same delivery
// signed under another credential: the shared start, cut back to its last
// separator.
func splitSignature(value, otherValue string) (prefix, mac string) {
	n := 0
	for n < len(value) && n < len(otherValue) && value[n] == otherValue[n] {
		n++
	}
	for n > 0 && strings.IndexByte("=,;: ", value[n-1]) < 0 {
		n--
	}
	return value[:n], value[n:]
}

// credentialPlace is where a delivery carries its signature or token: a
// header, or a string in its JSON body.
type credentialPlace struct {
	header string
	path   []string
}

func (p credentialPlace) empty() bool { return p.header == "" && p.path == nil }

// put returns d with value where the credential is.
func (p credentialPlace) put(t *testing.T, d *webhookstest.Delivery, value string) *webhookstest.Delivery {
	t.Helper()
	if p.header != "" {
		c := cloneDelivery(d)
		c.Header.Set(p.header, value)
		return c
	}
	return editBody(t, d, p.path, value)
}

// signaturePlace finds where d carries its credential: the body field
// bodyCredentials names, else the header that differs from the same
// delivery under another credential.
func signaturePlace(t *testing.T, name string, d, other *webhookstest.Delivery) credentialPlace {
	t.Helper()
	if c, ok := bodyCredentials[name]; ok {
		return credentialPlace{path: c.path}
	}
	for _, k := range slices.Sorted(maps.Keys(d.Header)) {
		if other.Header.Get(k) != d.Header.Get(k) {
			return credentialPlace{header: k}
		}
	}
	return credentialPlace{}
}

func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0:0]
	for _, s := range list {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
