package providers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// Presets for messaging and social platforms: Meta (WhatsApp, Instagram,
// Messenger), X (Twitter), Twitch EventSub, Telegram, LINE and Microsoft
// Teams outgoing webhooks.

// MetaOptions returns the options for Meta webhooks (the Graph API's
// Webhooks product, used by WhatsApp Business, Instagram, Messenger and
// Pages): X-Hub-Signature-256 is "sha256=" and the hex HMAC-SHA-256 of the
// raw body keyed with the app secret. Meta sends no event ID and signs no
// time; a delivery batches changes under "entry", so the ID is derived
// from the signed body (Event.IDFromBody) and the type is the body's
// "object" ("whatsapp_business_account", "page", "instagram").
//
// The catalog entry also answers Meta's GET verification request
// (hub.mode=subscribe, hub.verify_token, hub.challenge) with the
// challenge, as text/plain, when hub.verify_token equals Config.VerifyToken,
// and answers deliveries 200 with no body, as Meta asks.
//
// Source: https://developers.facebook.com/docs/graph-api/webhooks/getting-started
// (the verification request and its answer; X-Hub-Signature-256 "sha256="
// HMAC of the payload with the app secret; "respond to all Event
// Notifications with 200 OK"; the SHA-1 X-Hub-Signature Meta sends beside
// it is not checked and never stored).
func MetaOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:       "X-Hub-Signature-256",
			SignaturePrefix:       "sha256=",
			Event:                 webhooks.EventSource{IDFromBody: true, TypePath: "object"},
			OtherSignatureHeaders: []string{"X-Hub-Signature"},
		},
	}
}

// metaChallenge answers Meta's GET verification request.
func metaChallenge(verifyToken string) func(context.Context, webhooks.Route, *webhooks.Request) (*webhooks.Response, error) {
	want := sha256.Sum256([]byte(verifyToken))
	return func(_ context.Context, _ webhooks.Route, req *webhooks.Request) (*webhooks.Response, error) {
		if req.Method != http.MethodGet {
			return nil, nil
		}
		q := parseQuery(req)
		if q.Get("hub.mode") != "subscribe" {
			return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the verification request's hub.mode is not \"subscribe\"")
		}
		challenge := q.Get("hub.challenge")
		if challenge == "" || len(challenge) > maxChallengeBytes {
			return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the verification request has no usable hub.challenge")
		}
		got := sha256.Sum256([]byte(q.Get("hub.verify_token")))
		if q.Get("hub.verify_token") == "" {
			return nil, webhooks.Reject(webhooks.ReasonMissingSignature, "the verification request has no hub.verify_token")
		}
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return nil, webhooks.Reject(webhooks.ReasonBadSignature, "hub.verify_token does not match the configured verify token")
		}
		return textResponse(challenge), nil
	}
}

// TwitterOptions returns the options for the X (Twitter) Account Activity
// and webhook APIs: x-twitter-webhooks-signature is "sha256=" and the
// base64 HMAC-SHA-256 of the raw body keyed with the app's consumer
// secret (a bearer or access token is refused at construction). X sends
// no event ID and signs no time, so the ID is derived from
// the signed body (Event.IDFromBody); the catalog entry sets the type to
// the body's first key ending in "_events" ("tweet_create_events").
//
// The catalog entry also answers X's GET challenge-response check: for
// ?crc_token=T it answers {"response_token":"sha256=<base64 HMAC-SHA-256
// of T under the consumer secret>"}. The check itself is not signed (its
// answer is the proof), so it is answered to anyone, and its answer is
// exactly the signature X would put on a body T: the entry therefore
// answers only a T of X's opaque shape (1 to 128 characters of the base64
// and base64url alphabets, which a UUID fits too) and refuses deliveries
// that are not JSON objects, so no answer is the signature of anything it
// accepts. A host that uses these options without the catalog entry and
// answers the check itself must keep the two apart in the same way.
//
// Source: https://docs.x.com/x-api/webhooks/introduction (the CRC and its
// response_token, the x-twitter-webhooks-signature header, 200 OK).
func TwitterOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Twitter-Webhooks-Signature",
			SignaturePrefix: "sha256=",
			Encoding:        webhooks.EncodingBase64,
			Event:           webhooks.EventSource{IDFromBody: true},
		},
		CheckSecret: twitterWrongKind,
	}
}

