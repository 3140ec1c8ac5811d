package webhookstest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

// Message is a delivery for a Signer. Zero fields take the entry's
// sample: a realistic body of the provider's shape with a fresh event ID
// and the entry's default type.
type Message struct {
	// ID is the event ID, for entries whose ID the sender chooses (a
	// header, or a field the sample body carries). Defaults to a fresh
	// one. Entries that derive the ID from the body ignore it.
	ID string
	// Type is the event type, written where the entry reads it (a header,
	// or the sample body). Defaults to the entry's sample type.
	Type string
	// Body is the raw body. Defaults to the entry's sample, built with ID
	// and Type.
	Body []byte
	// ContentType overrides the Content-Type header (for example
	// "application/x-www-form-urlencoded" for a form-encoded GitHub
	// delivery, whose Body is then "payload=…").
	ContentType string
	// Timestamp is when the delivery is signed. Defaults to time.Now().
	Timestamp time.Time
}

// Delivery is a signed request as the provider sends it.
type Delivery struct {
	Method string
	// URL is the absolute URL the delivery is sent to.
	URL    string
	Header http.Header
	Body   []byte
	// EventID is the event ID the entry's verifier reads from this
	// delivery; EventType its type.
	EventID   string
	EventType string
	// Credentials are the values of the delivery that authenticate it:
	// its signatures, the token or passcode it carries, and other
	// credentials of the sender's it holds (Slack's verification token),
	// each as it appears in the delivery (a header's whole value, a JSON
	// string's value). A receiver stores none of them.
	Credentials []string
}

// Request returns the delivery as an *http.Request bound to ctx.
func (d *Delivery) Request(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, d.Method, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	req.Header = d.Header.Clone()
	return req, nil
}

// Signer signs deliveries as one catalog provider does. Make one with
// NewSigner (shared-secret schemes) or NewKeySigner (schemes with a key
// pair); it is safe for concurrent use once made.
type Signer struct {
	name   string
	entry  providers.Entry
	spec   spec
	secret string
	ed     Ed25519KeyPair
	ec     *ecdsa.PrivateKey
	sns    *SNSKey
}

// NewSigner returns a signer for the named catalog entry that signs with
// secret as the provider hands it out (what Config.Secrets holds). Entries
// with a key pair (Ed25519, ECDSA, SNS) need NewKeySigner.
func NewSigner(name, secret string) (*Signer, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return NewEntrySigner(e, secret)
}

// NewEntrySigner is NewSigner for an entry value (from providers.Lookup or
// providers.Entries): the signer lays out each delivery as the entry's
// definition describes (its HMACOptions, Ed25519Options or TokenOptions:
// headers, signature layout, signed content, timestamp), so a signer
// follows the entry it is given.
func NewEntrySigner(e providers.Entry, secret string) (*Signer, error) {
	sp, ok := specs[e.Name]
	if !ok {
		return nil, fmt.Errorf("webhookstest: unknown catalog entry %q", e.Name)
	}
	if _, ed := e.Ed25519Options(); sp.keys || ed {
		return nil, fmt.Errorf("webhookstest: %s signs with a private key: use NewKeySigner", e.Name)
	}
	if secret == "" {
		return nil, errors.New("webhookstest: the secret is empty")
	}
	return &Signer{name: e.Name, entry: e, spec: sp, secret: secret}, nil
}

// NewKeySigner returns a signer for the named catalog entry with a fresh
// credential: a key pair for the key schemes (Credential gives the public
// key to configure; for "sns", a self-signed certificate and a topic, see
// SNSKey), a fresh secret in the provider's format for the others.
func NewKeySigner(name string) (*Signer, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return NewEntryKeySigner(e)
}

// NewEntryKeySigner is NewKeySigner for an entry value (see
// NewEntrySigner).
func NewEntryKeySigner(e providers.Entry) (*Signer, error) {
	sp, ok := specs[e.Name]
	if !ok {
		return nil, fmt.Errorf("webhookstest: unknown catalog entry %q", e.Name)
	}
	s := &Signer{name: e.Name, entry: e, spec: sp}
	_, ed := e.Ed25519Options()
	switch {
	case e.Name == "sendgrid":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		s.ec = k
	case e.Name == "sns":
		k, err := NewSNSKey("arn:aws:sns:us-east-1:123456789012:orders")
		if err != nil {
			return nil, err
		}
		s.sns = k
	case ed:
		s.ed = NewEd25519KeyPair()
	default:
		s.secret = NewSecret(e.Name)
	}
	return s, nil
}

