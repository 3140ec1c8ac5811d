package providers_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// The catalog harness: every entry is built by name, and deliveries that
// webhookstest signs as the provider does go through a real Receiver on
// memstore. Each entry gets the same cases: a round trip (202, then a
// duplicate 200, the provider's own answer), a tampered body, a wrong
// credential, stale and future timestamps where the scheme signs one, a
// missing and a duplicated signature header, a duplicated timestamp or
// event ID header where the entry reads one, a tampered, missing and
// duplicated credential where it is in the body, HEAD answered, and its
// endpoint checks.

const hookBase = "https://hooks.example.com"

// bodyUnsigned reports whether an entry's credential does not cover the
// body, so a tampered body still verifies, as documented: a token entry's,
// and those of the fixed-format verifiers that carry a token in the body
// (figma, msgraph) or sign only a token (mailgun).
func bodyUnsigned(e providers.Entry) bool {
	_, token := e.TokenOptions()
	return token || fixedBodyUnsigned[e.Name]
}

// fixedBodyUnsigned are the entries without a definition whose credential
// does not cover the body.
var fixedBodyUnsigned = map[string]bool{"figma": true, "msgraph": true, "mailgun": true}

// catalogFixture is one entry's verifier behind a Receiver.
type catalogFixture struct {
	name     string
	entry    providers.Entry
	signer   *webhookstest.Signer
	verifier webhooks.Verifier
	receiver *webhooks.Receiver
	inbox    *memstore.Inbox
	url      string
	secrets  *providers.HandshakeSecrets // asana and notion
	sns      *snsServer
}

// snsServer serves SNS signing certificates over TLS and counts requests.
type snsServer struct {
	srv   *httptest.Server
	certs map[string][]byte
	hits  map[string]int
}

