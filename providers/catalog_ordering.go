package providers

import (
	"strings"

	"github.com/hookinbox/webhooks"
)

// Ordering says where the entry's verifier finds the ordering key and
// version of an event (webhooks.OrderSource), for ordered handlers, or
// "none" and why. webhooks.WithOrdering replaces it for a receiver.
func (e Entry) Ordering() string {
	if src, ok := e.orderSource(); ok && len(src.KeyPaths) > 0 {
		return orderingText(src)
	}
	if _, ok := e.TokenOptions(); ok {
		return "none: " + orderingUnsigned
	}
	return "none: " + orderingNotes[e.Name]
}

// orderSource returns the order source of the entry's definition, and
// false for a verifier of a fixed format.
func (e Entry) orderSource() (webhooks.OrderSource, bool) {
	if o, ok := e.TokenOptions(); ok {
		return o.Event.Order, true
	}
	r, _, ok := e.request()
	return r.Event.Order, ok
}

// orderingText writes a source as the catalog shows it.
func orderingText(o webhooks.OrderSource) string {
	alternatives := func(paths []string) string {
		quoted := make([]string, len(paths))
		for i, p := range paths {
			quoted[i] = code(p)
		}
		return strings.Join(quoted, " or ")
	}
	out := "the body's " + alternatives(o.KeyPaths)
	if o.ScopePath != "" {
		out = "the body's " + code(o.ScopePath) + ", with `/` and " + alternatives(o.KeyPaths) + " where present"
	}
	if len(o.VersionPaths) > 0 {
		out += "; version " + alternatives(o.VersionPaths) + formatNote(o.VersionFormat)
	}
	return out + ", signed"
}

// Why an entry derives no ordering key.
const (
	orderingUnsigned = "the body is not signed, and an unsigned input must not choose the order"
	orderingBatch    = "one request carries several events"
	orderingShape    = "the scheme fixes the envelope only, not where the payload names its object"
	orderingMixed    = "not derived: its events name their objects per type (key them with webhooks.WithOrdering)"
)

// orderingNotes says, for each entry whose definition sets no key, why:
// TestCatalogOrdering checks that every such entry has a reason and no
// keyed entry has one.
var orderingNotes = map[string]string{
	"airtable":                 "a notification names only the base and webhook; the changes are fetched from the API",
	"asana":                    orderingBatch,
	"bitbucket":                orderingMixed,
	"box":                      orderingMixed,
	"calendly":                 orderingMixed,
	"clerk":                    orderingShape,
	"coinbase":                 orderingMixed,
	"discord":                  "each interaction stands alone and is answered in the request",
	"discord-events":           orderingMixed,
	"docusign":                 orderingMixed,
	"dropbox":                  "a notification names only the accounts that changed; the changes are fetched from the API",
	"figma":                    orderingUnsigned + " (the passcode in it covers nothing)",
	"gitlab-signing":           orderingMixed,
	"hubspot":                  orderingBatch,
	"intercom":                 orderingMixed,
	"jira":                     orderingMixed,
	"lemonsqueezy":             orderingMixed,
	"line":                     orderingBatch,
	"linear":                   orderingMixed,
	"mailgun":                  orderingUnsigned + " (the signature covers a timestamp and a token)",
	"meta":                     orderingBatch,
	"msgraph":                  orderingUnsigned + " (clientState covers nothing), and " + orderingBatch,
	"msteams":                  orderingMixed,
	"mux":                      orderingMixed,
	"notion":                   orderingMixed,
	"openai":                   orderingShape,
	"paddle":                   orderingMixed,
	"pagerduty":                orderingMixed,
	"razorpay":                 orderingMixed,
	"replicate":                orderingShape,
	"resend":                   orderingShape,
	"sendgrid":                 orderingBatch,
	"sentry":                   orderingMixed,
	"slack":                    orderingMixed,
	"sns":                      "a message carries another service's payload, as a string",
	"square":                   orderingMixed,
	"standardwebhooks":         orderingShape,
	"standardwebhooks-ed25519": orderingShape,
	"svix":                     orderingShape,
	"trello":                   orderingMixed,
	"twilio":                   "form parameters, which name their object differently per callback",
	"twitch":                   orderingMixed,
	"twitter":                  orderingBatch,
	"typeform":                 "each form response stands alone",
	"vercel":                   orderingMixed,
	"woocommerce":              orderingMixed,
	"zendesk":                  orderingMixed,
	"zoom":                     orderingMixed,
}
