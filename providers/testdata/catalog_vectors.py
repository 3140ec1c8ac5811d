#!/usr/bin/env python3
"""Computes the unpublished catalog vectors (and writes the published
Standard Webhooks reference vector for its aliases) in testdata/<name>/catalog-vector.json.

Each vector is computed here from the provider's documented scheme with
Python's hmac and hashlib, independently of the Go code, for providers that
publish no test vector. Run from providers/testdata: python3 catalog_vectors.py
"""
import base64, hashlib, hmac, json, os

NOW = 1735689600  # 2025-01-01T00:00:00Z
TS_RFC = "2025-01-01T00:00:00Z"
URL = "https://hooks.example.com/webhooks/"
SECRET = "hookinbox-test-secret-0123456789"
B64_SECRET = base64.b64encode(b"hookinbox-test-key-0123456789abc").decode()
WHSEC = "whsec_" + B64_SECRET


def mac(key, *parts, h=hashlib.sha256):
    m = hmac.new(key.encode() if isinstance(key, str) else key, digestmod=h)
    for p in parts:
        m.update(p.encode() if isinstance(p, str) else p)
    return m.digest()


hexd = lambda b: b.hex()
b64 = lambda b: base64.b64encode(b).decode()


def sha256id(body):
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()


vectors = {}


def add(name, source, headers, body, want_id, want_type, secret=SECRET, **extra):
    v = {"source": source, "published": False, "computed_with": "python3 hmac/hashlib (testdata/catalog_vectors.py)",
         "secret": secret, "url": URL + name, "headers": headers, "body": body, "now": NOW,
         "want_id": want_id, "want_type": want_type}
    v.update(extra)
    vectors[name] = v


# Body-only HMAC-SHA256 schemes.
b = '{"webhookEvent":"jira:issue_created","issue":{"key":"ACME-1"}}'
add("jira", "https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks",
    {"X-Hub-Signature": "sha256=" + hexd(mac(SECRET, b)), "X-Atlassian-Webhook-Identifier": "wh-1"}, b, "wh-1", "jira:issue_created")
b = '{"push":{"changes":[]}}'
add("bitbucket", "https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/",
    {"X-Hub-Signature": "sha256=" + hexd(mac(SECRET, b)), "X-Request-UUID": "5a7d1c4e-0000-4000-8000-000000000001", "X-Event-Key": "repo:push"}, b,
    "5a7d1c4e-0000-4000-8000-000000000001", "repo:push")
b = '{"action":"created","data":{"issue":{"id":"1"}}}'
add("sentry", "https://docs.sentry.io/organization/integrations/integration-platform/webhooks/",
    {"Sentry-Hook-Signature": hexd(mac(SECRET, b)), "Request-ID": "req-1", "Sentry-Hook-Resource": "issue"}, b, "req-1", "issue.created")
b = '{"id":1,"event":{"id":"24934862-d980-46cb-9402-43c81b0cdba6","type":"charge:confirmed"}}'
add("coinbase", "https://docs.cdp.coinbase.com/commerce/docs/webhooks-security",
    {"X-CC-Webhook-Signature": hexd(mac(SECRET, b))}, b, "24934862-d980-46cb-9402-43c81b0cdba6", "charge:confirmed")
b = '{"entity":"event","event":"payment.captured","payload":{}}'
add("razorpay", "https://razorpay.com/docs/webhooks/validate-test/",
    {"X-Razorpay-Signature": hexd(mac(SECRET, b)), "X-Razorpay-Event-Id": "EvtAbc123"}, b, "EvtAbc123", "payment.captured")
b = '{"meta":{"event_name":"order_created"},"data":{"id":"1"}}'
add("lemonsqueezy", "https://docs.lemonsqueezy.com/help/webhooks/signing-requests",
    {"X-Signature": hexd(mac(SECRET, b)), "X-Event-Name": "order_created"}, b, sha256id(b), "order_created")
