// Package providers verifies the webhooks of known providers: a catalog of
// more than fifty entries reachable by name, presets of the root package's
// HMAC verifier for each provider's documented scheme, and the schemes
// that are not an HMAC of the request (Ed25519 and ECDSA signatures, RSA
// signatures under certificates fetched from allowed hosts, shared tokens
// in a header or the body, HTTP Basic credentials, Twilio's signed URLs,
// and the explicit InsecureAcceptUnsigned).
//
// # The catalog
//
// Hosts that wire providers from configuration use the catalog: Names
// lists the entries, Lookup and Entries describe them (documentation,
// headers, signed content, window, where the event ID comes from and
// whether it is signed, endpoint checks, the provider's expected answer),
// and New builds an entry's verifier from a Config. An entry's definition
// is the options its verifier is built with (Entry.HMACOptions,
// Ed25519Options, TokenOptions); its headers, signed content, window and
// event ID text are rendered from them, and package webhookstest signs
// from them too:
//
//	v, err := providers.New("stripe", providers.Config{Secrets: webhooks.StaticSecrets(secret)})
//	...
//	registry.MustRegister("stripe", v)
//
// FromEnv builds every entry whose <NAME>_WEBHOOK_SECRET is set. A
// catalog verifier does what the provider documents beyond the signature:
// it answers the provider's endpoint checks (GET checks through
// webhooks.GETVerifier: Meta's hub.challenge, X's crc_token, Dropbox's
// challenge, Okta's verification once its Authorization matched; signed
// ones: Slack, Zoom, Discord, Twitch, LINE; secrets handed over in a
// handshake: Asana, Notion, see SecretSaver), sets the answer the provider expects
// (webhooks.Verification.Answer: Meta and X count only 200, Graph
// expects 202, Teams shows the reply) and the API version where the
// provider sends one (Stripe, Shopify, DocuSign). CATALOG.md lists every
// entry; it is generated from the code.
//
// # Presets
//
// Each provider's options are a plain value, registered as they are or
// adjusted field by field, and each function's doc cites the provider's
// documentation:
//
//	v, err := webhooks.NewHMACVerifier(providers.StripeOptions(), webhooks.StaticSecrets(os.Getenv("STRIPE_WEBHOOK_SECRET")))
//
// # Keys and certificates
//
// SendGrid signs with an ECDSA key whose public half the host configures
// (ParseECDSAPublicKey). Amazon SNS names the certificate that signs each
// message; a KeySource supplies it, and CertificateFetcher fetches it over
// https from allowed hosts and paths only (SNSCertificateHosts,
// SNSCertificatePath), uses it only when it is issued to SNS
// (SNSCertificateNames) under a trusted root, caches it by its canonical
// URL until its TTL or expiry (a failure for DefaultKeyFailureTTL), with
// one fetch in flight per URL, and fetches nothing without an
// *http.Client.
//
// Every verifier here is safe for concurrent use, prints no secret through
// fmt or slog, compares secrets in constant time, and reports a rejection
// as a *webhooks.VerificationError whose reason says why.
package providers
