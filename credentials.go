package webhooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Secret is one signing secret (or token, or public key). ID names it in
// logs and on stored items; Value is never printed: Secret's String,
// GoString, Format and LogValue methods redact it.
type Secret struct {
	ID    string
	Value []byte
}

// String returns the secret's ID and a redaction marker, never the value.
func (s Secret) String() string { return "Secret{ID:" + strconv.Quote(s.ID) + ", Value:REDACTED}" }

// GoString is like String, so %#v does not print the value either.
func (s Secret) GoString() string { return s.String() }

// Format prints the secret as String does, whatever the verb (%x and %d
// included), so the value never reaches output through fmt.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue keeps the value out of slog output.
func (s Secret) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", s.ID), slog.String("value", "REDACTED"))
}

// CredentialResolver supplies the secrets that may verify requests for a
// route. Several secrets may be valid at once (rotation): any of them
// verifies, and the Verification names the one that did. Returning no
// secrets rejects the request with ReasonNoCredentials; returning an error
// makes the Receiver answer 503. Implementations must be safe for
// concurrent use.
type CredentialResolver interface {
	Secrets(ctx context.Context, route Route) ([]Secret, error)
}

// CredentialResolverFunc adapts a function to the CredentialResolver interface.
type CredentialResolverFunc func(ctx context.Context, route Route) ([]Secret, error)

// Secrets calls f(ctx, route).
func (f CredentialResolverFunc) Secrets(ctx context.Context, route Route) ([]Secret, error) {
	return f(ctx, route)
}

// StaticCredentials is a fixed set of secrets, given to every route
// (StaticSecrets) or by tenant (TenantSecrets). Because they are known
// before any request arrives, verifier constructors check them (see Check)
// and refuse the configuration at start-up rather than a webhook later.
// The zero value holds no secrets.
type StaticCredentials struct {
	all       []Secret
	tenants   map[string][]Secret
	perTenant bool
}

// StaticSecrets returns credentials that give the same secrets to every
// provider and tenant. Several secrets allow rotation. Each secret's ID is
// its position, "static:0", "static:1", ….
func StaticSecrets(secrets ...string) StaticCredentials {
	list := make([]Secret, 0, len(secrets))
	for i, s := range secrets {
		list = append(list, Secret{ID: "static:" + strconv.Itoa(i), Value: []byte(s)})
	}
	return StaticCredentials{all: list}
}

// TenantSecrets returns credentials that give each tenant its own secrets,
// for hosts that receive one provider's webhooks for several accounts
// (POST /webhooks/{provider}/{tenant}). Several secrets for a tenant allow
// rotation; each secret's ID is the tenant and its position,
// "tenant:acme:0", "tenant:acme:1", …. A route whose tenant is not in the
// map gets no secrets, so its requests are rejected with
// ReasonNoCredentials: an unknown tenant fails closed, and one tenant's
// secret never verifies another tenant's webhook. The key "" serves routes
// without a tenant. The map is copied.
func TenantSecrets(tenants map[string][]string) StaticCredentials {
	out := StaticCredentials{tenants: make(map[string][]Secret, len(tenants)), perTenant: true}
	for tenant, secrets := range tenants {
		list := make([]Secret, 0, len(secrets))
		for i, s := range secrets {
			list = append(list, Secret{ID: "tenant:" + tenant + ":" + strconv.Itoa(i), Value: []byte(s)})
		}
		out.tenants[tenant] = list
	}
	return out
}

// Secrets implements CredentialResolver.
func (c StaticCredentials) Secrets(_ context.Context, route Route) ([]Secret, error) {
	if c.perTenant {
		return c.tenants[route.Tenant], nil
	}
	return c.all, nil
}

// PerTenant reports whether the credentials were made by TenantSecrets, so
// a tenant's secrets verify only its own routes (see [TenantScoped]).
func (c StaticCredentials) PerTenant() bool { return c.perTenant }

// Check reports the secrets that could never verify anything, by ID only:
// none at all (or a tenant with none), empty ones, ones with surrounding
// white space (a copy-paste slip), and ones valid refuses. what names the
// kind of secret in messages ("secret", "public key"). valid may be nil;
// its error must not contain the value. Verifier constructors call Check
// when given StaticCredentials.
func (c StaticCredentials) Check(what string, valid func(value []byte) error) error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	check := func(list []Secret) {
		for _, s := range list {
			trimmed := strings.TrimSpace(string(s.Value))
			switch {
			case trimmed == "":
				bad("%s %s is empty: set it (is its environment variable missing?)", what, s.ID)
			case trimmed != string(s.Value):
				bad("%s %s starts or ends with white space: remove it (a copy-paste slip?)", what, s.ID)
			case valid != nil:
				if err := valid(s.Value); err != nil {
					bad("%s %s is unusable: %v", what, s.ID, err)
				}
			}
		}
	}
	if !c.perTenant {
		if len(c.all) == 0 {
			bad("StaticSecrets has no %ss: pass at least one", what)
		}
		check(c.all)
		return errors.Join(problems...)
	}
	if len(c.tenants) == 0 {
		bad("TenantSecrets has no tenants: pass at least one")
	}
	owner := make(map[string]string) // a secret's value → the first tenant given it
	for _, tenant := range slices.Sorted(maps.Keys(c.tenants)) {
		if len(c.tenants[tenant]) == 0 {
			bad("TenantSecrets has no %ss for tenant %q: pass at least one", what, tenant)
		}
		check(c.tenants[tenant])
		for _, s := range c.tenants[tenant] {
			first, shared := owner[string(s.Value)]
			switch {
			case !shared:
				owner[string(s.Value)] = tenant
			case first != tenant:
				// A delivery signed for one would verify for the other:
				// the unauthenticated path would choose the tenant.
				bad("TenantSecrets gives tenants %q and %q the same %s (%s): give each tenant its own, or serve them as one route", first, tenant, what, s.ID)
			}
		}
	}
	return errors.Join(problems...)
}

// Format prints the secrets' IDs only, whatever the verb.
func (c StaticCredentials) Format(f fmt.State, _ rune) {
	var ids []string
	if c.perTenant {
		for _, tenant := range slices.Sorted(maps.Keys(c.tenants)) {
			for _, s := range c.tenants[tenant] {
				ids = append(ids, strconv.Quote(s.ID))
			}
		}
	} else {
		for _, s := range c.all {
			ids = append(ids, strconv.Quote(s.ID))
		}
	}
	_, _ = io.WriteString(f, "StaticCredentials{"+strings.Join(ids, ", ")+"}")
}

// LogValue keeps the values out of slog output.
func (c StaticCredentials) LogValue() slog.Value { return slog.StringValue(fmt.Sprint(c)) }

// CheckCredentials is what a verifier's constructor reports about its
// credentials: an error for a nil resolver, and for static credentials
// (StaticSecrets, TenantSecrets) what StaticCredentials.Check reports with
// what and valid. Other resolvers' credentials are checked on each
// request.
func CheckCredentials(creds CredentialResolver, what string, valid func(value []byte) error) error {
	switch c := creds.(type) {
	case nil:
		return errors.New("creds is nil: pass a CredentialResolver, for example webhooks.StaticSecrets(secret)")
	case StaticCredentials:
		return c.Check(what, valid)
	}
	return nil
}