// NewPrivateKeySigner returns a signer for the named catalog entry that
// signs with key, the caller's own: an *ecdsa.PrivateKey on P-256 for
// "sendgrid", an ed25519.PrivateKey for the Ed25519 entries (Discord,
// Standard Webhooks' asymmetric keys, …), for instance to sign with the
// key of a published vector or one a test keeps across runs. Credential
// gives the public key to configure. "sns" signs with a certificate: use
// NewKeySigner and SNS.
func NewPrivateKeySigner(name string, key crypto.PrivateKey) (*Signer, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, err
	}
	sp, ok := specs[e.Name]
	if !ok {
		return nil, fmt.Errorf("webhookstest: unknown catalog entry %q", e.Name)
	}
	s := &Signer{name: e.Name, entry: e, spec: sp}
	_, ed := e.Ed25519Options()
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if e.Name != "sendgrid" {
			return nil, fmt.Errorf("webhookstest: %s does not sign with an ECDSA key", e.Name)
		}
		if k == nil || k.Curve != elliptic.P256() {
			return nil, errors.New("webhookstest: sendgrid signs with an ECDSA P-256 key")
		}
		s.ec = k
	case ed25519.PrivateKey:
		if !ed {
			return nil, fmt.Errorf("webhookstest: %s does not sign with an Ed25519 key", e.Name)
		}
		if len(k) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("webhookstest: an Ed25519 private key is %d bytes, not %d", ed25519.PrivateKeySize, len(k))
		}
		s.ed = Ed25519KeyPair{Public: k.Public().(ed25519.PublicKey), Private: k}
	default:
		return nil, fmt.Errorf("webhookstest: %s: a %T is not a key it signs with (sendgrid: *ecdsa.PrivateKey; Ed25519 entries: ed25519.PrivateKey)", e.Name, key)
	}
	return s, nil
}

// lookup returns the named catalog entry.
func lookup(name string) (providers.Entry, error) {
	e, ok := providers.Lookup(name)
	if !ok {
		return providers.Entry{}, fmt.Errorf("webhookstest: unknown catalog entry %q", name)
	}
	return e, nil
}

// Name returns the catalog name the signer signs for.
func (s *Signer) Name() string { return s.name }

// Entry returns the catalog entry the signer signs for.
func (s *Signer) Entry() providers.Entry { return s.entry }

// Credential returns what Config.Secrets must hold to verify this
// signer's deliveries: the shared secret, the public key in the
// provider's format, or the SNS topic ARN.
func (s *Signer) Credential() string {
	switch {
	case s.ec != nil:
		der, _ := x509.MarshalPKIXPublicKey(&s.ec.PublicKey)
		return base64.StdEncoding.EncodeToString(der)
	case s.sns != nil:
		return s.sns.TopicARN
	}
	if o, ok := s.entry.Ed25519Options(); ok {
		return s.ed.PublicKey(o.PublicKeyFormat)
	}
	return s.secret
}

// SNS returns the signer's SNS key and certificate ("sns" only).
func (s *Signer) SNS() *SNSKey { return s.sns }

