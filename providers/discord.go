package providers

import (
	"net/http"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/jsonpath"
)

// DiscordInteractionsOptions returns the options for Discord interactions
// received over HTTP (an app's Interactions Endpoint URL). Discord signs
// the X-Signature-Timestamp value immediately followed by the raw body with
// the app's Ed25519 key; X-Signature-Ed25519 holds the signature in hex.
// The public key is the hex string on the app's General Information page.
// The event ID is the interaction's "id" and the type its numeric "type"
// ("2" for an application command). Discord documents no tolerance; the
// timestamp must lie within webhooks.DefaultTolerance of the clock either
// way.
//
// Discord's PING (type 1), sent when the URL is saved and during Discord's
// routine security checks, is answered {"type":1} once its signature
// verified and is not stored; an unsigned or badly signed PING is refused
// with 401, as Discord requires.
//
// Discord expects the answer to every other interaction to be an
// interaction response, sent within 3 seconds. The Receiver answers an
// accepted webhook with its own small JSON body, which Discord does not
// understand as one, so serve interactions with webhooks.VerifyMiddleware
// and a handler of your own (answering, for example, a deferred response)
// unless the Receiver can be told what to answer.
//
//	providers.NewEd25519Verifier(providers.DiscordInteractionsOptions(), webhooks.StaticSecrets(os.Getenv("DISCORD_PUBLIC_KEY")))
//
// See https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint.
func DiscordInteractionsOptions() Ed25519Options {
	return Ed25519Options{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature-Ed25519",
			Encoding:        webhooks.EncodingHex,
			SignedContent:   "{timestamp}{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Signature-Timestamp"},
			Event:           webhooks.EventSource{IDPath: "id", TypePath: "type"},
		},
		PublicKeyFormat: Ed25519KeyHex,
		Handshake:       discordInteractionPing,
	}
}

// DiscordWebhookEventsOptions returns the options for Discord webhook
// events (an app's Webhook Events URL), which are signed as interactions
// are (see DiscordInteractionsOptions). Their PING has "type": 0 and is
// answered 204 with no body once its signature verified. Events carry no
// ID, so the event ID is derived from the body (Event.IDFromBody: "sha256:"
// and the hex SHA-256 of the body); the type is the inner "event.type",
// such as "APPLICATION_AUTHORIZED".
//
//	providers.NewEd25519Verifier(providers.DiscordWebhookEventsOptions(), webhooks.StaticSecrets(os.Getenv("DISCORD_PUBLIC_KEY")))
//
// See https://discord.com/developers/docs/events/webhook-events.
func DiscordWebhookEventsOptions() Ed25519Options {
	return Ed25519Options{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature-Ed25519",
			Encoding:        webhooks.EncodingHex,
			SignedContent:   "{timestamp}{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Signature-Timestamp"},
			Event:           webhooks.EventSource{IDFromBody: true, TypePath: "event.type"},
		},
		PublicKeyFormat: Ed25519KeyHex,
		Handshake:       discordWebhookEventPing,
	}
}

// discordInteractionPing answers Discord's interaction PING (type 1) with
// a PONG (type 1).
func discordInteractionPing(req *webhooks.Request, _ webhooks.Verification, _ []byte) (*webhooks.Response, error) {
	if discordType(req.Body) != "1" {
		return nil, nil
	}
	return &webhooks.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       []byte(`{"type":1}`),
	}, nil
}

// discordWebhookEventPing acknowledges Discord's webhook event PING (type
// 0) with 204 and no body.
func discordWebhookEventPing(req *webhooks.Request, _ webhooks.Verification, _ []byte) (*webhooks.Response, error) {
	if discordType(req.Body) != "0" {
		return nil, nil
	}
	return &webhooks.Response{
		StatusCode: http.StatusNoContent,
		Header:     http.Header{"Content-Type": {"application/json"}},
	}, nil
}

// discordType returns the top-level "type" of a JSON body, "" when there is
// none.
func discordType(body []byte) string {
	doc := jsonpath.Doc{Body: body}
	t, result := doc.Lookup("type")
	if result != jsonpath.Found {
		return ""
	}
	return t
}
