package providers

import (
	"errors"
	"fmt"
	"io"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// Helpers the verifiers of this package share. The root package's shared
// parts (EventSource, TimestampSource, HeaderFallbacks) do the rest.

// optionsError is the error of a constructor given invalid options, or nil.
func optionsError(scheme string, problems ...error) error {
	if err := errors.Join(problems...); err != nil {
		return fmt.Errorf("webhooks: invalid %s options: %w", scheme, err)
	}
	return nil
}

// problemList collects problems reported through bad.
type problemList []error

func (p *problemList) bad(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

// formatVerifier prints a verifier as its type only. Verifiers keep their
// CredentialResolver in an unexported field, which fmt would print without
// calling any redacting method; every verifier that holds secrets has a
// Format method calling this instead.
func formatVerifier(f fmt.State, typ string) {
	_, _ = io.WriteString(f, "providers."+typ+"{…}")
}

// bodyID is the event ID of a body's SHA-256, as EventSource.IDFromBody
// derives it.
func bodyID(body []byte) string { return sigsyntax.BodyID(body) }

// Tenant routes: every verifier of this package that holds credentials
// reports whether they are per tenant (webhooks.TenantScoped), so that a
// Receiver serves tenant path segments only where a tenant's own secret
// authenticates them.

// PerTenant implements webhooks.TenantScoped.
func (p *preset) PerTenant() bool { return webhooks.PerTenant(p.inner) }

// PerTenant reports whether every one of the verifiers is per tenant.
func (a *anyHeader) PerTenant() bool {
	for _, v := range a.verifiers {
		if !webhooks.PerTenant(v) {
			return false
		}
	}
	return len(a.verifiers) > 0
}

// PerTenant implements webhooks.TenantScoped.
func (v *TokenVerifier) PerTenant() bool { return webhooks.PerTenant(v.creds) }

// PerTenant implements webhooks.TenantScoped.
func (v *BasicAuthVerifier) PerTenant() bool { return webhooks.PerTenant(v.creds) }

// PerTenant implements webhooks.TenantScoped.
func (v *TwilioVerifier) PerTenant() bool { return webhooks.PerTenant(v.creds) }

func (v *bodyTokenVerifier) PerTenant() bool { return webhooks.PerTenant(v.creds) }
func (v *mailgunVerifier) PerTenant() bool   { return webhooks.PerTenant(v.creds) }
func (v *sendGridVerifier) PerTenant() bool  { return webhooks.PerTenant(v.creds) }
func (v *snsVerifier) PerTenant() bool       { return webhooks.PerTenant(v.topics) }