// NewSecret returns a fresh random secret in the format the named
// provider hands out (for example "whsec_" and base64 for Standard
// Webhooks, base64 for Teams and Airtable), "" for an unknown name.
func NewSecret(name string) string {
	sp, ok := specs[name]
	if !ok {
		return ""
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	switch sp.secret {
	case secretWhsec:
		return "whsec_" + base64.StdEncoding.EncodeToString(b)
	case secretBase64:
		return base64.StdEncoding.EncodeToString(b)
	case secretStripe:
		return "whsec_" + hex.EncodeToString(b[:16])
	case secretPaddle:
		return "pdl_ntfset_" + hex.EncodeToString(b[:16])
	}
	return hex.EncodeToString(b[:20])
}

// SampleTypes returns the named entry's default sample event type.
func SampleType(name string) string { return samples[name].typ }

// Sign signs msg for the named entry with secret and returns the delivery
// to url (absolute). See Signer.Sign.
func Sign(name, secret, url string, msg Message) (*Delivery, error) {
	s, err := NewSigner(name, secret)
	if err != nil {
		return nil, err
	}
	return s.Sign(url, msg)
}

// NewRequest returns the request Sign makes, bound to t's context; it
// fails t if signing fails. For example:
//
//	req := webhookstest.NewRequest(t, "stripe", srv.URL+"/webhooks/stripe", secret, webhookstest.Message{})
func NewRequest(t testing.TB, name, url, secret string, msg Message) *http.Request {
	t.Helper()
	d, err := Sign(name, secret, url, msg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := d.Request(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// NewRequest is Sign's delivery as a request bound to t's context.
func (s *Signer) NewRequest(t testing.TB, url string, msg Message) *http.Request {
	t.Helper()
	d, err := s.Sign(url, msg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := d.Request(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// Sign returns msg signed as the provider signs it, addressed to url (an
// absolute URL; its path and query are what the receiver sees, and for
// entries that sign the public URL — twilio, hubspot, square, trello — the
// whole URL is signed, so configure Config.PublicURL as url's scheme and
// host). The delivery carries every header the provider sends that the
// entry reads, and Content-Type.
func (s *Signer) Sign(rawURL string, msg Message) (*Delivery, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, errors.New("webhookstest: the URL must be absolute, for example http://127.0.0.1:8080/webhooks/stripe")
	}
	now := msg.Timestamp
	if now.IsZero() {
		now = time.Now()
	}
	msg.Timestamp = now
	smp := samples[s.name]
	if msg.Type == "" {
		msg.Type = smp.typ
	}
	if msg.ID == "" {
		msg.ID = s.spec.newID()
	}
	if msg.Body == nil && smp.body != nil {
		msg.Body = smp.body(s, msg.ID, msg.Type, now)
	}
	d := &Delivery{Method: http.MethodPost, URL: rawURL, Header: http.Header{}, Body: msg.Body, EventType: msg.Type}
	if err := s.spec.sign(s, d, msg); err != nil {
		return nil, err
	}
	if msg.ContentType != "" {
		d.Header.Set("Content-Type", msg.ContentType)
	} else if d.Header.Get("Content-Type") == "" {
		d.Header.Set("Content-Type", "application/json")
	}
	switch {
	case d.EventID != "":
	case s.spec.id == idDigest || s.digestID():
		d.EventID = bodySHA256ID(d.Body)
	case s.spec.id == idRedactedDigest:
		d.EventID = bodySHA256ID(bytes.ReplaceAll(d.Body, []byte(q(s.secret)), []byte(q(providers.RedactedValue))))
	case s.spec.id == idFunc:
		d.EventID = s.spec.idFunc(d.Body)
	default:
		d.EventID = msg.ID
	}
	if s.spec.noType {
		d.EventType = ""
	}
	return d, nil
}

// event is the entry's event source, where its definition has one.
func (s *Signer) event() (webhooks.EventSource, bool) {
	if o, ok := s.entry.HMACOptions(providers.Config{PublicURL: "https://hooks.example.com"}); ok {
		return o.Event, true
	}
	if o, ok := s.entry.Ed25519Options(); ok {
		return o.Event, true
	}
	if o, ok := s.entry.TokenOptions(); ok {
		return o.Event, true
	}
	return webhooks.EventSource{}, false
}

// digestID reports that the entry's definition derives the event ID from
// the body alone.
func (s *Signer) digestID() bool {
	ev, ok := s.event()
	return ok && ev.IDFromBody && ev.IDHeader == "" && ev.IDPath == "" && ev.IDFunc == nil
}

// Where entries take the event ID from.
const (
	idSender = iota // a header or body field the sender fills in (msg.ID)
	idDigest        // the SHA-256 of the body
	// the SHA-256 of the body as stored: the secret it carries redacted
	// (providers.RedactedValue in its place)
	idRedactedDigest
	idFunc // spec.idFunc of the body
)

// Secret formats.
const (
	secretPlain = iota
	secretWhsec
	secretBase64
	secretStripe
	secretPaddle
)

// spec is how webhookstest signs for one catalog entry.
type spec struct {
	sign   func(s *Signer, d *Delivery, m Message) error
	id     int
	idFunc func(body []byte) string
	newID  func() string
	secret int
	keys   bool // a key pair of a fixed-format verifier (ECDSA, SNS)
	noType bool // the entry reads no type (what a finish sets is not in the definition)
	nanos  bool // an RFC 3339 timestamp is written to the nanosecond (SignedMessage.Nanoseconds)
}

func randomID(prefix string) func() string { return func() string { return prefix + rand16() } }

// rand16 is 16 random lower-case hex digits.
func rand16() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// hmacSpec signs with the entry's HMAC options through SignHMAC; the type
// goes to a type header only (a body-borne type is in the sample).
func hmacSpec(extra func(s *Signer, d *Delivery, m Message)) func(*Signer, *Delivery, Message) error {
	return func(s *Signer, d *Delivery, m Message) error {
		o, ok := s.entry.HMACOptions(providers.Config{PublicURL: baseURL(d.URL)})
		if !ok {
			return fmt.Errorf("webhookstest: %s is not an HMAC entry", s.name)
		}
		hm := SignedMessage{Body: d.Body, Timestamp: m.Timestamp, URL: requestURI(d.URL), ContentType: m.ContentType, Nanoseconds: s.spec.nanos}
		hm.ID, hm.Type = headerEvent(o.Event, m)
		h, err := SignHMAC(o, s.secret, hm)
		if err != nil {
			return err
		}
		d.Header = h
		d.Credentials = append(d.Credentials, h.Get(o.SignatureHeader))
		readEvent(d, o.Event)
		if extra != nil {
			extra(s, d, m)
		}
		return nil
	}
}

// baseURL is the scheme and host of an absolute URL.
func baseURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// macOf computes an HMAC, independently of the verifiers.
func macOf(newHash func() hash.Hash, key []byte, parts ...[]byte) []byte {
	m := hmac.New(newHash, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

var b64 = base64.StdEncoding.EncodeToString

// specs holds every catalog entry's signing.
var specs = map[string]spec{
	"airtable":  {sign: hmacSpec(nil), secret: secretBase64, noType: true},
	"asana":     {sign: hmacSpec(nil)},
	"bitbucket": {sign: hmacSpec(nil), newID: randomUUID},
	"box": {sign: hmacSpec(func(_ *Signer, d *Delivery, _ Message) {
		d.Header.Set("Box-Delivery-Id", randomUUID())
		d.Header.Set("Box-Signature-Version", "1")
		d.Header.Set("Box-Signature-Algorithm", "HmacSHA256")
	}), newID: randomID("")},
	"calendly":       {sign: hmacSpec(nil)},
	"clerk":          {sign: hmacSpec(nil), newID: randomID("msg_"), secret: secretWhsec},
	"coinbase":       {sign: hmacSpec(nil), newID: randomUUID},
	"discord":        {sign: signEd25519, newID: randomDigits},
	"discord-events": {sign: signEd25519},
	"docusign":       {sign: hmacSpec(nil), id: idFunc, idFunc: docuSignID},
	"dropbox":        {sign: hmacSpec(nil), noType: true},
	"figma":          {sign: bodyTokenSign, id: idRedactedDigest},
	"github":         {sign: hmacSpec(hubSignatureSHA1), newID: randomUUID},
	"gitlab":         {sign: signToken, newID: randomUUID},
	"gitlab-signing": {sign: hmacSpec(nil), newID: randomUUID, secret: secretWhsec},
	"hubspot":        {sign: hubSpotSign},
	"intercom":       {sign: hmacSpec(nil), newID: randomID("notif_")},
	"jira":           {sign: hmacSpec(nil), newID: randomUUID},
	"lemonsqueezy":   {sign: hmacSpec(nil)},
	"line":           {sign: hmacSpec(nil), newID: randomID("01H")},
	"linear":         {sign: hmacSpec(nil), newID: randomUUID},
	"mailgun":        {sign: mailgunSign, newID: randomID("")},
	"meta":           {sign: hmacSpec(hubSignatureSHA1)},
	"msgraph":        {sign: bodyTokenSign, id: idRedactedDigest},
	"msteams":        {sign: hmacSpec(nil), newID: randomID("1:"), secret: secretBase64},
	"mux":            {sign: hmacSpec(nil), newID: randomUUID},
	"notion":         {sign: hmacSpec(nil), newID: randomUUID},
	"okta":           {sign: signToken, newID: randomUUID},
	"openai":         {sign: hmacSpec(nil), newID: randomID("wh_"), secret: secretWhsec},
	"paddle":         {sign: hmacSpec(nil), newID: randomID("evt_"), secret: secretPaddle},
	"pagerduty":      {sign: hmacSpec(nil), newID: randomID("01")},
	"razorpay":       {sign: hmacSpec(nil), newID: randomID("E")},
	"replicate":      {sign: hmacSpec(nil), newID: randomID("msg_"), secret: secretWhsec},
	"resend":         {sign: hmacSpec(nil), newID: randomID("msg_"), secret: secretWhsec},
	"sendgrid":       {sign: sendGridSign, id: idDigest, keys: true},
	"sentry": {sign: hmacSpec(func(_ *Signer, d *Delivery, m Message) {
		d.Header.Set("Sentry-Hook-Timestamp", unix(m.Timestamp))
		d.EventType = m.Type + ".created"
	}), newID: randomUUID},
	"shopify": {sign: hmacSpec(func(_ *Signer, d *Delivery, _ Message) {
		d.Header.Set("X-Shopify-Api-Version", "2025-07")
		d.Header.Set("X-Shopify-Event-Id", randomUUID())
	}), newID: randomUUID},
	"slack":                    {sign: hmacSpec(slackToken), newID: randomID("Ev")},
	"sns":                      {sign: snsSign, keys: true, newID: randomUUID},
	"square":                   {sign: squareSign, newID: randomUUID},
	"standardwebhooks":         {sign: hmacSpec(nil), newID: randomID("msg_"), secret: secretWhsec},
	"standardwebhooks-ed25519": {sign: signEd25519, newID: randomID("msg_"), noType: true},
	"stripe":                   {sign: hmacSpec(nil), newID: randomID("evt_"), secret: secretStripe},
	"svix":                     {sign: hmacSpec(nil), newID: randomID("msg_"), secret: secretWhsec},
	"telegram":                 {sign: signToken, newID: randomDigits},
	"trello":                   {sign: trelloSign, newID: randomID("5f")},
	"twilio":                   {sign: twilioSign, noType: true, id: idFunc, idFunc: func(body []byte) string { return twilioParamsID(body) }},
	"twitch": {sign: hmacSpec(func(_ *Signer, d *Delivery, _ Message) {
		d.Header.Set("Twitch-Eventsub-Message-Type", "notification")
		d.Header.Set("Twitch-Eventsub-Subscription-Version", "2")
		d.Header.Set("Twitch-Eventsub-Message-Retry", "0")
	}), newID: randomUUID, nanos: true},
	"twitter":     {sign: hmacSpec(nil)},
	"typeform":    {sign: hmacSpec(nil), newID: randomID("01")},
	"vercel":      {sign: hmacSpec(nil), newID: randomID("evt_")},
	"woocommerce": {sign: hmacSpec(wooHeaders), newID: randomDigits},
	"zendesk":     {sign: hmacSpec(nil), newID: randomID("01")},
	"zoom":        {sign: hmacSpec(nil)},
}

func init() {
	for name, sp := range specs {
		if sp.newID == nil {
			sp.newID = func() string { return "" }
			specs[name] = sp
		}
	}
}

func randomUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func randomDigits() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	n := uint64(0)
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return fmt.Sprint(100000000 + n%899999999)
}

// hubSignatureSHA1 adds the SHA-1 X-Hub-Signature that GitHub and Meta
// send beside X-Hub-Signature-256: "sha1=" and the hex HMAC-SHA-1 of the
// body.
func hubSignatureSHA1(s *Signer, d *Delivery, _ Message) {
	sig := "sha1=" + hex.EncodeToString(macOf(sha1.New, []byte(s.secret), d.Body))
	d.Header.Set("X-Hub-Signature", sig)
	d.Credentials = append(d.Credentials, sig)
}

// slackToken counts the sample's deprecated verification token ("token"),
// which Slack still sends in every Events API body, as a credential.
func slackToken(_ *Signer, d *Delivery, _ Message) {
	if token, ok := bodyValue(d.Body, "token"); ok {
		d.Credentials = append(d.Credentials, token)
	}
}

func wooHeaders(_ *Signer, d *Delivery, _ Message) {
	d.Header.Set("X-Wc-Webhook-Source", "https://shop.example.com/")
	d.Header.Set("X-Wc-Webhook-Resource", "order")
	d.Header.Set("X-Wc-Webhook-Event", "created")
	d.Header.Set("X-Wc-Webhook-Id", "12")
}

// headerEvent returns the message's event ID and type where the source
// reads them from headers, "" where the body carries them (the sample has
// them).
func headerEvent(ev webhooks.EventSource, m Message) (id, typ string) {
	if ev.IDHeader != "" {
		id = m.ID
	}
	if ev.TypeHeader != "" {
		typ = m.Type
	}
	return id, typ
}

// readEvent sets the delivery's event ID and type from the body where the
// entry reads them there, so a caller's own body reports its own.
func readEvent(d *Delivery, ev webhooks.EventSource) {
	if ev.IDPath != "" {
		d.EventID, _ = bodyValue(d.Body, ev.IDPath)
	}
	if ev.TypePath != "" {
		d.EventType, _ = bodyValue(d.Body, ev.TypePath)
	}
	if ev.TypeSuffixPath != "" {
		if suffix, ok := bodyValue(d.Body, ev.TypeSuffixPath); ok {
			d.EventType += "." + suffix
		}
	}
}

// signToken sends the secret in the entry's token header.
func signToken(s *Signer, d *Delivery, m Message) error {
	o, ok := s.entry.TokenOptions()
	if !ok {
		return fmt.Errorf("webhookstest: %s is not a token entry", s.name)
	}
	tm := TokenMessage{Body: d.Body, ContentType: m.ContentType}
	tm.ID, tm.Type = headerEvent(o.Event, m)
	h, err := SignToken(o, s.secret, tm)
	if err != nil {
		return err
	}
	d.Header = h
	d.Credentials = append(d.Credentials, h.Get(o.Header))
	readEvent(d, o.Event)
	return nil
}

// signEd25519 signs with the signer's Ed25519 key and the entry's options.
func signEd25519(s *Signer, d *Delivery, m Message) error {
	o, ok := s.entry.Ed25519Options()
	if !ok {
		return fmt.Errorf("webhookstest: %s is not an Ed25519 entry", s.name)
	}
	em := SignedMessage{Body: d.Body, Timestamp: m.Timestamp, URL: requestURI(d.URL), ContentType: m.ContentType}
	em.ID, _ = headerEvent(o.Event, m)
	h, err := SignEd25519(o, s.ed.Private, em)
	if err != nil {
		return err
	}
	d.Header = h
	d.Credentials = append(d.Credentials, h.Get(o.SignatureHeader))
	return nil
}

// hubSpotSign signs HubSpot's v3: method, URI (with HubSpot's listed
// percent-encodings decoded), body and timestamp in milliseconds; and, as
// HubSpot does for backward compatibility, the v1 X-HubSpot-Signature: the
// hex SHA-256 of the client secret followed by the body.
func hubSpotSign(s *Signer, d *Delivery, m Message) error {
	ts := fmt.Sprint(m.Timestamp.UnixMilli())
	uri := d.URL
	for _, enc := range [][2]string{{"%3A", ":"}, {"%2F", "/"}, {"%3F", "?"}, {"%40", "@"}, {"%21", "!"}, {"%24", "$"}, {"%27", "'"}, {"%28", "("}, {"%29", ")"}, {"%2A", "*"}, {"%2C", ","}, {"%3B", ";"}} {
		uri = strings.ReplaceAll(uri, enc[0], enc[1])
	}
	v3 := b64(macOf(sha256.New, []byte(s.secret), []byte(d.Method+uri), d.Body, []byte(ts)))
	v1 := sha256.Sum256(append([]byte(s.secret), d.Body...))
	o := s.hmacOptions(d)
	d.Header.Set(o.Timestamp.Header, ts)
	d.Header.Set(o.SignatureHeader, v3)
	d.Header.Set("X-Hubspot-Signature-Version", "v1")
	d.Header.Set(o.OtherSignatureHeaders[0], hex.EncodeToString(v1[:]))
	d.Credentials = append(d.Credentials, v3, hex.EncodeToString(v1[:]))
	return nil
}

// hmacOptions are the entry's HMAC options for a delivery's public URL,
// for the signers that compute content a SignedContentFunc describes
// (hubspot, square, trello) independently of it, under the definition's
// header names.
func (s *Signer) hmacOptions(d *Delivery) webhooks.HMACOptions {
	o, _ := s.entry.HMACOptions(providers.Config{PublicURL: baseURL(d.URL)})
	return o
}

// squareSign signs the notification URL followed by the body.
func squareSign(s *Signer, d *Delivery, _ Message) error {
	sig := b64(macOf(sha256.New, []byte(s.secret), []byte(d.URL), d.Body))
	d.Header.Set(s.hmacOptions(d).SignatureHeader, sig)
	d.Header.Set("Square-Environment", "Sandbox")
	d.Credentials = append(d.Credentials, sig)
	return nil
}

// trelloSign signs the body followed by the callback URL, with SHA-1.
func trelloSign(s *Signer, d *Delivery, _ Message) error {
	sig := b64(macOf(sha1.New, []byte(s.secret), d.Body, []byte(d.URL)))
	d.Header.Set(s.hmacOptions(d).SignatureHeader, sig)
	d.Credentials = append(d.Credentials, sig)
	return nil
}

// bodyTokenSign signs nothing: the sample body carries the secret itself
// (Figma's passcode, Microsoft Graph's clientState).
func bodyTokenSign(s *Signer, d *Delivery, _ Message) error {
	d.Credentials = append(d.Credentials, s.secret)
	return nil
}

// mailgunSign wraps the sample event data with a signature object: the
// hex HMAC-SHA-256 of timestamp and a fresh 50-character token.
func mailgunSign(s *Signer, d *Delivery, m Message) error {
	token := strings.Repeat(rand16(), 4)[:50]
	ts := unix(m.Timestamp)
	sig := hex.EncodeToString(macOf(sha256.New, []byte(s.secret), []byte(ts+token)))
	d.Body = fmt.Appendf(nil, `{"signature":{"timestamp":%s,"token":%s,"signature":%s},"event-data":%s}`, q(ts), q(token), q(sig), d.Body)
	d.Credentials = append(d.Credentials, sig)
	return nil
}

// sendGridSign signs the timestamp and body with ECDSA P-256.
func sendGridSign(s *Signer, d *Delivery, m Message) error {
	if s.ec == nil {
		return errors.New("webhookstest: sendgrid signs with an ECDSA key: use NewKeySigner")
	}
	ts := unix(m.Timestamp)
	sum := sha256.Sum256(append([]byte(ts), d.Body...))
	sig, err := ecdsa.SignASN1(rand.Reader, s.ec, sum[:])
	if err != nil {
		return err
	}
	d.Header.Set(providers.SendGridSignatureHeader, b64(sig))
	d.Header.Set(providers.SendGridTimestampHeader, ts)
	d.Credentials = append(d.Credentials, b64(sig))
	return nil
}

// twilioSign sends a status callback as a form post to the URL.
func twilioSign(s *Signer, d *Delivery, m Message) error {
	if len(d.Body) == 0 {
		d.Body = []byte(url.Values{"MessageSid": {"SM" + rand16() + rand16()}, "MessageStatus": {m.Type}, "AccountSid": {"AC" + rand16() + rand16()}}.Encode())
	}
	params, err := url.ParseQuery(string(d.Body))
	if err != nil {
		return fmt.Errorf("webhookstest: a Twilio body is form parameters: %w", err)
	}
	d.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	sig := TwilioSignature(s.secret, d.URL, params)
	d.Header.Set("X-Twilio-Signature", sig)
	d.Credentials = append(d.Credentials, sig)
	return nil
}

// twilioParamsID is the ID the twilio entry derives from a form body.
func twilioParamsID(body []byte) string {
	params, _ := url.ParseQuery(string(body))
	return bodySHA256ID([]byte(TwilioParams(params)))
}

// docuSignID is the ID the docusign entry reads.
func docuSignID(body []byte) string {
	return bodyString(body, "event") + ":" + bodyString(body, "data.envelopeId") + ":" + bodyString(body, "generatedDateTime")
}

func bodyString(body []byte, path string) string {
	v, _ := bodyValue(body, path)
	return v
}
