package admin

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/ops"
)

// Page sizes of the dead-letter listing.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// errorClasses are the failure classes the Processor records, which the
// error_class filter accepts.
var errorClasses = []webhooks.FailureClass{
	webhooks.FailureError,
	webhooks.FailurePermanent,
	webhooks.FailurePanic,
	webhooks.FailureTimeout,
	webhooks.FailureNoHandler,
	webhooks.FailureLeaseExpired,
}

// listParams are the query parameters of a dead-letter listing.
var listParams = []string{"handler", "default_handler", "provider", "tenant", "no_tenant", "event_type", "error_class", "api_version", "from", "to", "state", "limit", "after"}

// badRequest is an error answered 400 with its message.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badf(format string, args ...any) error {
	return &badRequest{msg: fmt.Sprintf(format, args...)}
}

// listing is a parsed dead-letter listing request.
type listing struct {
	adminjson.Filter
	State webhooks.State
	Limit int
	After string
}

// parseListing reads a listing's query parameters, refusing unknown ones
// and repeated ones, so a typo does not silently list everything.
func parseListing(v url.Values) (listing, error) {
	if err := onlyParams(v, listParams); err != nil {
		return listing{}, err
	}
	l := listing{
		Filter: adminjson.Filter{
			Provider:   v.Get("provider"),
			Tenant:     v.Get("tenant"),
			EventType:  v.Get("event_type"),
			ErrorClass: v.Get("error_class"),
			APIVersion: v.Get("api_version"),
			Handler:    v.Get("handler"),
		},
		State: webhooks.StateDead,
		Limit: DefaultPageSize,
		After: v.Get("after"),
	}
	var err error
	if s := v.Get("no_tenant"); s != "" {
		if l.NoTenant, err = strconv.ParseBool(s); err != nil {
			return listing{}, badf("no_tenant %q: give true or false", s)
		}
	}
	if s := v.Get("default_handler"); s != "" {
		if l.DefaultHandler, err = strconv.ParseBool(s); err != nil {
			return listing{}, badf("default_handler %q: give true or false", s)
		}
	}
	if l.From, err = parseTime("from", v.Get("from")); err != nil {
		return listing{}, err
	}
	if l.To, err = parseTime("to", v.Get("to")); err != nil {
		return listing{}, err
	}
	switch s := v.Get("state"); s {
	case "", string(webhooks.StateDead):
	case string(webhooks.StateClosed):
		l.State = webhooks.StateClosed
	default:
		return listing{}, badf("state %q: give dead or closed", s)
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPageSize {
			return listing{}, badf("limit %q: give a number from 1 to %d", s, MaxPageSize)
		}
		l.Limit = n
	}
	if err := checkFilter(&l.Filter); err != nil {
		return listing{}, err
	}
	return l, nil
}

// query is the listing as an ops.Query.
func (l listing) query() ops.Query {
	q := l.Filter.Query()
	q.State, q.Limit, q.After = l.State, l.Limit, l.After
	return q
}

// values is the listing as query parameters, without the cursor and
// without those at their defaults, for the page's links.
func (l listing) values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("handler", l.Handler)
	if l.DefaultHandler {
		v.Set("default_handler", "true")
	}
	set("provider", l.Provider)
	set("tenant", l.Tenant)
	if l.NoTenant {
		v.Set("no_tenant", "true")
	}
	set("event_type", l.EventType)
	set("error_class", l.ErrorClass)
	set("api_version", l.APIVersion)
	if !l.From.IsZero() {
		v.Set("from", l.From.Format(time.RFC3339Nano))
	}
	if !l.To.IsZero() {
		v.Set("to", l.To.Format(time.RFC3339Nano))
	}
	if l.State != webhooks.StateDead {
		v.Set("state", string(l.State))
	}
	if l.Limit != DefaultPageSize {
		v.Set("limit", strconv.Itoa(l.Limit))
	}
	return v
}

// checkFilter validates a filter.
func checkFilter(f *adminjson.Filter) error {
	switch {
	case f.NoTenant && f.Tenant != "":
		return badf("tenant %q and no_tenant: give one or the other", f.Tenant)
	case f.DefaultHandler && f.Handler != "":
		return badf("handler %q and default_handler: give one or the other", f.Handler)
	case webhooks.CheckHandlerName(f.Handler) != nil:
		return badf("handler: %v", webhooks.CheckHandlerName(f.Handler))
	case f.ErrorClass != "" && !slices.Contains(errorClasses, webhooks.FailureClass(f.ErrorClass)):
		names := make([]string, len(errorClasses))
		for i, c := range errorClasses {
			names[i] = string(c)
		}
		return badf("error_class %q: give one of %s", f.ErrorClass, strings.Join(names, ", "))
	case !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To):
		return badf("from %s is not before to %s", f.From.Format(time.RFC3339), f.To.Format(time.RFC3339))
	}
	return nil
}

// timeLayouts are the forms from and to accept: RFC 3339, and in UTC the
// forms of an HTML date or datetime-local input.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

func parseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, badf("%s %q: give a date as YYYY-MM-DD or a time as YYYY-MM-DDThh:mm:ssZ (RFC 3339; both in UTC)", name, s)
}

// keyParams are the query parameters that address one item.
var keyParams = []string{"provider", "tenant", "event_id"}

// parseKey reads an item's key from query parameters: provider and
// event_id are required, tenant is empty when left out.
func parseKey(v url.Values) (webhooks.InboxKey, error) {
	if err := onlyParams(v, keyParams); err != nil {
		return webhooks.InboxKey{}, err
	}
	k := adminjson.Key{Provider: v.Get("provider"), Tenant: v.Get("tenant"), EventID: v.Get("event_id")}
	if err := checkKey(k); err != nil {
		return webhooks.InboxKey{}, err
	}
	return k.InboxKey(), nil
}

// checkKey validates an item's key.
func checkKey(k adminjson.Key) error {
	if k.Provider == "" || k.EventID == "" {
		return badf("provider and event_id are required to address an item (tenant is empty when left out)")
	}
	return nil
}

// checkHandler validates the handler name a request gives for a job.
func checkHandler(field, name string) error {
	if err := webhooks.CheckHandlerName(name); err != nil {
		return badf("%s: %v", field, err)
	}
	return nil
}

// onlyParams refuses parameters not in known, and known ones given twice.
func onlyParams(v url.Values, known []string) error {
	var unknown []string
	for k, vs := range v {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		} else if len(vs) > 1 {
			return badf("parameter %s is given %d times; give it once", k, len(vs))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return badf("unknown parameter %s (known: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return nil
}

// isBadRequest reports whether err is answered 400: a bad parameter or
// body, or a store's refusal of a cursor or request.
func isBadRequest(err error) bool {
	var br *badRequest
	return errors.As(err, &br) || errors.Is(err, ops.ErrInvalidCursor) || errors.Is(err, ops.ErrInvalidRequest)
}