func newSNSServer(t *testing.T) *snsServer {
	s := &snsServer{certs: map[string][]byte{}, hits: map[string]int{}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits[r.URL.Path]++
		cert, ok := s.certs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(cert)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// serve publishes a key's certificate at path and points the key at it.
func (s *snsServer) serve(path string, k *webhookstest.SNSKey) {
	s.certs[path] = k.CertificatePEM
	k.CertURL = s.srv.URL + path
}

func (s *snsServer) host() string { return strings.TrimPrefix(s.srv.URL, "https://") }

// newFixture builds the named entry with a fresh credential.
func newFixture(t *testing.T, name string, sns *snsServer, confirm func(context.Context, webhooks.Route, providers.Confirmation) error) *catalogFixture {
	t.Helper()
	return newEntryFixture(t, mustLookup(t, name), sns, confirm)
}

// newEntryFixture builds an entry (the catalog's, or a test's copy) with a
// fresh credential.
func newEntryFixture(t *testing.T, e providers.Entry, sns *snsServer, confirm func(context.Context, webhooks.Route, providers.Confirmation) error) *catalogFixture {
	t.Helper()
	name := e.Name
	signer, err := webhookstest.NewEntryKeySigner(e)
	require.NoError(t, err, name)
	if name == "sns" {
		sns.serve("/SimpleNotificationService-"+rand8(t)+".pem", signer.SNS())
	}
	return fixtureFor(t, signer, sns, confirm)
}

// fixtureFor builds a fixture around an existing signer.
func fixtureFor(t *testing.T, signer *webhookstest.Signer, sns *snsServer, confirm func(context.Context, webhooks.Route, providers.Confirmation) error) *catalogFixture {
	t.Helper()
	name, e := signer.Name(), signer.Entry()
	f := &catalogFixture{name: name, entry: e, signer: signer, url: hookBase + "/webhooks/" + name, sns: sns}
	cfg := providers.Config{Secrets: webhooks.StaticSecrets(signer.Credential()), PublicURL: hookBase, VerifyToken: "verify-" + name, Confirm: confirm}
	switch name {
	case "asana", "notion":
		f.secrets = providers.NewHandshakeSecrets(providers.HandshakeSecretsOptions{})
		f.secrets.Add(webhooks.Route{Provider: name}, []byte(signer.Credential()))
		cfg.Secrets = f.secrets
	case "sns":
		cfg.HTTPClient, cfg.KeyHosts, cfg.KeyRoots = sns.srv.Client(), []string{sns.host()}, signer.SNS().Roots
	}
	v, err := e.New(cfg)
	require.NoError(t, err, name)
	f.verifier = v
	reg := webhooks.NewRegistry()
	require.NoError(t, reg.Register(name, v))
	f.inbox = memstore.NewInbox()
	f.receiver, err = webhooks.NewReceiver(reg, f.inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(quietLogger))
	require.NoError(t, err)
	return f
}

// send serves a delivery and returns the recorder.
func (f *catalogFixture) send(t *testing.T, d *webhookstest.Delivery) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(d.Method, d.URL, strings.NewReader(string(d.Body)))
	req.Header = d.Header.Clone()
	rec := httptest.NewRecorder()
	f.receiver.ServeHTTP(rec, req)
	return rec
}

func (f *catalogFixture) sign(t *testing.T, msg webhookstest.Message) *webhookstest.Delivery {
	t.Helper()
	d, err := f.signer.Sign(f.url, msg)
	require.NoError(t, err, f.name)
	return d
}

// wantRejected checks a 401 with the reason (any reason when empty) and
// that nothing was stored.
func (f *catalogFixture) wantRejected(t *testing.T, rec *httptest.ResponseRecorder, reason webhooks.Reason, what string) {
	t.Helper()
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s: %s: %s", f.name, what, rec.Body)
	if reason != "" {
		assert.Contains(t, rec.Body.String(), `"reason":"`+string(reason)+`"`, "%s: %s", f.name, what)
	}
	assert.Zero(t, f.inbox.Len(), "%s: %s stored something", f.name, what)
}

var quietLogger = slog.New(slog.DiscardHandler)

func TestCatalogHarness(t *testing.T) {
	t.Parallel()
	names := providers.Names()
	require.GreaterOrEqual(t, len(names), 40, "the catalog has at least 40 entries")
	sns := newSNSServer(t)
	var confirmed []providers.Confirmation
	confirm := func(_ context.Context, _ webhooks.Route, c providers.Confirmation) error {
		confirmed = append(confirmed, c)
		return nil
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, name, sns, confirm)
			base := f.sign(t, webhookstest.Message{})

			// Tampering, wrong credential, timestamps and headers first,
			// while the inbox is empty.
			if !bodyUnsigned(f.entry) {
				f.wantRejected(t, f.send(t, tamper(base)), "", "a tampered body")
			}
			other := newFixture(t, name, sns, confirm)
			if name == "sns" { // SNS's credential is the topic: another topic's messages are refused
				other.signer.SNS().TopicARN = "arn:aws:sns:us-east-1:123456789012:someone-else"
			}
			f.wantRejected(t, f.send(t, other.sign(t, webhookstest.Message{})), "", "another credential")

			if f.entry.Window() != "none" && !strings.HasPrefix(f.entry.Window(), "none") {
				for _, skew := range []time.Duration{-2 * time.Hour, 2 * time.Hour} {
					d := f.sign(t, webhookstest.Message{Timestamp: time.Now().Add(skew)})
					f.wantRejected(t, f.send(t, d), webhooks.ReasonTimestampExpired, "timestamp "+skew.String())
				}
			}
			required := requiredHeaders(t, fixtureFor(t, f.signer, sns, confirm), base)
			if sig := required[webhooks.ReasonMissingSignature]; sig != "" {
				dup := cloneDelivery(base)
				dup.Header.Add(sig, dup.Header.Get(sig))
				f.wantRejected(t, f.send(t, dup), webhooks.ReasonMalformedHeader, "a duplicated "+sig)
			} else {
				assert.Contains(t, []string{"mailgun", "sns", "figma", "msgraph"}, name, "every header-signed entry has a signature header the harness found")
			}
			// A timestamp or event ID header sent twice is malformed, as
			// TimestampSource and EventSource document.
			tsHeader, idHeader := definedHeaders(f.entry)
			assert.Equal(t, tsHeader, required[webhooks.ReasonMissingTimestamp] != "", "%s: a required timestamp header (found %q)", name, required[webhooks.ReasonMissingTimestamp])
			assert.Equal(t, idHeader, required[webhooks.ReasonMissingEventID] != "", "%s: a required event ID header (found %q)", name, required[webhooks.ReasonMissingEventID])
			// The catalog names every header whose absence is refused.
			for _, h := range required {
				assert.Contains(t, strings.ToLower(f.entry.Headers()), "`"+strings.ToLower(h), "%s: the catalog's headers name %s", name, h)
			}
			for _, reason := range []webhooks.Reason{webhooks.ReasonMissingTimestamp, webhooks.ReasonMissingEventID} {
				if h := required[reason]; h != "" {
					dup := cloneDelivery(base)
					dup.Header.Add(h, dup.Header.Get(h))
					f.wantRejected(t, f.send(t, dup), webhooks.ReasonMalformedHeader, "a duplicated "+h)
				}
			}
			if c, ok := bodyCredentials[name]; ok {
				c.check(t, f, base)
			}

			// The round trip.
			rec := f.send(t, base)
			require.Equal(t, wantStatus(f.entry, http.StatusAccepted), rec.Code, "%s: %s", name, rec.Body)
			checkAnswer(t, f.entry, rec)
			item, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: name, EventID: base.EventID})
			require.NoError(t, err, "%s: the item is stored under %q", name, base.EventID)
			assert.Equal(t, base.EventType, item.EventType, name)
			assert.NotEmpty(t, item.KeyID, name)
			rec = f.send(t, base)
			assert.Equal(t, wantStatus(f.entry, http.StatusOK), rec.Code, "%s: a duplicate: %s", name, rec.Body)
			checkAnswer(t, f.entry, rec)
			assert.Equal(t, 1, f.inbox.Len(), name)

			// GET is a challenge only where the provider sends one, and
			// a delivery only where it delivers by GET (twilio: an
			// unsigned one is refused, a signed one is stored in
			// TestTwilioGETThroughGateway).
			get := httptest.NewRequest(http.MethodGet, f.url, nil)
			rec = httptest.NewRecorder()
			f.receiver.ServeHTTP(rec, get)
			if slices.Contains([]string{"meta", "twitter", "dropbox", "okta", "twilio"}, name) {
				assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s: a GET without a challenge or a signature", name)
			} else {
				assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "%s: GET", name)
			}

			// HEAD is answered 200 with no body for every entry, stored
			// nowhere: Trello checks a new callback URL so.
			rec = httptest.NewRecorder()
			f.receiver.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, f.url, nil))
			assert.Equal(t, http.StatusOK, rec.Code, "%s: HEAD", name)
			assert.Zero(t, rec.Body.Len(), "%s: HEAD", name)
			assert.Equal(t, 1, f.inbox.Len(), "%s: HEAD stored something", name)

			// The endpoint checks.
			if webhookstest.HasChallenge(name) {
				if f.secrets != nil {
					pending, err := f.secrets.Expect(webhooks.Route{Provider: name}, time.Minute)
					require.NoError(t, err)
					defer pending.Discard()
				}
				c, err := f.signer.Challenge(f.url, "verify-"+name)
				require.NoError(t, err)
				rec := f.send(t, c.Delivery)
				checkChallenge(t, name, c, rec)
				assert.Equal(t, 1, f.inbox.Len(), "%s: a challenge stored something", name)
			}
		})
	}
	assert.NotEmpty(t, confirmed, "the SNS SubscriptionConfirmation reached Config.Confirm")
}

