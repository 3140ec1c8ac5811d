package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hookinbox/webhooks"
)

// SecretSaver is implemented by a CredentialResolver that can keep a
// secret a provider hands over in a handshake: Asana's X-Hook-Secret,
// Notion's verification_token. Such handshakes are not authenticated (the
// secret is what later requests will be authenticated with), so anyone
// who knows the route can send one, and whoever sends the first could
// plant a secret of their own. SaveSecret must therefore:
//
//   - accept a secret only when the host expects a handshake for the
//     route (for example while its own call that creates the webhook is
//     in flight), and refuse it otherwise with a *webhooks.VerificationError
//     (the receiver answers 401) or another error (503);
//   - hold an accepted secret aside, unused (Secrets does not return it),
//     until the host confirms that the webhook it created is the one that
//     handed it over, and drop it when the host says its call failed or
//     does not confirm in time;
//   - when a second handshake arrives for one expectation, drop both and
//     refuse the second: one of them is not the provider's, and nothing
//     tells which.
//
// Once confirmed, the secret must be among those Secrets returns for the
// route, next to any earlier ones: each Asana webhook has its own.
// Implementations must be safe for concurrent use and must never log the
// value. HandshakeSecrets is the model.
type SecretSaver interface {
	SaveSecret(ctx context.Context, route webhooks.Route, secret []byte) error
}

// Errors of a PendingHandshake.
var (
	// ErrNoHandshake means no handshake arrived for the expectation: the
	// provider never called the route, so nothing is kept.
	ErrNoHandshake = errors.New("webhooks: no handshake arrived for the expected webhook: check that the webhook's target is this route's URL, then create it again")
	// ErrHandshakeConflict means two or more handshakes arrived for one
	// expectation. One of them is not the provider's and nothing tells
	// which, so every secret was discarded.
	ErrHandshakeConflict = errors.New("webhooks: two handshakes arrived for one expected webhook, and both secrets were discarded: delete the webhook at the provider and create it again")
	// ErrHandshakeExpired means the expectation's time ran out before it
	// was confirmed; what arrived was discarded.
	ErrHandshakeExpired = errors.New("webhooks: the expected handshake was not confirmed in time, and its secret was discarded: delete the webhook at the provider and create it again with a longer Expect")
	// ErrHandshakeSettled means the expectation was already confirmed or
	// discarded.
	ErrHandshakeSettled = errors.New("webhooks: the expected handshake was already confirmed or discarded")
	// ErrHandshakePending means the route already expects a handshake:
	// settle that expectation (Confirm or Discard) first, since two
	// handshakes in one window cannot be told apart.
	ErrHandshakePending = errors.New("webhooks: the route already expects a handshake: confirm or discard it before expecting another")
)

// HandshakeSecrets is an in-memory CredentialResolver and SecretSaver that
// takes a handshake's secret in two phases. Expect opens a route to one
// handshake for a while; a handshake that arrives in that window is
// answered, and its secret held aside, unused; the host then confirms
// (PendingHandshake.Confirm) once its own call that created the webhook
// succeeded, and only then is the secret kept. The secret is dropped when
// the host discards the expectation (the call failed), when the window
// closes first, and when a second handshake arrives in the window (both
// are dropped, and an error is logged).
//
// Secrets live in memory only, so a host that restarts must save them
// elsewhere too (Add loads them back): treat this type as the model of
// the contract, and implement SecretSaver over the host's own database in
// production. It is safe for concurrent use; the zero value is not
// usable, call NewHandshakeSecrets.
type HandshakeSecrets struct {
	clock   webhooks.Clock
	logger  *slog.Logger
	mu      sync.Mutex
	next    uint64
	expect  map[webhooks.Route]*expectation
	secrets map[webhooks.Route][]webhooks.Secret
}

// expectation is one window Expect opened.
type expectation struct {
	id       uint64
	deadline time.Time
	held     []byte // the secret of the one handshake that arrived
	arrived  int    // handshakes that arrived
}

// HandshakeSecretsOptions configures a HandshakeSecrets. The zero value
// is all defaults.
type HandshakeSecretsOptions struct {
	// Clock tells the time the windows Expect opens are checked against.
	// Defaults to the system clock.
	Clock webhooks.Clock
	// Logger receives an error when two handshakes arrive for one
	// expectation (never a secret). Defaults to slog.Default().
	Logger *slog.Logger
}