// twitterCRC answers X's GET challenge-response check with the first
// usable secret of the route, and refuses a delivery that is not a JSON
// object.
//
// The answer is the HMAC X signs deliveries with, under the same key, so
// the two must never meet: a crc_token must be an opaque token
// (opaqueToken: no "{", no white space) and a delivery a JSON object (its
// first byte past white space "{"). No token can then be a delivery, and
// no answer the signature of one.
func twitterCRC(creds webhooks.CredentialResolver) func(context.Context, webhooks.Route, *webhooks.Request) (*webhooks.Response, error) {
	return func(ctx context.Context, route webhooks.Route, req *webhooks.Request) (*webhooks.Response, error) {
		if req.Method != http.MethodGet {
			if !jsonObject(req.Body) {
				return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "an X delivery is a JSON object")
			}
			return nil, nil
		}
		tokens := parseQuery(req)["crc_token"]
		if len(tokens) != 1 || !opaqueToken(tokens[0]) {
			return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the challenge-response check needs one crc_token of 1 to 128 characters A-Z, a-z, 0-9, +, /, =, _ and -")
		}
		secrets, err := creds.Secrets(ctx, route)
		if err != nil {
			return nil, err
		}
		for _, s := range secrets {
			if len(s.Value) == 0 {
				continue
			}
			mac := hmac.New(sha256.New, s.Value)
			mac.Write([]byte(tokens[0]))
			return jsonResponse(map[string]string{"response_token": "sha256=" + base64.StdEncoding.EncodeToString(mac.Sum(nil))})
		}
		return nil, webhooks.Reject(webhooks.ReasonNoCredentials, "no consumer secret is configured for this route")
	}
}

// twitterType names an X delivery by its first "…_events" key.
func twitterType(req *webhooks.Request, v *webhooks.Verification) error {
	v.EventType = firstKey(req.Body, func(k string) bool { return strings.HasSuffix(k, "_events") })
	return nil
}

// TwitchTolerance is the window TwitchOptions uses: Twitch says to reject
// a message older than ten minutes.
const TwitchTolerance = 10 * time.Minute

// Twitch EventSub message types (Twitch-Eventsub-Message-Type).
const (
	twitchVerification = "webhook_callback_verification"
	twitchRevocation   = "revocation"
)

// TwitchOptions returns the options for Twitch EventSub over webhooks:
// Twitch-Eventsub-Message-Signature is "sha256=" and the hex HMAC-SHA-256
// of Twitch-Eventsub-Message-Id, Twitch-Eventsub-Message-Timestamp
// (RFC 3339 with nanoseconds) and the raw body, concatenated, keyed with
// the subscription's secret (10 to 100 ASCII characters, checked at
// construction). The message ID is the event ID (Twitch resends a message
// with the same ID) and is signed; the type is
// Twitch-Eventsub-Subscription-Type ("channel.follow"), or "revocation"
// for a revocation message. The timestamp must lie within TwitchTolerance
// of the clock.
//
// The webhook_callback_verification message is answered, once its
// signature verified, with its "challenge" as text/plain, and is not
// stored.
//
// Source: https://dev.twitch.tv/docs/eventsub/handling-webhook-events
// (headers, the HMAC message of ID + timestamp + body, "sha256=" hex,
// rejecting messages older than 10 minutes, duplicate message IDs, the
// challenge answered with a 200 and the raw challenge as text/plain).
func TwitchOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "Twitch-Eventsub-Message-Signature",
			SignaturePrefix: "sha256=",
			SignedContent:   "{id}{timestamp}{body}",
			Timestamp:       webhooks.TimestampSource{Header: "Twitch-Eventsub-Message-Timestamp", Format: webhooks.TimestampRFC3339, Tolerance: TwitchTolerance},
			Event:           webhooks.EventSource{IDHeader: "Twitch-Eventsub-Message-Id", TypeHeader: "Twitch-Eventsub-Subscription-Type"},
		},
		DecodeSecret: twitchSecret,
		Handshake:    twitchChallenge,
	}
}

// twitchSecret checks Twitch's secret rule: 10 to 100 ASCII characters.
func twitchSecret(secret []byte) ([]byte, error) {
	if len(secret) < 10 || len(secret) > 100 {
		return nil, errors.New("a Twitch EventSub secret has 10 to 100 characters")
	}
	for _, c := range secret {
		if c < 0x20 || c > 0x7e {
			return nil, errors.New("a Twitch EventSub secret is printable ASCII")
		}
	}
	return secret, nil
}

// twitchChallenge answers the signed webhook_callback_verification.
func twitchChallenge(req *webhooks.Request, _ webhooks.Verification, _ []byte) (*webhooks.Response, error) {
	if req.Header.Get("Twitch-Eventsub-Message-Type") != twitchVerification {
		return nil, nil
	}
	var msg struct {
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(req.Body, &msg) != nil || msg.Challenge == "" || len(msg.Challenge) > maxChallengeBytes {
		return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "the webhook_callback_verification message has no challenge string")
	}
	return textResponse(msg.Challenge), nil
}

// twitchType names a revocation "revocation".
func twitchType(req *webhooks.Request, v *webhooks.Verification) error {
	if req.Header.Get("Twitch-Eventsub-Message-Type") == twitchRevocation {
		v.EventType = twitchRevocation
	}
	return nil
}

// TelegramTokenHeader carries the secret_token a bot set with setWebhook.
const TelegramTokenHeader = "X-Telegram-Bot-Api-Secret-Token"

// TelegramOptions returns the TokenOptions for Telegram bot webhooks set
// with a secret_token: Telegram sends the token itself in
// X-Telegram-Bot-Api-Secret-Token (1 to 256 characters A-Z, a-z, 0-9, _
// and -, checked at construction) and signs nothing. The event ID is the
// update's "update_id"; the catalog entry sets the type to the update's
// other key ("message", "callback_query").
//
// Source: https://core.telegram.org/bots/api#setwebhook (secret_token and
// the header) and https://core.telegram.org/bots/api#update.
func TelegramOptions() TokenOptions {
	return TokenOptions{Header: TelegramTokenHeader, Event: webhooks.EventSource{IDPath: "update_id"}}
}