// TestCatalogReceiverWithoutReplayStore: NewReceiver builds without a
// replay store for every entry that needs none, and the receiver stores
// its signed deliveries; for the entries that need one (a replay key of
// their own, or an event type a header the signature leaves out chooses
// for a signed body) it refuses to build, naming the provider.
func TestCatalogReceiverWithoutReplayStore(t *testing.T) {
	t.Parallel()
	sns := newSNSServer(t)
	var need []string
	for _, name := range providers.Names() {
		f := newFixture(t, name, sns, acknowledge)
		reg := webhooks.NewRegistry()
		require.NoError(t, reg.Register(name, f.verifier))
		rcv, err := webhooks.NewReceiver(reg, f.inbox, webhooks.WithLogger(quietLogger))
		if webhooks.NeedsReplayStore(f.verifier) {
			need = append(need, name)
			assert.ErrorContains(t, err, strconv.Quote(name)+" need a replay store", name)
			continue
		}
		require.NoError(t, err, name)
		f.receiver = rcv
		d := f.sign(t, webhookstest.Message{})
		rec := f.send(t, d)
		assert.Equal(t, wantStatus(f.entry, http.StatusAccepted), rec.Code, "%s without a replay store: %s", name, rec.Body)
		assert.Equal(t, 1, f.inbox.Len(), "%s: stored", name)
		assert.Equal(t, wantStatus(f.entry, http.StatusOK), f.send(t, d).Code, "%s: the redelivery is a duplicate", name)
	}
	assert.Equal(t, []string{"bitbucket", "github", "gitlab-signing", "lemonsqueezy", "linear", "mailgun", "sentry", "shopify", "twitch", "woocommerce"}, need,
		"the entries that need a replay store")
}