// NewHandshakeSecrets returns an empty HandshakeSecrets configured by
// opts.
func NewHandshakeSecrets(opts HandshakeSecretsOptions) *HandshakeSecrets {
	clock := opts.Clock
	if clock == nil {
		clock = webhooks.SystemClock{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &HandshakeSecrets{clock: clock, logger: logger, expect: map[webhooks.Route]*expectation{}, secrets: map[webhooks.Route][]webhooks.Secret{}}
}

// PendingHandshake is a handshake a route expects, from Expect until the
// host settles it with Confirm or Discard. It is safe for concurrent use.
type PendingHandshake struct {
	s     *HandshakeSecrets
	route webhooks.Route
	id    uint64
}

// Expect opens the route to one handshake for the next d, and returns the
// expectation the host settles once its own call that creates the webhook
// returned: Confirm when it succeeded, Discard when it failed. Call it
// just before asking the provider to create a webhook whose target is the
// route's URL (Asana sends its handshake while that call is in flight),
// and choose d to cover the call. It fails with ErrHandshakePending while
// the route has an unsettled expectation whose window is still open.
//
//	pending, err := secrets.Expect(route, time.Minute)
//	if err != nil { … }
//	defer pending.Discard() // does nothing once confirmed
//	if err := createAsanaWebhook(ctx, target); err != nil { … }
//	if err := pending.Confirm(); err != nil { … } // delete the webhook, try again
func (s *HandshakeSecrets) Expect(route webhooks.Route, d time.Duration) (*PendingHandshake, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for r, e := range s.expect {
		if now.After(e.deadline) {
			delete(s.expect, r)
		}
	}
	if _, ok := s.expect[route]; ok {
		return nil, ErrHandshakePending
	}
	s.next++
	s.expect[route] = &expectation{id: s.next, deadline: now.Add(d)}
	return &PendingHandshake{s: s, route: route, id: s.next}, nil
}

// Confirm keeps the secret the expected handshake handed over, and closes
// the expectation: call it once the host's own call that created the
// webhook succeeded. It keeps nothing and fails with ErrNoHandshake when
// no handshake arrived, ErrHandshakeConflict when two did,
// ErrHandshakeExpired when the window closed first, and
// ErrHandshakeSettled when the expectation was already settled.
func (p *PendingHandshake) Confirm() error {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.expect[p.route]
	if !ok || e.id != p.id {
		return ErrHandshakeSettled
	}
	delete(s.expect, p.route)
	switch {
	case s.clock.Now().After(e.deadline):
		return ErrHandshakeExpired
	case e.arrived > 1:
		return ErrHandshakeConflict
	case e.arrived == 0:
		return ErrNoHandshake
	}
	s.add(p.route, e.held)
	return nil
}

// Discard drops whatever the expected handshake handed over and closes
// the expectation: call it when the host's call that creates the webhook
// failed. It does nothing once the expectation is settled, so it can be
// deferred right after Expect.
func (p *PendingHandshake) Discard() {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.expect[p.route]; ok && e.id == p.id {
		delete(s.expect, p.route)
	}
}

// HeldSecret returns the secret the expected handshake handed over, not
// yet kept, for providers whose operator pastes it back to activate the
// webhook (Notion's verification_token): show it to the operator, then
// Confirm once the provider accepted it. Never log it. It fails as
// Confirm does when none or two arrived or the window closed, without
// settling the expectation.
func (p *PendingHandshake) HeldSecret() ([]byte, error) {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.expect[p.route]
	switch {
	case !ok || e.id != p.id:
		return nil, ErrHandshakeSettled
	case s.clock.Now().After(e.deadline):
		return nil, ErrHandshakeExpired
	case e.arrived > 1:
		return nil, ErrHandshakeConflict
	case e.arrived == 0:
		return nil, ErrNoHandshake
	}
	return slices.Clone(e.held), nil
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

// SaveSecret implements SecretSaver: it holds the secret aside when the
// route expects a handshake and none has arrived yet, and rejects it with
// ReasonNoCredentials otherwise. A second handshake for one expectation
// discards the first one's secret too, and is logged at error level.
func (s *HandshakeSecrets) SaveSecret(ctx context.Context, route webhooks.Route, secret []byte) error {
	if len(secret) == 0 {
		return webhooks.Reject(webhooks.ReasonMissingSignature, "the handshake carries an empty secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.expect[route]
	if ok && s.clock.Now().After(e.deadline) {
		delete(s.expect, route)
		ok = false
	}
	if !ok {
		return webhooks.Reject(webhooks.ReasonNoCredentials, "no handshake is expected for this route (call Expect before creating the webhook)")
	}
	e.arrived++
	switch e.arrived {
	case 1:
		e.held = slices.Clone(secret)
		return nil
	case 2:
		clear(e.held)
		e.held = nil
		s.logger.ErrorContext(ctx, "webhooks: two handshakes arrived for one expected webhook, so one of them is not the provider's: both secrets are discarded and the expectation fails; "+
			"delete the webhook at the provider and create it again, and find out who else calls this route",
			"provider", route.Provider, "tenant", route.Tenant)
	}
	return webhooks.Reject(webhooks.ReasonNoCredentials, "another handshake already arrived for this expected webhook: both are discarded")
}

// Secrets implements webhooks.CredentialResolver. Secrets held for an
// unconfirmed handshake are not among them.
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
