package providers_test

import (
	"context"
	"encoding/base64"
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

// catalogCase signs a request the way one catalog provider would.
type catalogCase struct {
	secret string // what Config.Secrets holds
	// request returns a request to path signed with the case's credential
	// and the event ID the verifier should read from it.
	request func(t *testing.T, path string) (*http.Request, string)
}

// catalogCases returns a case for every catalog name; each call makes
// other credentials (for salt "" and "b", for example).
func catalogCases(salt string) map[string]catalogCase {
	whsec := "whsec_" + base64.StdEncoding.EncodeToString([]byte("catalog-key-0123456789abcdef0123"+salt))
	hmacCase := func(secret string, opts func() webhooks.HMACOptions, msg func() webhookstest.HMACMessage) catalogCase {
		return catalogCase{secret, func(t *testing.T, path string) (*http.Request, string) {
			m := msg()
			req := webhookstest.NewHMACRequest(t, path, opts(), secret, m)
			if m.ID == "" {
				return req, bodyID(m.Body)
			}
			return req, m.ID
		}}
	}
	keys := webhookstest.NewEd25519KeyPair()
	ed25519Case := func(opts func() providers.Ed25519Options, msg webhookstest.Ed25519Message, wantID string) catalogCase {
		return catalogCase{keys.PublicKey(opts().PublicKeyFormat), func(t *testing.T, path string) (*http.Request, string) {
			return webhookstest.NewEd25519Request(t, path, opts(), keys.Private, msg), wantID
		}}
	}
	eventsBody := []byte(`{"version":1,"type":1,"event":{"type":"APPLICATION_AUTHORIZED"}}`)
	return map[string]catalogCase{
		"discord": ed25519Case(providers.DiscordInteractionsOptions,
			webhookstest.Ed25519Message{Body: []byte(`{"id":"1312222222222222222","type":2}`)}, "1312222222222222222"),
		"discord-events": ed25519Case(providers.DiscordWebhookEventsOptions,
			webhookstest.Ed25519Message{Type: "APPLICATION_AUTHORIZED", Body: eventsBody}, bodyID(eventsBody)),
		"github": hmacCase("gh-secret"+salt, providers.GitHubOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "d-1", Type: "push", Body: []byte(`{"ref":"main"}`)}
		}),
		"gitlab": {"gl-token" + salt, func(t *testing.T, path string) (*http.Request, string) {
			return webhookstest.NewTokenRequest(t, path, providers.GitLabTokenOptions(), "gl-token"+salt,
				webhookstest.TokenMessage{ID: "idem-1", Type: "Push Hook", Body: []byte(`{"object_kind":"push"}`)}), "idem-1"
		}},
		"gitlab-signing": hmacCase(whsec, providers.GitLabSigningOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "idem-2", Type: "Push Hook", Body: []byte(`{"object_kind":"push"}`)}
		}),
		"linear": hmacCase("lin_wh_secret"+salt, providers.LinearOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "del-1", Type: "Issue",
				Body: []byte(`{"action":"create","webhookTimestamp":` + strconv.FormatInt(time.Now().UnixMilli(), 10) + `}`)}
		}),
		"paddle": hmacCase("pdl_ntfset_catalog"+salt, providers.PaddleOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "evt_01", Type: "transaction.completed", Body: []byte(`{"event_id":"evt_01","event_type":"transaction.completed"}`)}
		}),
		"shopify": hmacCase("shpss_catalog"+salt, providers.ShopifyOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "w-1", Type: "orders/create", Body: []byte(`{"id":1}`)}
		}),
		"slack": hmacCase("slack-secret"+salt, providers.SlackOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "Ev1", Type: "message", Body: []byte(`{"event_id":"Ev1","event":{"type":"message"}}`)}
		}),
		"standardwebhooks": hmacCase(whsec, providers.StandardWebhooksOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "msg_1", Type: "user.created", Body: []byte(`{"type":"user.created"}`)}
		}),
		"standardwebhooks-ed25519": ed25519Case(providers.StandardWebhooksEd25519Options,
			webhookstest.Ed25519Message{ID: "msg_2", Body: []byte(`{"type":"user.created"}`)}, "msg_2"),
		"stripe": hmacCase("whsec_catalog"+salt, providers.StripeOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "evt_1", Type: "invoice.paid", Body: []byte(`{"id":"evt_1","type":"invoice.paid"}`)}
		}),
		"svix": hmacCase(whsec, providers.SvixOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{ID: "msg_3", Body: []byte(`{"data":{}}`)}
		}),
		"twilio": {"twilio-token" + salt, func(t *testing.T, path string) (*http.Request, string) {
			msg := webhookstest.TwilioMessage{URL: "https://hooks.example.com" + path, Params: url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"sent"}}}
			return webhookstest.NewTwilioRequest(t, "twilio-token"+salt, msg), bodyID([]byte(webhookstest.TwilioParams(msg.Params)))
		}},
		"zoom": hmacCase("zoom-secret"+salt, providers.ZoomOptions, func() webhookstest.HMACMessage {
			return webhookstest.HMACMessage{Type: "meeting.started", Body: []byte(`{"event":"meeting.started","payload":{}}`)}
		}),
	}
}