// wantStatus is the status of an accepted or duplicate delivery: the
// entry's own answer's when it has one.
func wantStatus(e providers.Entry, receiver int) int {
	if e.Answer != nil && e.Answer.StatusCode != 0 {
		return e.Answer.StatusCode
	}
	return receiver
}

func checkAnswer(t *testing.T, e providers.Entry, rec *httptest.ResponseRecorder) {
	t.Helper()
	if e.Answer == nil {
		assert.Contains(t, rec.Header().Get("Content-Type"), "application/json", e.Name)
		return
	}
	assert.Equal(t, string(e.Answer.Body), rec.Body.String(), e.Name)
	if ct := e.Answer.Header.Get("Content-Type"); ct != "" {
		assert.Equal(t, ct, rec.Header().Get("Content-Type"), e.Name)
	}
}

func checkChallenge(t *testing.T, name string, c *webhookstest.Challenge, rec *httptest.ResponseRecorder) {
	t.Helper()
	assert.Equal(t, c.Want.StatusCode, rec.Code, "%s %s: %s", name, c.Kind, rec.Body)
	if c.Want.ContentType != "" {
		assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), c.Want.ContentType), "%s %s: Content-Type %q", name, c.Kind, rec.Header().Get("Content-Type"))
	}
	for k, vs := range c.Want.Header {
		assert.Equal(t, vs, rec.Header().Values(k), "%s %s: header %s", name, c.Kind, k)
	}
	switch {
	case strings.HasPrefix(c.Want.ContentType, "application/json"):
		assert.JSONEq(t, string(c.Want.Body), rec.Body.String(), "%s %s", name, c.Kind)
	case c.Want.Body != nil:
		assert.Equal(t, string(c.Want.Body), rec.Body.String(), "%s %s", name, c.Kind)
	}
}

// definedHeaders reports whether an entry requires a timestamp header
// and an event ID header, as its definition (or, for sendgrid, its fixed
// format) says; the harness checks that removing each is refused for the
// right reason and that sending it twice is malformed.
func definedHeaders(e providers.Entry) (timestamp, id bool) {
	var (
		ts webhooks.TimestampSource
		ev webhooks.EventSource
	)
	if o, ok := e.HMACOptions(providers.Config{PublicURL: hookBase}); ok {
		ts, ev = o.Timestamp, o.Event
	}
	if o, ok := e.Ed25519Options(); ok {
		ts, ev = o.Timestamp, o.Event
	}
	if o, ok := e.TokenOptions(); ok {
		ev = o.Event
	}
	// An ID header that IDFromBody stands in for is not required.
	return ts.Header != "" || e.Name == "sendgrid", ev.IDHeader != "" && !ev.IDFromBody
}