var telegramToken = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// telegramSecret checks Telegram's secret_token rule.
func telegramSecret(value []byte) error {
	if telegramBotToken.Match(value) {
		return errors.New("it is the bot's token (<bot ID>:…), not the webhook secret: paste the secret_token the host passed to setWebhook")
	}
	if !telegramToken.Match(value) {
		return errors.New("a Telegram secret_token is 1 to 256 characters A-Z, a-z, 0-9, _ and -")
	}
	return nil
}

// telegramType names an update by its field other than update_id.
func telegramType(req *webhooks.Request, v *webhooks.Verification) error {
	v.EventType = firstKey(req.Body, func(k string) bool { return k != "update_id" })
	return nil
}

// LINEOptions returns the options for the LINE Messaging API: x-line-signature
// is the base64 HMAC-SHA-256 of the raw body keyed with the channel secret.
// A delivery carries a list of events, each with a "webhookEventId" that a
// redelivery keeps (with deliveryContext.isRedelivery set to true): the
// event ID is the delivery's webhookEventIds joined with ",", and the
// catalog entry digests the body without the isRedelivery flags, so a
// redelivery is a duplicate rather than a conflict. The type is the first
// event's "type" ("message"). No time is signed. The verification request
// LINE sends when a webhook URL is saved (an empty "events" list) is
// answered 200 once its signature verified, and not stored.
//
// Source: https://developers.line.biz/en/reference/messaging-api/#signature-validation
// and https://developers.line.biz/en/reference/messaging-api/#webhook-event-objects
// (webhookEventId, deliveryContext.isRedelivery).
func LINEOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Line-Signature",
			Encoding:        webhooks.EncodingBase64,
			Event:           webhooks.EventSource{IDFunc: lineEventIDs, TypePath: "events.0.type"},
		},
		Handshake: lineVerification,
	}
}

// lineEventIDs joins a delivery's webhookEventIds.
func lineEventIDs(req *webhooks.Request, _ webhooks.Verification) (string, error) {
	var msg struct {
		Events []struct {
			ID string `json:"webhookEventId"`
		} `json:"events"`
	}
	if json.Unmarshal(req.Body, &msg) != nil {
		return "", webhooks.Reject(webhooks.ReasonMalformedPayload, "the body is not a LINE webhook")
	}
	ids := make([]string, 0, len(msg.Events))
	for _, e := range msg.Events {
		if e.ID == "" {
			return "", webhooks.Reject(webhooks.ReasonMissingEventID, "a LINE event has no webhookEventId")
		}
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return strings.Join(ids, ","), nil
}

// lineVerification answers the signed verification request (no events).
func lineVerification(req *webhooks.Request, _ webhooks.Verification, _ []byte) (*webhooks.Response, error) {
	var msg struct {
		Events *[]json.RawMessage `json:"events"`
	}
	if json.Unmarshal(req.Body, &msg) != nil || msg.Events == nil || len(*msg.Events) > 0 {
		return nil, nil
	}
	return &webhooks.Response{StatusCode: http.StatusOK}, nil
}

// lineDigest digests a delivery without its isRedelivery flags.
func lineDigest(req *webhooks.Request, v *webhooks.Verification) error {
	v.PayloadSHA256 = semanticDigest(req.Body, []string{"events", "*", "deliveryContext", "isRedelivery"})
	return nil
}

// TeamsOptions returns the options for Microsoft Teams outgoing webhooks:
// the Authorization header is "HMAC " and the base64 HMAC-SHA-256 of the
// raw body, keyed with the base64-decoded security token Teams shows when
// the webhook is created (a token that is not base64 is refused at
// construction). The event ID is the activity's "id" and the type its
// "type" ("message"), both signed. No time is signed.
//
// Teams shows the answer to an outgoing webhook in the channel: the
// catalog entry answers accepted and duplicate deliveries 200 with a
// message activity, {"type":"message","text":"Received."}.
//
// Source: https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook
// (the HMAC in the Authorization header, the security token as a base64
// key, the reply as a message within 10 seconds).
func TeamsOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "Authorization",
			SignaturePrefix: "HMAC ",
			Encoding:        webhooks.EncodingBase64,
			Event:           webhooks.EventSource{IDPath: "id", TypePath: "type"},
		},
		DecodeSecret: decodeBase64Secret("a Teams security token"),
	}
}

// decodeBase64Secret decodes a secret a provider hands out in base64. The
// error names what the secret is, never its value.
func decodeBase64Secret(what string) func([]byte) ([]byte, error) {
	return func(secret []byte) ([]byte, error) {
		key, err := sigsyntax.DecodeBase64(strings.TrimSpace(string(secret)))
		if err != nil || len(key) == 0 {
			return nil, errors.New(what + " is base64")
		}
		return key, nil
	}
}
