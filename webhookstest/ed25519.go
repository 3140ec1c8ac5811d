package webhookstest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
)

// Ed25519KeyPair is an Ed25519 key pair for tests: Private signs with
// SignEd25519, and PublicKey gives the public key in the form a verifier's
// CredentialResolver hands out.
type Ed25519KeyPair struct {
	// Public is the 32-byte public key.
	Public ed25519.PublicKey
	// Private is the 64-byte private key (seed and public key).
	Private ed25519.PrivateKey
}

// NewEd25519KeyPair generates a key pair from crypto/rand.
func NewEd25519KeyPair() Ed25519KeyPair {
	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed) // crypto/rand.Read never fails (Go 1.24 and later)
	priv := ed25519.NewKeyFromSeed(seed)
	return Ed25519KeyPair{Public: priv.Public().(ed25519.PublicKey), Private: priv}
}

// Ed25519KeyPairFromSeed derives the key pair of a 32-byte seed, for
// reproducible test vectors.
func Ed25519KeyPairFromSeed(seed []byte) (Ed25519KeyPair, error) {
	if len(seed) != ed25519.SeedSize {
		return Ed25519KeyPair{}, fmt.Errorf("webhookstest: an Ed25519 seed has %d bytes, not %d", ed25519.SeedSize, len(seed))
	}
	priv := ed25519.NewKeyFromSeed(seed)
	return Ed25519KeyPair{Public: priv.Public().(ed25519.PublicKey), Private: priv}, nil
}

// PublicKey returns the public key written in format: 64 hex digits for
// webhooks.Ed25519KeyHex (as Discord shows it), base64 for
// webhooks.Ed25519KeyBase64, "whpk_" and base64 for
// webhooks.Ed25519KeyStandardWebhooks.
func (k Ed25519KeyPair) PublicKey(format webhooks.Ed25519KeyFormat) string {
	switch format {
	case webhooks.Ed25519KeyBase64:
		return base64.StdEncoding.EncodeToString(k.Public)
	case webhooks.Ed25519KeyStandardWebhooks:
		return "whpk_" + base64.StdEncoding.EncodeToString(k.Public)
	}
	return hex.EncodeToString(k.Public)
}

// StandardWebhooksSecretKey returns the private key as Standard Webhooks
// serializes it for the sender: "whsk_" and the base64 of the seed. A
// receiver never needs it.
func (k Ed25519KeyPair) StandardWebhooksSecretKey() string {
	return "whsk_" + base64.StdEncoding.EncodeToString(k.Private.Seed())
}

// Ed25519Message is a webhook for SignEd25519 to sign.
type Ed25519Message struct {
	// ID is the event ID. When the options read it from a header
	// (EventIDHeader) it is written there, and it is required when the
	// signed content includes it; when they read it from the body
	// (EventIDPath), a non-empty ID must equal the body's.
	ID string
	// Type is the event type, written to EventTypeHeader, or checked
	// against the body at EventTypePath when non-empty.
	Type string
	// Timestamp is when the webhook is signed; zero means time.Now(). It
	// is written to TimestampHeader in TimestampFormat.
	Timestamp time.Time
	// Body is the raw request body, signed as it is.
	Body []byte
	// MoreKeys, for list headers only, adds one signature item for each
	// key, after the first key's, as a provider does while rotating keys.
	MoreKeys []ed25519.PrivateKey
}

