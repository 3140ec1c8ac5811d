package providers

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// Ed25519KeyFormat is how a public key is written in Secret.Value.
type Ed25519KeyFormat int

// Public key formats for Ed25519Options.PublicKeyFormat. The zero value is
// Ed25519KeyHex.
const (
	// Ed25519KeyHex is the 32-byte key as 64 hexadecimal digits, as the
	// Discord developer portal shows it, the default.
	Ed25519KeyHex Ed25519KeyFormat = iota
	// Ed25519KeyBase64 is the 32-byte key in base64, either alphabet,
	// padded or not.
	Ed25519KeyBase64
	// Ed25519KeyStandardWebhooks is "whpk_" and the base64 of the 32-byte
	// key, the Standard Webhooks serialization of a public key. The
	// prefix may be left out; a "whsk_" secret key is refused.
	Ed25519KeyStandardWebhooks
)

// String returns the format's name.
func (f Ed25519KeyFormat) String() string {
	switch f {
	case Ed25519KeyHex:
		return "hex"
	case Ed25519KeyBase64:
		return "base64"
	case Ed25519KeyStandardWebhooks:
		return "whpk"
	}
	return "Ed25519KeyFormat(" + strconv.Itoa(int(f)) + ")"
}

// ParseEd25519PublicKey decodes a public key written in format and checks
// its length. Hosts may call it at start-up to validate configured keys;
// Ed25519Verifier calls it for every key the CredentialResolver returns.
// Its errors describe the problem without repeating the value.
func ParseEd25519PublicKey(format Ed25519KeyFormat, value []byte) (ed25519.PublicKey, error) {
	key, err := parseEd25519PublicKey(format, value)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return key, nil
}

// parseEd25519PublicKey is ParseEd25519PublicKey without the package prefix
// on errors, for messages that already name the package.
func parseEd25519PublicKey(format Ed25519KeyFormat, value []byte) (ed25519.PublicKey, error) {
	s := strings.TrimSpace(string(value))
	var (
		key []byte
		err error
	)
	switch format {
	case Ed25519KeyHex:
		if len(s) != hex.EncodedLen(ed25519.PublicKeySize) {
			return nil, fmt.Errorf("an Ed25519 public key in hex has %d digits, not %d", hex.EncodedLen(ed25519.PublicKeySize), len(s))
		}
		key, err = hex.DecodeString(s)
		if err != nil {
			return nil, errors.New("the Ed25519 public key is not hexadecimal")
		}
	case Ed25519KeyBase64, Ed25519KeyStandardWebhooks:
		if format == Ed25519KeyStandardWebhooks {
			if strings.HasPrefix(s, "whsk_") {
				return nil, errors.New("the key is a Standard Webhooks secret key (whsk_): configure the public key (whpk_) instead, and keep the secret key out of this service")
			}
			s = strings.TrimPrefix(s, "whpk_")
		}
		key, err = sigsyntax.DecodeBase64(s)
		if err != nil {
			return nil, errors.New("the Ed25519 public key is not base64")
		}
	default:
		return nil, fmt.Errorf("unknown Ed25519 key format %v", format)
	}
	switch len(key) {
	case ed25519.PublicKeySize:
		return ed25519.PublicKey(key), nil
	case ed25519.SeedSize * 2:
		return nil, errors.New("the key has 64 bytes, the size of an Ed25519 private key: configure the 32-byte public key instead")
	}
	return nil, fmt.Errorf("an Ed25519 public key has %d bytes, not %d", ed25519.PublicKeySize, len(key))
}

// Ed25519Options configures an Ed25519Verifier, for providers that sign
// with an Ed25519 private key and publish the public key: Discord, and
// Standard Webhooks' asymmetric "v1a" scheme. The CredentialResolver
// supplies public keys (Secret.Value, written in PublicKeyFormat), so the
// service needs no secret at all.
//
// The zero value of each field is its documented default; SignatureHeader
// and an event ID source are required. NewEd25519Verifier validates the
// options and reports every problem it finds.
type Ed25519Options struct {
	// SignedRequest is where the signature, timestamp, event ID and type
	// are, and what the signature covers: "{timestamp}{body}" for Discord
	// (the timestamp immediately followed by the body),
	// "{id}.{timestamp}.{body}" for Standard Webhooks v1a. Signatures are
	// 64 bytes, written in Encoding.
	webhooks.SignedRequest

	// PublicKeyFormat is how the public keys from the CredentialResolver
	// are written. A key that does not decode to 32 bytes is a
	// configuration error: Verify returns it wrapped (the Receiver answers
	// 503), naming the key's ID only. Defaults to Ed25519KeyHex.
	PublicKeyFormat Ed25519KeyFormat

	// Handshake, when set, answers a provider challenge (Discord's PING)
	// once the request verified (see webhooks.HandshakeFunc); its key is
	// always nil, since the scheme has no symmetric key. Defaults to nil.
	Handshake webhooks.HandshakeFunc

	// Clock tells the time the timestamp window is checked against.
	// Defaults to the system clock.
	Clock webhooks.Clock
}

// Ed25519Verifier verifies webhooks signed with Ed25519, as configured by
// Ed25519Options: a webhooks.SignatureVerifier whose algorithm is Ed25519
// under the configured public keys. It is safe for concurrent use.
type Ed25519Verifier struct {
	*webhooks.SignatureVerifier
}

// NewEd25519Verifier returns a verifier with the given options, taking
// public keys from creds; several keys allow rotation. It returns an error
// describing every invalid option, and every static key (StaticSecrets,
// TenantSecrets) that is empty or does not decode; keys from other
// resolvers are checked on each request.
func NewEd25519Verifier(opts Ed25519Options, creds webhooks.CredentialResolver) (*Ed25519Verifier, error) {
	var formatErr error
	switch opts.PublicKeyFormat {
	case Ed25519KeyHex, Ed25519KeyBase64, Ed25519KeyStandardWebhooks:
	default:
		formatErr = fmt.Errorf("PublicKeyFormat %v is unknown: use Ed25519KeyHex, Ed25519KeyBase64 or Ed25519KeyStandardWebhooks", opts.PublicKeyFormat)
	}
	v, err := webhooks.NewSignatureVerifier(webhooks.SignatureOptions{
		SignedRequest: opts.SignedRequest,
		Algorithm:     ed25519Algorithm{opts.PublicKeyFormat},
		Credential:    "public key",
		Handshake:     opts.Handshake,
		Clock:         opts.Clock,
	}, creds)
	switch {
	case err != nil && formatErr != nil:
		return nil, fmt.Errorf("%w\n%w", err, formatErr) // one list of problems
	case err != nil:
		return nil, err
	case formatErr != nil:
		return nil, optionsError("Ed25519", formatErr)
	}
	return &Ed25519Verifier{v}, nil
}

// ed25519Algorithm checks Ed25519 signatures under public keys written in
// a format.
type ed25519Algorithm struct{ format Ed25519KeyFormat }

func (ed25519Algorithm) Name() string       { return "Ed25519" }
func (ed25519Algorithm) SignatureSize() int { return ed25519.SignatureSize }

func (a ed25519Algorithm) CheckCredential(value []byte) error {
	_, err := parseEd25519PublicKey(a.format, value)
	return err
}

func (a ed25519Algorithm) Verify(credential, message, sig []byte) bool {
	pub, err := parseEd25519PublicKey(a.format, credential)
	return err == nil && ed25519.Verify(pub, message, sig)
}

// Format prints the verifier's type only, whatever the verb.
func (v *Ed25519Verifier) Format(f fmt.State, _ rune) { formatVerifier(f, "Ed25519Verifier") }
