package providers

import (
	"context"
	"errors"

	"github.com/hookinbox/webhooks"
)

// UnsignedKeyID is the KeyID of every Verification that the verifier of
// InsecureAcceptUnsigned returns, so stored items show that nothing
// verified them.
const UnsignedKeyID = "INSECURE-UNSIGNED"

// UnsignedOptions configures the verifier InsecureAcceptUnsigned returns:
// where the event ID and type of an unsigned request are. An event ID
// source is required; the zero value of every other field is its default.
type UnsignedOptions struct {
	// Event is where the event ID and type are. An ID source is required.
	Event webhooks.EventSource

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool
}

// InsecureUnsignedVerifier accepts every well-formed request without
// checking who sent it. See InsecureAcceptUnsigned.
type InsecureUnsignedVerifier struct {
	opts UnsignedOptions
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
// nothing verified them. Unknown providers stay refused by the Receiver; this
// verifier is registered per provider, by name.
func InsecureAcceptUnsigned(opts UnsignedOptions) (*InsecureUnsignedVerifier, error) {
	if err := optionsError("unsigned", opts.Event.Validate()); err != nil {
		return nil, err
	}
	return &InsecureUnsignedVerifier{opts: opts}, nil
}

// Verify implements webhooks.Verifier without verifying anything: it only
// reads the event ID and type, rejecting a request that lacks an ID or,
// unless AllowEmptyBody, has an empty body.
func (v *InsecureUnsignedVerifier) Verify(_ context.Context, _ webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if req == nil {
		return webhooks.Verification{}, errors.New("webhooks: unsigned verifier: nil request")
	}
	if len(req.Body) == 0 && !v.opts.AllowEmptyBody {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonEmptyBody, "the request body is empty")
	}
	return v.opts.Event.Extract(req, webhooks.Verification{KeyID: UnsignedKeyID}, webhooks.SignedParts{})
}