// SignEd25519 signs msg with key as a provider configured by opts would
// (DiscordInteractionsOptions, DiscordWebhookEventsOptions,
// StandardWebhooksEd25519Options or options of your own). It returns the
// request headers: the signature, the timestamp and event ID and type
// headers the options read, and Content-Type application/json when the body
// is JSON. Headers are written under the configured names, never the
// HeaderFallbacks.
//
// It returns an error when the options are invalid (as
// webhooks.NewEd25519Verifier reports them), when a key is not a 64-byte
// private key, or when msg disagrees with the options or the body.
func SignEd25519(opts webhooks.Ed25519Options, key ed25519.PrivateKey, msg Ed25519Message) (http.Header, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("webhookstest: an Ed25519 private key has %d bytes, not %d", ed25519.PrivateKeySize, len(key))
	}
	pub := Ed25519KeyPair{Public: key.Public().(ed25519.PublicKey)}
	check := webhooks.StaticSecrets(pub.PublicKey(opts.PublicKeyFormat))
	if _, err := webhooks.NewEd25519Verifier("webhookstest", opts, check, nil); err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	keys := append([]ed25519.PrivateKey{key}, msg.MoreKeys...)
	for _, k := range keys[1:] {
		if len(k) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("webhookstest: an Ed25519 private key has %d bytes, not %d", ed25519.PrivateKeySize, len(k))
		}
	}
	if len(keys) > 1 && opts.ItemSeparator == "" {
		return nil, errors.New("webhookstest: MoreKeys needs a list signature header (ItemSeparator)")
	}

	h := http.Header{}
	if json.Valid(msg.Body) {
		h.Set("Content-Type", "application/json")
	}
	at := msg.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	timestamp := ""
	if opts.TimestampHeader != "" {
		timestamp = formatTimestamp(at, opts.TimestampFormat)
		h.Set(opts.TimestampHeader, timestamp)
	}
	switch {
	case opts.EventIDHeader != "":
		if msg.ID != "" {
			h.Set(opts.EventIDHeader, msg.ID)
		}
	case opts.EventIDPath != "":
		if err := checkEd25519Body(msg.Body, opts.EventIDPath, "ID", msg.ID); err != nil {
			return nil, err
		}
	case opts.EventIDFromBody && msg.ID != "" && msg.ID != webhooks.BodySHA256ID(msg.Body):
		return nil, errors.New("webhookstest: the options derive the event ID from the body, so Ed25519Message.ID must be empty or webhooks.BodySHA256ID(Body)")
	}
	switch {
	case opts.EventTypeHeader != "":
		if msg.Type != "" {
			h.Set(opts.EventTypeHeader, msg.Type)
		}
	case opts.EventTypePath != "":
		if err := checkEd25519Body(msg.Body, opts.EventTypePath, "Type", msg.Type); err != nil {
			return nil, err
		}
	}

	var message []byte
	switch opts.SignedContent {
	case webhooks.Ed25519SignTimestampBody:
		message = append([]byte(timestamp), msg.Body...)
	case webhooks.Ed25519SignIDTimestampBody:
		if msg.ID == "" {
			return nil, errors.New("webhookstest: the signed content includes the event ID, so Ed25519Message.ID is required")
		}
		message = bytes.Join([][]byte{[]byte(msg.ID), []byte(timestamp), msg.Body}, []byte{'.'})
	default:
		message = msg.Body
	}

	sigs := make([]string, len(keys))
	for i, k := range keys {
		sig := ed25519.Sign(k, message)
		if opts.Encoding == webhooks.EncodingBase64 {
			sigs[i] = base64.StdEncoding.EncodeToString(sig)
		} else {
			sigs[i] = hex.EncodeToString(sig)
		}
	}
	if opts.ItemSeparator == "" {
		h.Set(opts.SignatureHeader, opts.SignaturePrefix+sigs[0])
		return h, nil
	}
	kv := opts.KeyValueSeparator
	if kv == "" {
		kv = webhooks.DefaultKeyValueSeparator
	}
	items := make([]string, len(sigs))
	for i, sig := range sigs {
		items[i] = opts.SignatureKey + kv + sig
	}
	h.Set(opts.SignatureHeader, strings.Join(items, opts.ItemSeparator))
	return h, nil
}

// NewEd25519Request returns a POST request to url carrying msg.Body and the
// headers SignEd25519 makes, bound to t's context. It fails t if signing
// fails.
func NewEd25519Request(t testing.TB, url string, opts webhooks.Ed25519Options, key ed25519.PrivateKey, msg Ed25519Message) *http.Request {
	t.Helper()
	h, err := SignEd25519(opts, key, msg)
	if err != nil {
		t.Fatal(err)
	}
	return newRequest(t, http.MethodPost, url, msg.Body, h)
}

// checkEd25519Body fails unless the body has a value at path and, when want
// is set, it equals want.
func checkEd25519Body(body []byte, path, field, want string) error {
	got, ok := bodyValue(body, path)
	switch {
	case !ok && want != "":
		return fmt.Errorf("webhookstest: the options read the event %s from the body at %q, but the body has none there", strings.ToLower(field), path)
	case ok && want != "" && got != want:
		return fmt.Errorf("webhookstest: the body's %q is %q but Ed25519Message.%s is %q", path, got, field, want)
	}
	return nil
}