// requiredHeaders finds, for each of missing_signature, missing_timestamp
// and missing_event_id, the header whose absence is refused with that
// reason, and checks that removing it stores nothing.
func requiredHeaders(t *testing.T, f *catalogFixture, d *webhookstest.Delivery) map[webhooks.Reason]string {
	t.Helper()
	found := map[webhooks.Reason]string{}
	for _, name := range slices.Sorted(maps.Keys(d.Header)) {
		if name == "Content-Type" {
			continue
		}
		without := cloneDelivery(d)
		without.Header.Del(name)
		rec := f.send(t, without)
		for _, reason := range []webhooks.Reason{webhooks.ReasonMissingSignature, webhooks.ReasonMissingTimestamp, webhooks.ReasonMissingEventID} {
			if rec.Code == http.StatusUnauthorized && strings.Contains(rec.Body.String(), `"reason":"`+string(reason)+`"`) && found[reason] == "" {
				assert.Zero(t, f.inbox.Len(), "%s: without %s", f.name, name)
				found[reason] = name
			}
		}
		if f.inbox.Len() > 0 { // an optional header (GitHub's and Meta's SHA-1 signature): start afresh
			f = fixtureFor(t, f.signer, f.sns, nil)
		}
	}
	return found
}

// bodyCredential is where an entry that carries its credential in the
// JSON body has it.
type bodyCredential struct {
	path   []string // to the signature or token; digits index arrays
	forged string   // a well-formed value that matches no credential
	dupKey string   // a key of the credential whose first occurrence is the one to give twice
}

var bodyCredentials = map[string]bodyCredential{
	"mailgun": {path: []string{"signature", "signature"}, forged: strings.Repeat("0", 64), dupKey: "token"},
	"figma":   {path: []string{"passcode"}, forged: "forged-passcode", dupKey: "passcode"},
	"msgraph": {path: []string{"value", "0", "clientState"}, forged: "forged-client-state", dupKey: "clientState"},
}

// check sends the delivery with its credential tampered, missing and
// given twice; each is refused and nothing is stored.
func (c bodyCredential) check(t *testing.T, f *catalogFixture, d *webhookstest.Delivery) {
	t.Helper()
	what := strings.Join(c.path, ".")
	f.wantRejected(t, f.send(t, editBody(t, d, c.path, c.forged)), webhooks.ReasonBadSignature, "a tampered "+what)
	f.wantRejected(t, f.send(t, editBody(t, d, c.path, nil)), webhooks.ReasonMissingSignature, "no "+what)
	key := `"` + c.dupKey + `":`
	i := strings.Index(string(d.Body), key)
	require.GreaterOrEqual(t, i, 0, "%s: the body has %s", f.name, key)
	dup := cloneDelivery(d)
	// The forged value comes first, so a parser that keeps the last
	// occurrence reads the authentic one and would accept the body.
	dup.Body = slices.Concat(d.Body[:i], []byte(key+`"`+c.forged+`",`), d.Body[i:])
	f.wantRejected(t, f.send(t, dup), webhooks.ReasonMalformedPayload, "a duplicated "+c.dupKey)
	if f.name == "mailgun" {
		f.wantRejected(t, f.send(t, editBody(t, d, []string{"signature", "token"}, strings.Repeat("x", 50))), webhooks.ReasonBadSignature, "a tampered signature.token")
	}
}

// editBody returns the delivery with the JSON value at path set to value,
// or removed when value is nil.
func editBody(t *testing.T, d *webhookstest.Delivery, path []string, value any) *webhookstest.Delivery {
	t.Helper()
	var doc any
	dec := json.NewDecoder(strings.NewReader(string(d.Body)))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc))
	node := doc
	for _, seg := range path[:len(path)-1] {
		switch n := node.(type) {
		case map[string]any:
			node = n[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			require.NoError(t, err)
			node = n[i]
		}
	}
	obj, ok := node.(map[string]any)
	require.True(t, ok, "%v leads to an object", path)
	if value == nil {
		delete(obj, path[len(path)-1])
	} else {
		obj[path[len(path)-1]] = value
	}
	c := cloneDelivery(d)
	var err error
	c.Body, err = json.Marshal(doc)
	require.NoError(t, err)
	return c
}

