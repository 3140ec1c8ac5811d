package webhookstest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Realistic sample bodies per catalog entry, shaped as the provider's
// documentation shows them, with the event ID and type where the entry's
// verifier reads them. Each takes the signer (for schemes whose token
// travels in the body), the event ID (for body-borne IDs), the type and
// the time.

// sample is one entry's sample: its default event type and its body.
type sample struct {
	typ  string
	body func(s *Signer, id, typ string, now time.Time) []byte
}

// q quotes a string as JSON.
func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func unix(now time.Time) string { return strconv.FormatInt(now.Unix(), 10) }

var samples = map[string]sample{
	"airtable": {"", func(_ *Signer, _, _ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"base":{"id":"appAbc123"},"webhook":{"id":"achW8Mn2"},"timestamp":%s}`, q(now.UTC().Format(time.RFC3339Nano)))
	}},
	"asana": {"changed", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"events":[{"user":{"gid":"1123","resource_type":"user"},"created_at":%s,"action":%s,"resource":{"gid":"1199","resource_type":"task"},"parent":null}]}`, q(now.UTC().Format(time.RFC3339)), q(typ))
	}},
	"bitbucket": {"repo:push", func(_ *Signer, _, _ string, _ time.Time) []byte {
		return []byte(`{"push":{"changes":[{"new":{"type":"branch","name":"main"}}]},"repository":{"full_name":"acme/app","type":"repository"},"actor":{"display_name":"Ada"}}`)
	}},
	"box": {"FILE.UPLOADED", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"type":"webhook_event","id":%s,"created_at":%s,"trigger":%s,"webhook":{"id":"1234567"},"source":{"id":"12345","type":"file","name":"report.pdf"}}`, q(id), q(now.UTC().Format(time.RFC3339)), q(typ))
	}},
	"calendly": {"invitee.created", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"created_at":%s,"created_by":"https://api.calendly.com/users/AAAA","event":%s,"payload":{"uri":"https://api.calendly.com/scheduled_events/GBGB/invitees/%s","email":"ada@example.com","status":"active"}}`, q(now.UTC().Format(time.RFC3339)), q(typ), rand16())
	}},
	"coinbase": {"charge:confirmed", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"id":1,"scheduled_for":%s,"attempt_number":1,"event":{"id":%s,"type":%s,"api_version":"2018-03-22","created_at":%s,"data":{"code":"66BEOV2A","name":"Coffee"}}}`, q(now.UTC().Format(time.RFC3339)), q(id), q(typ), q(now.UTC().Format(time.RFC3339)))
	}},
	"discord": {"2", func(_ *Signer, id, typ string, _ time.Time) []byte {
		return fmt.Appendf(nil, `{"id":%s,"application_id":"1311111111111111111","type":%s,"data":{"name":"hello"},"token":"interaction-token","version":1}`, q(id), typ)
	}},
	"discord-events": {"APPLICATION_AUTHORIZED", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"version":1,"application_id":"1311111111111111111","type":1,"event":{"type":%s,"timestamp":%s,"data":{"integration_type":0}}}`, q(typ), q(now.UTC().Format(time.RFC3339)))
	}},
	"docusign": {"envelope-completed", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"event":%s,"apiVersion":"v2.1","uri":"/restapi/v2.1/accounts/a1/envelopes/e1","retryCount":0,"configurationId":10001,"generatedDateTime":%s,"data":{"accountId":"a1","userId":"u1","envelopeId":%s}}`, q(typ), q(now.UTC().Format(time.RFC3339Nano)), q("env-"+rand16()))
	}},
	"dropbox": {"", func(_ *Signer, _, _ string, _ time.Time) []byte {
		return fmt.Appendf(nil, `{"list_folder":{"accounts":["dbid:%s"]},"delta":{"users":[12345678]}}`, rand16())
	}},
	"figma": {"FILE_UPDATE", func(s *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"event_type":%s,"file_key":"k%s","file_name":"Design","passcode":%s,"timestamp":%s,"webhook_id":"22"}`, q(typ), rand16(), q(s.secret), q(now.UTC().Format(time.RFC3339)))
	}},
	"github": {"push", func(_ *Signer, _, _ string, _ time.Time) []byte {
		// A commit of its own: GitHub's type header is not signed, and a
		// body is refused under another type than it was first sent with.
		return fmt.Appendf(nil, `{"ref":"refs/heads/main","before":"0000000000000000000000000000000000000000","after":"%s%s%s","repository":{"id":1296269,"full_name":"acme/app"},"sender":{"login":"ada"}}`, rand16(), rand16(), rand16()[:8])
	}},
	"gitlab": {"Push Hook", func(_ *Signer, _, _ string, _ time.Time) []byte {
		return []byte(`{"object_kind":"push","ref":"refs/heads/main","project":{"path_with_namespace":"acme/app"},"user_username":"ada"}`)
	}},
	"gitlab-signing": {"Push Hook", func(_ *Signer, _, _ string, _ time.Time) []byte {
		return []byte(`{"object_kind":"push","ref":"refs/heads/main","project":{"path_with_namespace":"acme/app"},"user_username":"ada"}`)
	}},
	"hubspot": {"contact.creation", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `[{"eventId":%d,"subscriptionId":12345,"portalId":62515,"appId":54321,"occurredAt":%d,"subscriptionType":%s,"attemptNumber":0,"objectId":123,"changeSource":"CRM","changeFlag":"NEW"}]`, now.UnixNano()%1e9, now.UnixMilli(), q(typ))
	}},
	"intercom": {"conversation.user.created", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"type":"notification_event","app_id":"abc123","id":%s,"topic":%s,"created_at":%s,"delivery_attempts":1,"data":{"item":{"type":"conversation","id":"1"}}}`, q(id), q(typ), unix(now))
	}},
	"jira": {"jira:issue_created", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"timestamp":%d,"webhookEvent":%s,"issue_event_type_name":"issue_created","issue":{"id":"10001","key":"ACME-1","fields":{"summary":"Hello"}},"user":{"displayName":"Ada"}}`, now.UnixMilli(), q(typ))
	}},
	"lemonsqueezy": {"order_created", func(_ *Signer, _, typ string, _ time.Time) []byte {
		return fmt.Appendf(nil, `{"meta":{"event_name":%s,"custom_data":{}},"data":{"type":"orders","id":%s,"attributes":{"status":"paid","total":999}}}`, q(typ), q(rand16()))
	}},
	"line": {"message", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"destination":"U0123456789abcdef","events":[{"type":%s,"mode":"active","timestamp":%d,"source":{"type":"user","userId":"U4af4980629"},"webhookEventId":%s,"deliveryContext":{"isRedelivery":false},"message":{"id":"444573844083572737","type":"text","text":"Hello"},"replyToken":"757913772c4646b784d4b7ce46d12671"}]}`, q(typ), now.UnixMilli(), q(id))
	}},
	"linear": {"Issue", func(_ *Signer, _, _ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"action":"create","type":"Issue","data":{"id":"2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9","title":"Hello"},"url":"https://linear.app/acme/issue/ACME-1","webhookTimestamp":%d}`, now.UnixMilli())
	}},
	"mailgun": {"delivered", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"event":%s,"id":%s,"timestamp":%s,"recipient":"ada@example.com","message":{"headers":{"message-id":"20240101.1@example.com"}}}`, q(typ), q(id), unix(now))
	}},
	"meta": {"whatsapp_business_account", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"object":%s,"entry":[{"id":"102290129340398","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","messages":[{"from":"16315551181","id":"wamid.%s","timestamp":%s,"type":"text","text":{"body":"hello"}}]}}]}]}`, q(typ), rand16(), q(unix(now)))
	}},
	"msgraph": {"created", func(s *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"value":[{"subscriptionId":"7f105c7d-2dc5-4530-97cd-4e7ae6534c07","subscriptionExpirationDateTime":%s,"changeType":%s,"resource":"Users/622eaaff/Messages/AAMkADMxZ","clientState":%s,"tenantId":"84bd8158-6d4d-4958-8b9f-9d6445542f95","resourceData":{"@odata.type":"#Microsoft.Graph.Message","id":%s}}]}`, q(now.Add(time.Hour).UTC().Format(time.RFC3339)), q(typ), q(s.secret), q(rand16()))
	}},
	"msteams": {"message", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"type":%s,"id":%s,"timestamp":%s,"serviceUrl":"https://smba.trafficmanager.net/amer/","channelId":"msteams","from":{"id":"29:1","name":"Ada"},"text":"<at>Bot</at> hello"}`, q(typ), q(id), q(now.UTC().Format(time.RFC3339)))
	}},
	"mux": {"video.asset.ready", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"type":%s,"id":%s,"created_at":%s,"object":{"type":"asset","id":"asset-1"},"data":{"status":"ready"}}`, q(typ), q(id), q(now.UTC().Format(time.RFC3339)))
	}},
	"notion": {"page.created", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"id":%s,"timestamp":%s,"workspace_id":"13950b26","subscription_id":"29d75c0d","integration_id":"0ef104cd","type":%s,"authors":[{"id":"c7c11cca","type":"person"}],"entity":{"id":"153104cd","type":"page"},"data":{"parent":{"id":"13950b26","type":"space"}},"attempt_number":1}`, q(id), q(now.UTC().Format(time.RFC3339)), q(typ))
	}},
	"okta": {"user.lifecycle.create", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"eventType":"com.okta.event_hook","eventTypeVersion":"1.0","cloudEventsVersion":"0.1","source":"https://acme.okta.com/api/v1/eventHooks/who8vt36qfNpCGz9H1e6","eventId":%s,"data":{"events":[{"uuid":"5f6a1c9e","published":%s,"eventType":%s,"displayMessage":"Create Okta user"}]},"eventTime":%s,"contentType":"application/json"}`, q(id), q(now.UTC().Format(time.RFC3339)), q(typ), q(now.UTC().Format(time.RFC3339)))
	}},
	"paddle": {"transaction.completed", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"event_id":%s,"event_type":%s,"occurred_at":%s,"notification_id":"ntf_%s","data":{"id":"txn_01","status":"completed"}}`, q(id), q(typ), q(now.UTC().Format(time.RFC3339)), rand16())
	}},
	"pagerduty": {"incident.triggered", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"event":{"id":%s,"event_type":%s,"resource_type":"incident","occurred_at":%s,"agent":null,"data":{"id":"PGR0VU2","type":"incident","title":"Disk full"}}}`, q(id), q(typ), q(now.UTC().Format(time.RFC3339)))
	}},
	"razorpay": {"payment.captured", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"entity":"event","account_id":"acc_BFQ7uQEaa7j2z7","event":%s,"contains":["payment"],"payload":{"payment":{"entity":{"id":"pay_%s","amount":5000,"currency":"INR","status":"captured"}}},"created_at":%s}`, q(typ), rand16(), unix(now))
	}},
	"sendgrid": {"delivered", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `[{"email":"ada@example.com","timestamp":%s,"event":%s,"sg_event_id":%s,"sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0","smtp-id":"<14c5d75ce93.dfd.64b469@ismtpd-555>"}]`, unix(now), q(typ), q(rand16()))
	}},
	"sentry": {"issue", func(_ *Signer, _, _ string, _ time.Time) []byte {
		return []byte(`{"action":"created","installation":{"uuid":"a8e5d37a-696c-4c54-adb5-b3f28d64c7de"},"data":{"issue":{"id":"1170820242","title":"Error: boom","status":"unresolved"}},"actor":{"type":"application","id":"sentry","name":"Sentry"}}`)
	}},
	"shopify": {"orders/create", func(_ *Signer, _, _ string, _ time.Time) []byte {
		return []byte(`{"id":820982911946154508,"admin_graphql_api_id":"gid://shopify/Order/820982911946154508","updated_at":"2024-05-01T12:30:00-04:00","email":"ada@example.com","total_price":"9.99","currency":"USD","financial_status":"paid"}`)
	}},
	"slack": {"app_mention", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"token":%s,"team_id":"T061EG9R6","api_app_id":"A0PNCHHK2","event":{"type":%s,"user":"U061F7AUR","text":"<@U0LAN0Z89> hello","ts":"1515449522.000016","channel":"C0LAN2Q65"},"type":"event_callback","event_id":%s,"event_time":%s}`, q("vt"+rand16()), q(typ), q(id), unix(now))
	}},
	"sns": {"Notification", func(_ *Signer, _, _ string, _ time.Time) []byte {
		return []byte(`{"order":"1234","status":"shipped"}`)
	}},
	"square": {"payment.updated", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"merchant_id":"6SSW7HV8K2ST5","type":%s,"event_id":%s,"created_at":%s,"data":{"type":"payment","id":"KkAkhdMs","object":{"payment":{"id":"KkAkhdMs","status":"COMPLETED"}}}}`, q(typ), q(id), q(now.UTC().Format(time.RFC3339)))
	}},
	"stripe": {"invoice.paid", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"id":%s,"object":"event","api_version":"2024-06-20","created":%s,"type":%s,"livemode":false,"pending_webhooks":1,"data":{"object":{"id":"in_1","object":"invoice","status":"paid"}}}`, q(id), unix(now), q(typ))
	}},
	"telegram": {"message", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"update_id":%s,%s:{"message_id":1365,"from":{"id":1111111,"is_bot":false,"first_name":"Ada"},"chat":{"id":1111111,"type":"private"},"date":%s,"text":"/start"}}`, id, q(typ), unix(now))
	}},
	"trello": {"updateCard", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"model":{"id":"4d5ea62fd76aa1136000000c","name":"Board"},"action":{"id":%s,"idMemberCreator":"4d5ea62fd76aa1136000000d","type":%s,"date":%s,"data":{"card":{"id":"c1","name":"Card"}}}}`, q(id), q(typ), q(now.UTC().Format(time.RFC3339)))
	}},
	"twilio": {"delivered", nil},
	"twitch": {"channel.follow", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","status":"enabled","type":%s,"version":"2","condition":{"broadcaster_user_id":"1337"},"transport":{"method":"webhook","callback":"https://example.com/webhooks/callback"},"created_at":%s},"event":{"user_id":"1234","user_login":"cool_user","broadcaster_user_id":"1337","followed_at":%s}}`, q(typ), q(now.UTC().Format(time.RFC3339Nano)), q(now.UTC().Format(time.RFC3339Nano)))
	}},
	"twitter": {"tweet_create_events", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"for_user_id":"2244994945",%s:[{"id_str":"%s","created_at":%s,"text":"hello","user":{"id_str":"2244994945","screen_name":"XDevelopers"}}]}`, q(typ), rand16(), q(now.UTC().Format(time.RubyDate)))
	}},
	"typeform": {"form_response", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"event_id":%s,"event_type":%s,"form_response":{"form_id":"lT4Z3j","token":"a3a12ec67a1365927098a606107fac15","submitted_at":%s,"answers":[{"type":"text","text":"Ada","field":{"id":"JwWggjAKtOkA","type":"short_text"}}]}}`, q(id), q(typ), q(now.UTC().Format(time.RFC3339)))
	}},
	"vercel": {"deployment.created", func(_ *Signer, id, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"id":%s,"type":%s,"createdAt":%d,"region":"sfo1","payload":{"deployment":{"id":"dpl_2euZBFqxYdDMDG1jTrHFnNZ2eUVa","url":"app-acme.vercel.app"}}}`, q(id), q(typ), now.UnixMilli())
	}},
	"woocommerce": {"order.created", func(_ *Signer, _, _ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"id":727,"status":"processing","currency":"USD","total":"29.35","date_created":%s,"billing":{"first_name":"Ada","email":"ada@example.com"}}`, q(now.UTC().Format("2006-01-02T15:04:05")))
	}},
	"zendesk": {"zen:event-type:ticket.created", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"type":%s,"account_id":12514403,"id":%s,"time":%s,"zendesk_event_version":"2022-11-06","subject":"zen:ticket:1","detail":{"id":"1","status":"NEW"}}`, q(typ), q(rand16()), q(now.UTC().Format(time.RFC3339)))
	}},
	"zoom": {"meeting.started", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"event":%s,"event_ts":%d,"payload":{"account_id":"AAAAAABBBB","object":{"id":"1234567890","uuid":"czLF6FFFoQOKgAB99DlDb9g==","topic":"Standup"}}}`, q(typ), now.UnixMilli())
	}},
}

// standardWebhooksSample is the sample of Standard Webhooks aliases.
var standardWebhooksSample = sample{"user.created", func(_ *Signer, _, typ string, now time.Time) []byte {
	return fmt.Appendf(nil, `{"type":%s,"timestamp":%s,"data":{"id":"user_%s","email":"ada@example.com"}}`, q(typ), q(now.UTC().Format(time.RFC3339)), rand16())
}}

func init() {
	for _, name := range []string{"standardwebhooks", "svix", "clerk", "resend", "openai", "replicate"} {
		samples[name] = standardWebhooksSample
	}
	samples["standardwebhooks-ed25519"] = standardWebhooksSample
	samples["openai"] = sample{"response.completed", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"object":"event","id":"evt_%s","type":%s,"created_at":%s,"data":{"id":"resp_abc123"}}`, rand16(), q(typ), unix(now))
	}}
	samples["replicate"] = sample{"completed", func(_ *Signer, _, typ string, now time.Time) []byte {
		return fmt.Appendf(nil, `{"id":"ufawqhfynnddngldkgtslldrkq","status":%s,"created_at":%s,"output":["https://replicate.delivery/out.png"]}`, q(typ), q(now.UTC().Format(time.RFC3339)))
	}}
}