b = '{"list_folder":{"accounts":["dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"]},"delta":{"users":[12345678]}}'
add("dropbox", "https://www.dropbox.com/developers/reference/webhooks",
    {"X-Dropbox-Signature": hexd(mac(SECRET, b))}, b, sha256id(b), "")
b = '{"events":[{"action":"changed","resource":{"gid":"1"}}]}'
add("asana", "https://developers.asana.com/docs/webhooks-guide",
    {"X-Hook-Signature": hexd(mac(SECRET, b))}, b, sha256id(b), "changed")
b = '{"id":"367cba44-b6f3-4c92-81e7-6a2e9659efd4","type":"page.created","entity":{"id":"1","type":"page"}}'
add("notion", "https://developers.notion.com/reference/webhooks",
    {"X-Notion-Signature": "sha256=" + hexd(mac(SECRET, b))}, b, "367cba44-b6f3-4c92-81e7-6a2e9659efd4", "page.created")
b = '{"object":"page","entry":[{"id":"1","time":1735689600,"changes":[]}]}'
add("meta", "https://developers.facebook.com/docs/graph-api/webhooks/getting-started",
    {"X-Hub-Signature-256": "sha256=" + hexd(mac(SECRET, b))}, b, sha256id(b), "page", verify_token="vt")
b = '{"base":{"id":"appAbc"},"webhook":{"id":"achAbc"},"timestamp":"2025-01-01T00:00:00.000Z"}'
add("airtable", "https://airtable.com/developers/web/api/webhooks-overview",
    {"X-Airtable-Content-MAC": "hmac-sha256=" + hexd(mac(base64.b64decode(B64_SECRET), b))}, b, sha256id(b), "", secret=B64_SECRET)
# SHA-1.
b = '{"id":"evt_1","type":"deployment.created","payload":{}}'
add("vercel", "https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks",
    {"X-Vercel-Signature": hexd(mac(SECRET, b, h=hashlib.sha1))}, b, "evt_1", "deployment.created")
b = '{"type":"notification_event","id":"notif_1","topic":"conversation.user.created"}'
add("intercom", "https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications",
    {"X-Hub-Signature": "sha1=" + hexd(mac(SECRET, b, h=hashlib.sha1))}, b, "notif_1", "conversation.user.created")
# Base64.
b = '{"id":727,"status":"processing"}'
add("woocommerce", "https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks",
    {"X-WC-Webhook-Signature": b64(mac(SECRET, b)), "X-WC-Webhook-Delivery-ID": "9b1e1f3c", "X-WC-Webhook-Topic": "order.created"}, b, "9b1e1f3c", "order.created")
b = '{"event_id":"01HBE6K3","event_type":"form_response","form_response":{}}'
add("typeform", "https://www.typeform.com/developers/webhooks/secure-your-webhooks/",
    {"Typeform-Signature": "sha256=" + b64(mac(SECRET, b))}, b, "01HBE6K3", "form_response")
b = '{"destination":"U1","events":[{"type":"message","webhookEventId":"01FZ74A0TDDPYRVKNK77XKC3ZR","deliveryContext":{"isRedelivery":false}}]}'
add("line", "https://developers.line.biz/en/reference/messaging-api/#signature-validation",
    {"X-Line-Signature": b64(mac(SECRET, b))}, b, "01FZ74A0TDDPYRVKNK77XKC3ZR", "message")
b = '{"for_user_id":"2244994945","tweet_create_events":[{"id_str":"1"}]}'
add("twitter", "https://docs.x.com/x-api/webhooks/introduction",
    {"X-Twitter-Webhooks-Signature": "sha256=" + b64(mac(SECRET, b))}, b, sha256id(b), "tweet_create_events")
b = '{"type":"message","id":"1485983408511","text":"hello"}'
add("msteams", "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook",
    {"Authorization": "HMAC " + b64(mac(base64.b64decode(B64_SECRET), b))}, b, "1485983408511", "message", secret=B64_SECRET)