func cloneDelivery(d *webhookstest.Delivery) *webhookstest.Delivery {
	c := *d
	c.Header = d.Header.Clone()
	c.Body = slices.Clone(d.Body)
	return &c
}

// tamper flips the case of the first letter at or after the middle of the
// body.
func tamper(d *webhookstest.Delivery) *webhookstest.Delivery {
	c := cloneDelivery(d)
	for i := len(c.Body) / 2; i < len(c.Body); i++ {
		switch b := c.Body[i]; {
		case b >= 'a' && b <= 'z':
			c.Body[i] = b - 'a' + 'A'
			return c
		case b >= 'A' && b <= 'Z':
			c.Body[i] = b - 'A' + 'a'
			return c
		}
	}
	c.Body = append(c.Body, ' ')
	return c
}

// TestCatalogEntries: what the catalog says of each entry beside its
// definition (whose derived text TestCatalogFollowsDefinition and
// TestCatalogWindow check) holds: names and look-ups, a cell for every
// column of the page, a documentation address, the scheme its definition
// has (an entry built from HMACOptions is SchemeHMAC, from Ed25519Options
// SchemeEd25519, from TokenOptions SchemeToken; one of a fixed format is
// none of the defined schemes' own, Ed25519), its environment variables.
func TestCatalogEntries(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	fixed := []string{providers.SchemeHMAC, providers.SchemeECDSA, providers.SchemeCertificate, providers.SchemeToken, providers.SchemeTwilioURL}
	for _, e := range providers.Entries() {
		got, ok := providers.Lookup(e.Name)
		require.True(t, ok, e.Name)
		assert.Equal(t, e.Name, got.Name)
		assert.Regexp(t, valid, e.Name)
		for field, value := range map[string]string{"Title": e.Title, "Credential": e.Credential, "Headers": e.Headers(), "Signed": e.Signed(), "Window": e.Window(), "EventID": e.EventID()} {
			assert.NotEmpty(t, value, "%s: %s, a cell of the catalog page", e.Name, field)
			assert.NotContains(t, value, "|", "%s: %s would break the catalog table", e.Name, field)
		}
		u, err := url.Parse(e.Docs)
		assert.True(t, err == nil && u.Scheme == "https" && u.Host != "", "%s: docs %q", e.Name, e.Docs)
		_, hmac := e.HMACOptions(providers.Config{PublicURL: hookBase})
		_, ed := e.Ed25519Options()
		_, token := e.TokenOptions()
		switch {
		case hmac:
			assert.Equal(t, providers.SchemeHMAC, e.Scheme, "%s: defined by HMACOptions", e.Name)
		case ed:
			assert.Equal(t, providers.SchemeEd25519, e.Scheme, "%s: defined by Ed25519Options", e.Name)
		case token:
			assert.Equal(t, providers.SchemeToken, e.Scheme, "%s: defined by TokenOptions", e.Name)
		default:
			assert.Contains(t, fixed, e.Scheme, "%s: a verifier of a fixed format", e.Name)
		}
		assert.Regexp(t, `^[A-Z][A-Z0-9_]*_WEBHOOK_SECRET$`, e.SecretEnv(), e.Name)
		assert.Equal(t, e.NeedsVerifyToken, e.VerifyTokenEnv() != "", e.Name)
		assert.Equal(t, e.NeedsVerifyToken, e.Name == "meta", "only meta needs a verify token")
	}
	for _, name := range []string{"", "Stripe", "stripe ", "nope", "git"} {
		_, ok := providers.Lookup(name)
		assert.False(t, ok, "%q", name)
	}
	names := providers.Names()
	names[0] = "changed"
	assert.NotEqual(t, "changed", providers.Names()[0], "Names returns a copy")
	assert.Equal(t, "DISCORD_EVENTS_WEBHOOK_SECRET", mustLookup(t, "discord-events").SecretEnv())
	assert.Equal(t, "META_WEBHOOK_VERIFY_TOKEN", mustLookup(t, "meta").VerifyTokenEnv())
	assert.Equal(t, "A_B_C", providers.EnvPrefix("a.b-c"))
}

