package webhooks

import (
	"context"
	"errors"
	"fmt"
)

// UnsignedKeyID is the KeyID of every Verification that
// InsecureAcceptUnsigned returns, so stored items show that nothing
// verified them.
const UnsignedKeyID = "INSECURE-UNSIGNED"

// UnsignedOptions configures the verifier InsecureAcceptUnsigned returns:
// where the event ID and type of an unsigned request are. An event ID
// source is required; the zero value of every other field is its default.
type UnsignedOptions struct {
	// EventIDHeader is the name of the header that carries the event ID.
	// At most one of EventIDHeader and EventIDPath may be set, and one of
	// them or EventIDFromBody must be.
	EventIDHeader string

	// EventIDPath is a dotted path to the event ID in the JSON body.
	EventIDPath string

	// EventIDFromBody uses BodySHA256ID(body) as the event ID when no other
	// source is set or the configured one is absent; see
	// TokenOptions.EventIDFromBody for the trade-off. Defaults to false.
	EventIDFromBody bool

	// EventTypeHeader is the name of the header that carries the event
	// type. Defaults to none.
	EventTypeHeader string

	// EventTypePath is a dotted path to the event type in the JSON body.
	// Defaults to none.
	EventTypePath string

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool
}

// InsecureUnsignedVerifier accepts every well-formed request without
// checking who sent it. See InsecureAcceptUnsigned.
type InsecureUnsignedVerifier struct {
	provider string
	opts     UnsignedOptions
	events   eventSource
}

// InsecureAcceptUnsigned returns a Verifier that verifies NOTHING: it
// accepts any request that has an event ID, from anyone on the network,
// and stores whatever it says. Everything the inbox and the handlers do
// afterwards (charging, provisioning, deleting) can then be triggered by
// whoever finds the URL, and the event ID, chosen by the sender, lets
// them overwrite or pre-empt genuine events.
//
// It exists because some providers sign nothing and offer no secret at all,
// and because an explicit, greppable choice is better than a hand-written
// verifier that quietly returns success. Before using it, prefer in this
// order: the provider's signature scheme; a shared token (NewTokenVerifier)
// or Basic credentials (NewBasicAuthVerifier) in the URL the provider calls;
// a network restriction to the provider's published addresses in front of
// the service. If it must be used, treat every event as an unauthenticated
// claim and confirm it against the provider's API before acting on it.
//
// Every verification has KeyID UnsignedKeyID, so stored items say that
// nothing verified them. Unknown providers stay refused by the gateway; this
// verifier is registered per provider, by name.
func InsecureAcceptUnsigned(provider string, opts UnsignedOptions) (*InsecureUnsignedVerifier, error) {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	if provider == "" {
		bad("provider is empty: pass the provider key the verifier is registered under")
	}
	events := eventSource{
		idHeader: opts.EventIDHeader, idPath: opts.EventIDPath, idFromBody: opts.EventIDFromBody,
		typeHeader: opts.EventTypeHeader, typePath: opts.EventTypePath,
	}
	events.validate(bad)
	if len(problems) > 0 {
		return nil, fmt.Errorf("webhooks: invalid unsigned options for provider %q: %w", provider, errors.Join(problems...))
	}
	return &InsecureUnsignedVerifier{provider: provider, opts: opts, events: events}, nil
}

// Provider returns the provider name the verifier was created with.
func (v *InsecureUnsignedVerifier) Provider() string { return v.provider }

// Verify implements Verifier without verifying anything: it only reads the
// event ID and type, rejecting a request that lacks an ID or, unless
// AllowEmptyBody, has an empty body.
func (v *InsecureUnsignedVerifier) Verify(_ context.Context, _ Route, req *Request) (Verification, error) {
	if req == nil {
		return Verification{}, errors.New("webhooks: unsigned verifier: nil request")
	}
	if len(req.Body) == 0 && !v.opts.AllowEmptyBody {
		return Verification{}, Reject(ReasonEmptyBody, "the request body is empty")
	}
	return verifiedMetadata(v.events, req, UnsignedKeyID)
}
