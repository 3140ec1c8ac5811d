// Package sdkcheck cross-checks the catalog against providers' own Go
// SDKs, in a module of its own so the SDKs never enter the library's
// go.mod: deliveries webhookstest signs must verify with the SDK, and
// deliveries the SDK signs (where it can), or the provider's documented
// vector, must verify with the catalog entry; a tampered delivery must be
// refused. Run it with "cd internal/testing/sdkcheck && go test ./...".
//
// The SDKs checked: stripe-go (stripe), slack-go (slack), discordgo
// (discord, discord-events), go-github (github), the Standard Webhooks
// Go library (standardwebhooks, gitlab-signing, openai, replicate),
// Svix's Go library (svix, clerk, resend), openai-go (openai), resend-go
// (resend), twilio-go (twilio), sendgrid-go (sendgrid), paddle-go-sdk
// (paddle), go-pagerduty (pagerduty), line-bot-sdk-go (line), razorpay-go
// (razorpay) and mailgun-go (mailgun).
//
// For the SDKs that cannot sign, the same delivery goes through the
// catalog entry too, accepted, and refused tampered.
//
// Looked for and not available from the module proxy these checks were
// written against (it answered 403): replicate-go, square-go-sdk and
// box-go-sdk-gen; they are public and could be added.
package sdkcheck
