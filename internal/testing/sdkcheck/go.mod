module github.com/hookinbox/webhooks/internal/testing/sdkcheck

go 1.26.0

replace github.com/hookinbox/webhooks => ../../..

require (
	github.com/PaddleHQ/paddle-go-sdk/v4 v4.1.0
	github.com/PagerDuty/go-pagerduty v1.8.0
	github.com/bwmarrin/discordgo v0.29.0
	github.com/google/go-github/v74 v74.0.0
	github.com/hookinbox/webhooks v0.0.0-00010101000000-000000000000
	github.com/line/line-bot-sdk-go/v8 v8.14.0
	github.com/mailgun/mailgun-go/v4 v4.23.0
	github.com/openai/openai-go/v3 v3.98.0
	github.com/razorpay/razorpay-go v1.3.3
	github.com/resend/resend-go/v3 v3.1.1
	github.com/sendgrid/sendgrid-go v3.16.1+incompatible
	github.com/slack-go/slack v0.35.0
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	github.com/stripe/stripe-go/v82 v82.5.1
	github.com/svix/svix-webhooks v1.44.0
	github.com/twilio/twilio-go v1.31.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/ggicci/httpin v0.20.1 // indirect
	github.com/ggicci/owl v0.8.2 // indirect
	github.com/go-chi/chi/v5 v5.2.1 // indirect
	github.com/golang/mock v1.6.0 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/mailgun/errors v0.4.0 // indirect
	github.com/modern-go/concurrent v0.0.0-20180228061459-e0a39a4cb421 // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	gopkg.in/validator.v2 v2.0.1 // indirect
)
