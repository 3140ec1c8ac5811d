package webhooks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	webhooks "github.com/hookinbox/webhooks"
)

// TestPauseScopeHolds: a scope holds the events of its provider, tenant
// and types, each empty field narrowing nothing; types match as a Mux's
// patterns do ("invoice.*" is not "invoice", nor "invoices.paid").
func TestPauseScopeHolds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		scope                     webhooks.PauseScope
		provider, tenant, evtType string
		holds                     bool
	}{
		{webhooks.PauseScope{}, "stripe", "a", "invoice.paid", true},
		{webhooks.PauseScope{Provider: "stripe"}, "stripe", "a", "invoice.paid", true},
		{webhooks.PauseScope{Provider: "stripe"}, "github", "a", "invoice.paid", false},
		{webhooks.PauseScope{Provider: "stripe", Tenant: "a"}, "stripe", "a", "x", true},
		{webhooks.PauseScope{Provider: "stripe", Tenant: "a"}, "stripe", "b", "x", false},
		{webhooks.PauseScope{Provider: "stripe", Tenant: "a"}, "stripe", "", "x", false},
		{webhooks.PauseScope{Types: "invoice.paid"}, "stripe", "", "invoice.paid", true},
		{webhooks.PauseScope{Types: "invoice.paid"}, "stripe", "", "invoice.paid.late", false},
		{webhooks.PauseScope{Types: "invoice.*"}, "stripe", "", "invoice.paid", true},
		{webhooks.PauseScope{Types: "invoice.*"}, "stripe", "", "invoice.payment.failed", true},
		{webhooks.PauseScope{Types: "invoice.*"}, "stripe", "", "invoice", false},
		{webhooks.PauseScope{Types: "invoice.*"}, "stripe", "", "invoice.", false},
		{webhooks.PauseScope{Types: "invoice.*"}, "stripe", "", "invoices.paid", false},
		{webhooks.PauseScope{Provider: "stripe", Types: "invoice.*"}, "github", "", "invoice.paid", false},
	} {
		assert.Equal(t, c.holds, c.scope.Holds(c.provider, c.tenant, c.evtType), "%s holds %s/%s %s", c.scope, c.provider, c.tenant, c.evtType)
	}
	assert.Equal(t, "stripe/a invoice.*", webhooks.PauseScope{Provider: "stripe", Tenant: "a", Types: "invoice.*"}.String())
	assert.Equal(t, "every job", webhooks.PauseScope{}.String())
}

// TestPauseRequestCheck: a scope needs a provider for its tenant and a
// pattern Mux takes (not "*"), with bounded, storable fields; EveryHandler
// is an operator's only, and a breaker pauses one whole handler.
func TestPauseRequestCheck(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	op := func(handler string, scope webhooks.PauseScope) webhooks.PauseRequest {
		return webhooks.PauseRequest{Handler: handler, Scope: scope, Cause: webhooks.PauseOperator, Actor: "a", Reason: "r", Now: now}
	}
	breaker := func(handler string, scope webhooks.PauseScope) webhooks.PauseRequest {
		return webhooks.PauseRequest{Handler: handler, Scope: scope, Cause: webhooks.PauseBreaker, Actor: "a", Reason: "r", Now: now, Until: now.Add(time.Minute)}
	}
	for _, req := range []webhooks.PauseRequest{
		op("ledger", webhooks.PauseScope{}),
		op(webhooks.EveryHandler, webhooks.PauseScope{}),
		op(webhooks.EveryHandler, webhooks.PauseScope{Provider: "stripe", Tenant: "acct_1", Types: "invoice.*"}),
		op("", webhooks.PauseScope{Types: "push"}),
		breaker("ledger", webhooks.PauseScope{}),
	} {
		assert.NoError(t, req.Check(), "%+v", req)
		resume := webhooks.ResumeRequest{Handler: req.Handler, Scope: req.Scope, Cause: req.Cause, Actor: "a", Reason: "r", Now: now}
		assert.NoError(t, resume.Check(), "%+v", resume)
	}
	for _, c := range []struct {
		req  webhooks.PauseRequest
		want string
	}{
		{op("ledger", webhooks.PauseScope{Tenant: "acct_1"}), "needs a Provider"},
		{op("ledger", webhooks.PauseScope{Types: "*"}), "leave it empty"},
		{op("ledger", webhooks.PauseScope{Types: "in*voice"}), "invalid event-type pattern"},
		{op("ledger", webhooks.PauseScope{Types: " invoice.paid"}), "invalid event-type pattern"},
		{op("ledger", webhooks.PauseScope{Provider: strings.Repeat("p", 513)}), "at most 512"},
		{op("ledger", webhooks.PauseScope{Provider: "a\x00b"}), "NUL"},
		{op("ledger", webhooks.PauseScope{Provider: "stripe", Tenant: "\xff"}), "UTF-8"},
		{op("Ledger", webhooks.PauseScope{}), "handler name"},
		{op("**", webhooks.PauseScope{}), "handler name"},
		{breaker(webhooks.EveryHandler, webhooks.PauseScope{}), "a breaker pauses one handler"},
		{breaker("ledger", webhooks.PauseScope{Provider: "stripe"}), "a breaker pauses one handler"},
	} {
		err := c.req.Check()
		if assert.Error(t, err, "%+v", c.req) {
			assert.Contains(t, err.Error(), c.want)
		}
		resume := webhooks.ResumeRequest{Handler: c.req.Handler, Scope: c.req.Scope, Cause: c.req.Cause, Actor: "a", Reason: "r", Now: now}
		assert.Error(t, resume.Check(), "%+v", resume)
	}
}