// TestCatalog builds every provider of the catalog by name and sends it a
// request signed as the provider signs, through a gateway.
func TestCatalog(t *testing.T) {
	t.Parallel()
	cases, others := catalogCases(""), catalogCases("-other")
	names := providers.Names()
	require.True(t, slices.IsSorted(names), "Names is sorted: %v", names)
	require.ElementsMatch(t, slices.Sorted(maps.Keys(cases)), names, "every catalog name has a case here, and only those")

	resolver := webhooks.NewRegistry()
	for _, name := range names {
		c := cases[name]
		v, err := providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(c.secret), PublicURL: "https://hooks.example.com"})
		require.NoError(t, err, name)
		require.NoError(t, resolver.Register(name, v), "the name %q is a valid provider key", name)
	}
	inbox := memstore.NewInbox()
	gw, err := webhooks.NewReceiver(resolver, inbox, memstore.NewReplay())
	require.NoError(t, err)
	for _, name := range names {
		req, wantID := cases[name].request(t, "/webhooks/"+name)
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", name, rec.Body)
		item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: name, EventID: wantID})
		if assert.NoError(t, err, name) {
			assert.Equal(t, "static:0", item.KeyID, name)
		}
	}
	// A request signed with another credential is refused by each.
	for _, name := range names {
		v, err := providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(cases[name].secret), PublicURL: "https://hooks.example.com"})
		require.NoError(t, err, name)
		req, _ := others[name].request(t, "/webhooks/"+name)
		_, err = webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: name}, req, 0)
		assert.ErrorIs(t, err, webhooks.ReasonBadSignature, name)
	}
}

func TestCatalogEntries(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	schemes := []string{providers.SchemeHMAC, providers.SchemeEd25519, providers.SchemeToken, providers.SchemeTwilioURL}
	for _, name := range providers.Names() {
		e, ok := providers.Lookup(name)
		require.True(t, ok, name)
		assert.Equal(t, name, e.Name)
		assert.Regexp(t, valid, name)
		assert.NotEmpty(t, e.Title, name)
		assert.True(t, strings.HasPrefix(e.Docs, "https://"), "%s: docs %q", name, e.Docs)
		assert.Contains(t, schemes, e.Scheme, name)
		assert.NotEmpty(t, e.Credential, name)
		assert.Regexp(t, `^[A-Z][A-Z0-9_]*$`, e.EnvVar, name)
	}
	for _, name := range []string{"", "Stripe", "stripe ", "nope", "git"} {
		_, ok := providers.Lookup(name)
		assert.False(t, ok, "%q", name)
	}
	names := providers.Names()
	names[0] = "changed"
	assert.NotEqual(t, "changed", providers.Names()[0], "Names returns a copy")
}

func TestCatalogNewErrors(t *testing.T) {
	t.Parallel()
	_, err := providers.New("strpe", providers.Config{Secrets: webhooks.StaticSecrets("whsec_x")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown provider "strpe"`)
	assert.Contains(t, err.Error(), "providers.Names()")

	_, err = providers.New("twilio", providers.Config{Secrets: webhooks.StaticSecrets("token")})
	require.Error(t, err, "Twilio needs the public URL")
	assert.Contains(t, err.Error(), "PublicURL")

	for _, name := range providers.Names() {
		_, err := providers.New(name, providers.Config{PublicURL: "https://hooks.example.com"})
		assert.ErrorContains(t, err, "creds is nil", name)
		_, err = providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(""), PublicURL: "https://hooks.example.com"})
		assert.ErrorContains(t, err, "is empty", name)
	}
}

// TestCatalogConfigClock checks that Config.Clock reaches the verifiers
// that check a time.
func TestCatalogConfigClock(t *testing.T) {
	t.Parallel()
	past := time.Now().Add(-time.Hour)
	v, err := providers.New("stripe", providers.Config{Secrets: webhooks.StaticSecrets("whsec_clock"), Clock: fixedClock(past)})
	require.NoError(t, err)
	req := webhookstest.NewHMACRequest(t, "/webhooks/stripe", providers.StripeOptions(), "whsec_clock",
		webhookstest.HMACMessage{Body: []byte(`{"id":"evt_1","type":"t"}`)})
	_, err = webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: "stripe"}, req, 0)
	assert.ErrorIs(t, err, webhooks.ReasonTimestampExpired, "signed now, an hour after the verifier's clock")

	keys := webhookstest.NewEd25519KeyPair()
	v, err = providers.New("discord", providers.Config{Secrets: webhooks.StaticSecrets(keys.PublicKey(providers.Ed25519KeyHex)), Clock: fixedClock(past)})
	require.NoError(t, err)
	edReq := webhookstest.NewEd25519Request(t, "/webhooks/discord", providers.DiscordInteractionsOptions(), keys.Private,
		webhookstest.Ed25519Message{Body: []byte(`{"id":"1","type":2}`)})
	_, err = webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: "discord"}, edReq, 0)
	assert.ErrorIs(t, err, webhooks.ReasonTimestampExpired)
}
