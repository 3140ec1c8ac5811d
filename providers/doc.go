// Package providers verifies the webhooks of known providers: presets of
// the root package's HMAC verifier for each provider's documented scheme,
// and the schemes that are not an HMAC of the request (Ed25519 signatures,
// shared tokens, HTTP Basic credentials, Twilio's signed URLs, and the
// explicit InsecureAcceptUnsigned).
//
// Each provider has a file of its own, whose doc cites the provider's
// documentation: the headers, the signed content, the window. A preset is a
// plain options value, registered as it is or adjusted field by field:
//
//	v, err := webhooks.NewHMACVerifier(providers.StripeOptions(), webhooks.StaticSecrets(os.Getenv("STRIPE_WEBHOOK_SECRET")))
//	...
//	resolver.MustRegister("stripe", v)
//
// The catalog reaches the same verifiers by name, for hosts that wire
// providers from configuration: Names lists them, Lookup describes one, and
// New builds its verifier from a Config:
//
//	v, err := providers.New("stripe", providers.Config{Secrets: webhooks.StaticSecrets(secret)})
//
// Every verifier here is safe for concurrent use, prints no secret through
// fmt or slog, compares secrets in constant time, and reports a rejection
// as a *webhooks.VerificationError whose reason says why.
package providers
