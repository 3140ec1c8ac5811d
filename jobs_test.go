package webhooks_test

import (
	"errors"
	"strings"
	"testing"

	webhooks "github.com/hookinbox/webhooks"
)

func TestCheckHandlerName(t *testing.T) {
	for _, name := range []string{"", "ledger", "a", "audit-2", "billing.v2", "x_y", "0day", strings.Repeat("a", 63)} {
		if err := webhooks.CheckHandlerName(name); err != nil {
			t.Errorf("CheckHandlerName(%q) = %v, want nil", name, err)
		}
	}
	for _, name := range []string{"Ledger", "-a", ".a", "a b", "a/b", "a@b", "é", strings.Repeat("a", 64), "a\x00"} {
		if err := webhooks.CheckHandlerName(name); err == nil {
			t.Errorf("CheckHandlerName(%q) = nil, want an error", name)
		}
	}
}

func TestEnvelopeCheckJobs(t *testing.T) {
	key := webhooks.InboxKey{Provider: "p", EventID: "e"}
	many := make([]webhooks.Job, webhooks.MaxHandlers+1)
	for i := range many {
		many[i].Handler = "h" + strings.Repeat("x", i)
	}
	for _, tc := range []struct {
		name string
		env  webhooks.Envelope
		ok   bool
	}{
		{"nil jobs", webhooks.Envelope{Key: key}, true},
		{"two handlers", webhooks.Envelope{Key: key, Jobs: []webhooks.Job{{Handler: "ledger", Ordered: true}, {Handler: "audit"}}, Ordering: webhooks.Ordering{Key: "cus_1", Version: 7}}, true},
		{"default among others", webhooks.Envelope{Key: key, Jobs: []webhooks.Job{{}, {Handler: "audit"}}}, true},
		{"at most MaxHandlers", webhooks.Envelope{Key: key, Jobs: many[:webhooks.MaxHandlers]}, true},
		{"empty non-nil", webhooks.Envelope{Key: key, Jobs: []webhooks.Job{}}, false},
		{"too many", webhooks.Envelope{Key: key, Jobs: many}, false},
		{"twice", webhooks.Envelope{Key: key, Jobs: []webhooks.Job{{Handler: "a"}, {Handler: "b"}, {Handler: "a", Ordered: true}}}, false},
		{"bad name", webhooks.Envelope{Key: key, Jobs: []webhooks.Job{{Handler: "A"}}}, false},
		{"long key", webhooks.Envelope{Key: key, Ordering: webhooks.Ordering{Key: strings.Repeat("k", webhooks.MaxOrderingKeyBytes+1)}}, false},
		{"longest key", webhooks.Envelope{Key: key, Ordering: webhooks.Ordering{Key: strings.Repeat("k", webhooks.MaxOrderingKeyBytes)}}, true},
		{"key not UTF-8", webhooks.Envelope{Key: key, Ordering: webhooks.Ordering{Key: "\xff"}}, false},
		{"key with NUL", webhooks.Envelope{Key: key, Ordering: webhooks.Ordering{Key: "a\x00b"}}, false},
		{"priorities", webhooks.Envelope{Key: key, Jobs: []webhooks.Job{{Handler: "a", Priority: webhooks.MaxTypePriority}, {Handler: "b"}}}, true},
		{"negative priority", webhooks.Envelope{Key: key, Jobs: []webhooks.Job{{Handler: "a", Priority: -1}}}, false},
		{"priority too high", webhooks.Envelope{Key: key, Jobs: []webhooks.Job{{Priority: webhooks.MaxTypePriority + 1}}}, false},
		{"negative version", webhooks.Envelope{Key: key, Ordering: webhooks.Ordering{Key: "k", Version: -1}}, false},
	} {
		err := tc.env.CheckJobs()
		if (err == nil) != tc.ok {
			t.Errorf("%s: CheckJobs() = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestJobKeyString(t *testing.T) {
	k := webhooks.JobKey{InboxKey: webhooks.InboxKey{Provider: "stripe", Tenant: "t", EventID: "evt_1"}}
	if got := k.String(); got != "stripe/t/evt_1" {
		t.Errorf("default handler: %q", got)
	}
	k.Handler = "audit"
	if got := k.String(); got != "stripe/t/evt_1@audit" {
		t.Errorf("named handler: %q", got)
	}
	if a, b := (webhooks.JobKey{InboxKey: k.InboxKey}), k; a.Compare(b) >= 0 || b.Compare(a) <= 0 || a.Compare(a) != 0 {
		t.Error("Compare does not order the default handler's job first")
	}
}

func TestSkip(t *testing.T) {
	for _, err := range []error{webhooks.Skip(""), webhooks.Skip("version 3 applied")} {
		if !errors.Is(err, webhooks.ErrSkipped) {
			t.Errorf("Skip: %v does not wrap ErrSkipped", err)
		}
	}
	if got := webhooks.Skip("v3 applied").Error(); !strings.Contains(got, "v3 applied") {
		t.Errorf("Skip keeps no reason: %q", got)
	}
}