func mustLookup(t *testing.T, name string) providers.Entry {
	t.Helper()
	e, ok := providers.Lookup(name)
	require.True(t, ok, name)
	return e
}

func TestCatalogNewErrors(t *testing.T) {
	t.Parallel()
	_, err := providers.New("strpe", providers.Config{Secrets: webhooks.StaticSecrets("whsec_x")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown provider "strpe"`)
	assert.Contains(t, err.Error(), "providers.Names()")

	for _, name := range []string{"twilio", "hubspot", "square", "trello"} {
		_, err = providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets("token")})
		assert.ErrorContains(t, err, "PublicURL", name)
	}
	_, err = providers.New("meta", providers.Config{Secrets: webhooks.StaticSecrets("app-secret")})
	assert.ErrorContains(t, err, "META_WEBHOOK_VERIFY_TOKEN")

	full := providers.Config{PublicURL: hookBase, VerifyToken: "vt"}
	for _, name := range providers.Names() {
		cfg := full
		_, err := providers.New(name, cfg)
		assert.ErrorContains(t, err, "creds is nil", name)
		cfg.Secrets = webhooks.StaticSecrets("")
		_, err = providers.New(name, cfg)
		assert.ErrorContains(t, err, "is empty", name)
	}
	// Secret formats are checked at construction, without quoting them.
	for name, bad := range map[string]string{
		"twitch":   "short",
		"telegram": "has spaces in it",
		"msteams":  "not base64 !",
		"airtable": "not base64 !",
		"sendgrid": "bm90IGEga2V5",
		"sns":      "not-an-arn",
		"openai":   "whsec_not base64",
		"discord":  "abcd",
	} {
		_, err := providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(bad)})
		if assert.Error(t, err, name) {
			assert.NotContains(t, err.Error(), bad, "%s: the error quotes the secret", name)
		}
	}
}

// TestCatalogConfigClock checks that Config.Clock reaches the verifiers
// that check a time.
func TestCatalogConfigClock(t *testing.T) {
	t.Parallel()
	past := time.Now().Add(-time.Hour)
	for _, name := range []string{"stripe", "discord", "sendgrid", "mailgun", "twitch", "box"} {
		s, err := webhookstest.NewKeySigner(name)
		require.NoError(t, err)
		v, err := providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(s.Credential()), Clock: webhookstest.NewClock(past)})
		require.NoError(t, err)
		d, err := s.Sign(hookBase+"/webhooks/"+name, webhookstest.Message{})
		require.NoError(t, err)
		req, err := d.Request(context.Background())
		require.NoError(t, err)
		_, err = webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: name}, req, 0)
		assert.ErrorIs(t, err, webhooks.ReasonTimestampExpired, "%s: signed now, an hour after the verifier's clock", name)
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"STRIPE_WEBHOOK_SECRET":         "whsec_env",
		"GITHUB_WEBHOOK_SECRET":         "gh",
		"META_WEBHOOK_SECRET":           "app-secret",
		"META_WEBHOOK_VERIFY_TOKEN":     "vt",
		"DISCORD_EVENTS_WEBHOOK_SECRET": "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
	}
	got, err := providers.FromEnv(func(k string) string { return env[k] }, providers.Config{})
	require.NoError(t, err)
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
		assert.NotNil(t, c.Verifier)
		assert.Equal(t, mustLookup(t, c.Name).SecretEnv(), c.SecretEnv)
	}
	assert.Equal(t, []string{"discord-events", "github", "meta", "stripe"}, names)

	env["TWILIO_WEBHOOK_SECRET"] = "tw-secret-value"
	delete(env, "META_WEBHOOK_VERIFY_TOKEN")
	got, err = providers.FromEnv(func(k string) string { return env[k] }, providers.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TWILIO_WEBHOOK_SECRET is set")
	assert.Contains(t, err.Error(), "META_WEBHOOK_VERIFY_TOKEN")
	assert.NotContains(t, err.Error(), "tw-secret-value")
	assert.Len(t, got, 3, "the others are still built")
}

func rand8(t *testing.T) string {
	b := make([]byte, 8)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}