b = '{"event":"envelope-completed","apiVersion":"v2.1","retryCount":0,"generatedDateTime":"2025-01-01T00:00:00.0000000Z","data":{"envelopeId":"e1"}}'
add("docusign", "https://developers.docusign.com/platform/webhooks/connect/hmac/",
    {"X-DocuSign-Signature-1": b64(mac(SECRET, b))}, b, "envelope-completed:e1:2025-01-01T00:00:00.0000000Z", "envelope-completed")
# Lists and timestamps.
b = '{"event":{"id":"01DEN7XN5","event_type":"incident.triggered"}}'
add("pagerduty", "https://developer.pagerduty.com/docs/webhooks-v3-overview#verifying-signatures",
    {"X-PagerDuty-Signature": "v1=" + hexd(mac("other-secret", b)) + ",v1=" + hexd(mac(SECRET, b))}, b, "01DEN7XN5", "incident.triggered")
b = '{"type":"video.asset.ready","id":"3a56ac3d-33da-4366-855b-f592d898409d"}'
add("mux", "https://docs.mux.com/core/verify-webhook-signatures",
    {"Mux-Signature": "t=%d,v1=%s" % (NOW, hexd(mac(SECRET, "%d.%s" % (NOW, b))))}, b, "3a56ac3d-33da-4366-855b-f592d898409d", "video.asset.ready")
b = '{"event":"invitee.created","payload":{"uri":"https://api.calendly.com/x"}}'
add("calendly", "https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures",
    {"Calendly-Webhook-Signature": "t=%d,v1=%s" % (NOW, hexd(mac(SECRET, "%d.%s" % (NOW, b))))}, b, sha256id(b), "invitee.created")
b = '{"type":"zen:event-type:ticket.created","id":"1"}'
add("zendesk", "https://developer.zendesk.com/documentation/webhooks/verifying/",
    {"X-Zendesk-Webhook-Signature": b64(mac(SECRET, TS_RFC + b)), "X-Zendesk-Webhook-Signature-Timestamp": TS_RFC,
     "X-Zendesk-Webhook-Invocation-Id": "inv-1"}, b, "inv-1", "zen:event-type:ticket.created")
b = '{"type":"webhook_event","id":"eventid-1","trigger":"FILE.UPLOADED"}'
add("box", "https://developer.box.com/guides/webhooks/v2/signatures-v2/",
    {"Box-Signature-Secondary": b64(mac(SECRET, b + TS_RFC)), "Box-Signature-Primary": b64(mac("an-old-key", b + TS_RFC)), "Box-Delivery-Timestamp": TS_RFC},
    b, "eventid-1", "FILE.UPLOADED")
b = '{"subscription":{"type":"channel.follow"},"event":{"user_id":"1"}}'
ts = "2025-01-01T00:00:00.123456789Z"
add("twitch", "https://dev.twitch.tv/docs/eventsub/handling-webhook-events",
    {"Twitch-Eventsub-Message-Signature": "sha256=" + hexd(mac(SECRET, "msg-1" + ts + b)), "Twitch-Eventsub-Message-Id": "msg-1",
     "Twitch-Eventsub-Message-Timestamp": ts, "Twitch-Eventsub-Message-Type": "notification", "Twitch-Eventsub-Subscription-Type": "channel.follow"},
    b, "msg-1", "channel.follow")
# Signed URLs.
b = '[{"eventId":1,"subscriptionType":"contact.creation","occurredAt":1735689600000}]'
u = URL + "hubspot?portal=62515"
add("hubspot", "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
    {"X-HubSpot-Signature-v3": b64(mac(SECRET, "POST" + u + b + str(NOW * 1000))), "X-HubSpot-Request-Timestamp": str(NOW * 1000)}, b,
    sha256id(b), "contact.creation", url=u)
