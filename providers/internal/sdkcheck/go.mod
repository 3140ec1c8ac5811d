module github.com/hookinbox/webhooks/providers/internal/sdkcheck

go 1.26.0

replace github.com/hookinbox/webhooks => ../../..

require (
	github.com/bwmarrin/discordgo v0.29.0
	github.com/hookinbox/webhooks v0.0.0-00010101000000-000000000000
	github.com/slack-go/slack v0.35.0
	github.com/stripe/stripe-go/v82 v82.5.1
)

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
