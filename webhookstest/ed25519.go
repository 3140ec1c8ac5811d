package webhookstest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
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
// providers.Ed25519KeyHex (as Discord shows it), base64 for
// providers.Ed25519KeyBase64, "whpk_" and base64 for
// providers.Ed25519KeyStandardWebhooks.
func (k Ed25519KeyPair) PublicKey(format providers.Ed25519KeyFormat) string {
	switch format {
	case providers.Ed25519KeyBase64:
		return base64.StdEncoding.EncodeToString(k.Public)
	case providers.Ed25519KeyStandardWebhooks:
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

// SignEd25519 signs msg with key as a provider configured by opts would
// (providers.DiscordInteractionsOptions,
// providers.DiscordWebhookEventsOptions,
// providers.StandardWebhooksEd25519Options or options of your own). It
// returns the request headers: the signature, the timestamp and event ID
// and type headers the options read, and Content-Type (see
// SignedMessage.ContentType). Headers are written under the configured
// names, never the HeaderFallbacks.
//
// It returns an error when the options are invalid (as
// providers.NewEd25519Verifier reports them), when a key is not a 64-byte
// private key, or when msg disagrees with the options or the body. More
// keys, for list headers only, add one signature item each after key's,
// as a provider does while rotating keys.
func SignEd25519(opts providers.Ed25519Options, key ed25519.PrivateKey, msg SignedMessage, more ...ed25519.PrivateKey) (http.Header, error) {
	keys := append([]ed25519.PrivateKey{key}, more...)
	for _, k := range keys {
		if len(k) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("webhookstest: an Ed25519 private key has %d bytes, not %d", ed25519.PrivateKeySize, len(k))
		}
	}
	pub := Ed25519KeyPair{Public: key.Public().(ed25519.PublicKey)}
	check := webhooks.StaticSecrets(pub.PublicKey(opts.PublicKeyFormat))
	if _, err := providers.NewEd25519Verifier(opts, check); err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	if len(keys) > 1 && opts.ItemSeparator == "" {
		return nil, errors.New("webhookstest: more keys need a list signature header (ItemSeparator)")
	}

	return signRequest(opts.SignedRequest, msg, func(content []byte) [][]byte {
		sigs := make([][]byte, len(keys))
		for i, k := range keys {
			sigs[i] = ed25519.Sign(k, content)
		}
		return sigs
	})
}

// NewEd25519Request returns a POST request to url carrying msg.Body and the
// headers SignEd25519 makes, bound to t's context. It fails t if signing
// fails.
func NewEd25519Request(t testing.TB, url string, opts providers.Ed25519Options, key ed25519.PrivateKey, msg SignedMessage, more ...ed25519.PrivateKey) *http.Request {
	t.Helper()
	if msg.URL == "" {
		msg.URL = requestURI(url)
	}
	h, err := SignEd25519(opts, key, msg, more...)
	if err != nil {
		t.Fatal(err)
	}
	return newRequest(t, http.MethodPost, url, msg.Body, h)
}
