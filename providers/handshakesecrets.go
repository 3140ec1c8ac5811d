package providers

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hookinbox/webhooks"
)

// SecretSaver is implemented by a CredentialResolver that can keep a
// secret a provider hands over in a handshake: Asana's X-Hook-Secret,
// Notion's verification_token. Such handshakes are not authenticated (the
// secret is what later requests will be authenticated with), so SaveSecret
// must accept a secret only when the host expects one for the route — for
// example while its own call to create the webhook is in flight — and
// refuse it otherwise, with a *webhooks.VerificationError (the receiver
// answers 401) or another error (503). Once saved, the secret must be
// among those Secrets returns for the route, next to any earlier ones:
// each Asana webhook has its own. Implementations must be safe for
// concurrent use and must never log the value.
type SecretSaver interface {
	SaveSecret(ctx context.Context, route webhooks.Route, secret []byte) error
}

// HandshakeSecrets is an in-memory CredentialResolver and SecretSaver: it
// accepts a handshake's secret for a route only between Expect and the
// deadline Expect gives, once per Expect. Secrets live in memory only, so
// a host that restarts must save them elsewhere too (Add loads them
// back): treat this type as the model of the contract, and implement
// SecretSaver over the host's own database in production. It is safe for
// concurrent use; the zero value is not usable, call NewHandshakeSecrets.
type HandshakeSecrets struct {
	clock   webhooks.Clock
	mu      sync.Mutex
	expect  map[webhooks.Route]time.Time
	secrets map[webhooks.Route][]webhooks.Secret
}

// HandshakeSecretsOptions configures a HandshakeSecrets. The zero value
// is all defaults.
type HandshakeSecretsOptions struct {
	// Clock tells the time the deadlines Expect gives are checked
	// against. Defaults to the system clock.
	Clock webhooks.Clock
}

// NewHandshakeSecrets returns an empty HandshakeSecrets configured by
// opts.
func NewHandshakeSecrets(opts HandshakeSecretsOptions) *HandshakeSecrets {
	clock := opts.Clock
	if clock == nil {
		clock = systemClock{}
	}
	return &HandshakeSecrets{clock: clock, expect: map[webhooks.Route]time.Time{}, secrets: map[webhooks.Route][]webhooks.Secret{}}
}

// Expect opens the route to one handshake for the next d, for example
// just before the host asks Asana to create a webhook whose target is the
// route's URL.
func (s *HandshakeSecrets) Expect(route webhooks.Route, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expect[route] = s.clock.Now().Add(d)
}

// Add gives the route a secret saved earlier, for example one loaded from
// the host's database at start-up.
func (s *HandshakeSecrets) Add(route webhooks.Route, secret []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(route, secret)
}

func (s *HandshakeSecrets) add(route webhooks.Route, secret []byte) {
	list := s.secrets[route]
	s.secrets[route] = append(list, webhooks.Secret{ID: "handshake:" + route.Tenant + ":" + strconv.Itoa(len(list)), Value: slices.Clone(secret)})
}

// SaveSecret implements SecretSaver: it keeps the secret when the route
// expects a handshake, and rejects it with ReasonNoCredentials otherwise.
func (s *HandshakeSecrets) SaveSecret(_ context.Context, route webhooks.Route, secret []byte) error {
	if len(secret) == 0 {
		return webhooks.Reject(webhooks.ReasonMissingSignature, "the handshake carries an empty secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	deadline, ok := s.expect[route]
	if !ok || s.clock.Now().After(deadline) {
		return webhooks.Reject(webhooks.ReasonNoCredentials, "no handshake is expected for this route (call Expect before creating the webhook)")
	}
	delete(s.expect, route)
	s.add(route, secret)
	return nil
}

// Secrets implements webhooks.CredentialResolver.
func (s *HandshakeSecrets) Secrets(_ context.Context, route webhooks.Route) ([]webhooks.Secret, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.secrets[route]), nil
}

// Format prints the type and the number of secrets only.
func (s *HandshakeSecrets) Format(f fmt.State, _ rune) {
	s.mu.Lock()
	n := 0
	for _, l := range s.secrets {
		n += len(l)
	}
	s.mu.Unlock()
	_, _ = io.WriteString(f, "providers.HandshakeSecrets{"+strconv.Itoa(n)+" secrets}")
}