b = '{"type":"payment.updated","event_id":"6a8f5f28-54a1-4eb0-a98a-3111513fd4fc","data":{}}'
add("square", "https://developer.squareup.com/docs/webhooks/step3validate",
    {"X-Square-HmacSha256-Signature": b64(mac(SECRET, URL + "square" + b))}, b, "6a8f5f28-54a1-4eb0-a98a-3111513fd4fc", "payment.updated")
b = '{"action":{"id":"5f3a","type":"updateCard"},"model":{"id":"m1"}}'
add("trello", "https://developer.atlassian.com/cloud/trello/guides/rest-api/webhooks/#webhook-signatures",
    {"X-Trello-Webhook": b64(mac(SECRET, b + URL + "trello", h=hashlib.sha1))}, b, "5f3a", "updateCard")
# Mailgun signs fields of the body.
token = "a" * 25 + "b" * 25
b = json.dumps({"signature": {"timestamp": str(NOW), "token": token, "signature": hexd(mac(SECRET, str(NOW) + token))},
                "event-data": {"id": "CPgfbmQMTCKtHW6uIWtuVe", "event": "delivered"}}, separators=(",", ":"))
add("mailgun", "https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks",
    {}, b, "CPgfbmQMTCKtHW6uIWtuVe", "delivered")
# Standard Webhooks aliases.
# The Standard Webhooks aliases: the published Standard Webhooks reference
# vector applies to them as it is (under svix-* names for the senders that
# use Svix), so it is written here, and its HMAC recomputed as a check.
REF = {"secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "ts": "1614265330",
       "body": '{"test": 2432232314}', "sig": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}
assert "v1," + b64(mac(base64.b64decode(REF["secret"][len("whsec_"):]), "%s.%s.%s" % (REF["id"], REF["ts"], REF["body"]))) == REF["sig"]
for name, prefix in [("clerk", "Svix"), ("resend", "Svix"), ("openai", "Webhook"), ("replicate", "Webhook")]:
    vectors[name] = {
        "source": "the Standard Webhooks reference test vector (the test suites of the libraries in https://github.com/standard-webhooks/standard-webhooks; testdata/standardwebhooks)"
                  + (", under the svix-* header names" if prefix == "Svix" else ""),
        "published": True, "secret": REF["secret"], "url": URL + name,
        "headers": {prefix + "-Id": REF["id"], prefix + "-Timestamp": REF["ts"], prefix + "-Signature": REF["sig"]},
        "body": REF["body"], "now": int(REF["ts"]), "want_id": REF["id"], "want_type": ""}
# Tokens.
b = '{"update_id":10000,"message":{"text":"hi"}}'
add("telegram", "https://core.telegram.org/bots/api#setwebhook", {"X-Telegram-Bot-Api-Secret-Token": "tg_secret-1"}, b, "10000", "message", secret="tg_secret-1")
b = '{"eventId":"b5a188b9","data":{"events":[{"eventType":"user.lifecycle.create"}]}}'
add("okta", "https://developer.okta.com/docs/concepts/event-hooks/", {"Authorization": SECRET}, b, "b5a188b9", "user.lifecycle.create")
# The ID of a body token entry is the digest of the body as stored: its
# token replaced by the JSON string "[redacted]".
b = '{"event_type":"FILE_UPDATE","passcode":"%s","webhook_id":"22"}'
add("figma", "https://www.figma.com/developers/api#webhooks_v2", {}, b % SECRET, sha256id(b % "[redacted]"), "FILE_UPDATE")
b = '{"value":[{"changeType":"created","clientState":"%s","resource":"Users/1/Messages/2"}]}'
add("msgraph", "https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks", {}, b % SECRET, sha256id(b % "[redacted]"), "created")

for name, v in vectors.items():
    os.makedirs(name, exist_ok=True)
    with open(os.path.join(name, "catalog-vector.json"), "w") as f:
        json.dump(v, f, indent=2, sort_keys=True)
        f.write("\n")
print(len(vectors), "vectors")
