package webhooks

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// HeaderFallbacks maps a header name that a verifier's options read (the
// signature header, the timestamp's header, the event ID and type headers)
// to another name that carries the same value when the first is absent, for
// providers that use two sets of names: Standard Webhooks' "Webhook-Id" is
// "Svix-Id" on Svix's default deployment. A request that carries the
// configured name is read by that name only, and rejections name the
// configured header. Names are matched without regard to case.
type HeaderFallbacks map[string]string

// Validate reports every problem with the fallbacks, given the header
// names the options read: a fallback for a header they do not read, a
// fallback name that is not a valid header name or is itself one of the
// headers read, and two fallbacks for one header (two spellings of its
// name, of which map order would pick one).
func (f HeaderFallbacks) Validate(configured ...string) error {
	read := make(map[string]bool, len(configured))
	for _, name := range configured {
		if name != "" {
			read[http.CanonicalHeaderKey(name)] = true
		}
	}
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	seen := make(map[string]bool, len(f))
	for _, name := range slices.Sorted(maps.Keys(f)) {
		alt := f[name]
		cname := http.CanonicalHeaderKey(name)
		switch {
		case !read[cname]:
			bad("HeaderFallbacks has a fallback for %q, which is not a header these options read", name)
		case !sigsyntax.IsHeaderName(alt):
			bad("HeaderFallbacks[%q] %q is not a valid header name", name, alt)
		case read[http.CanonicalHeaderKey(alt)]:
			bad("HeaderFallbacks[%q] is %q, which is itself a header these options read", name, alt)
		case seen[cname]:
			bad("HeaderFallbacks has two fallbacks for %q", cname)
		}
		seen[cname] = true
	}
	return errors.Join(problems...)
}

// Apply returns h with each absent configured header given the values of
// its fallback, so the rest of verification reads one name. h is not
// modified; it is returned as it is when no fallback applies.
func (f HeaderFallbacks) Apply(h http.Header) http.Header {
	out, _ := f.apply(h)
	return out
}

// apply is Apply, reporting whether a fallback applied.
func (f HeaderFallbacks) apply(h http.Header) (http.Header, bool) {
	var out http.Header
	for name, alt := range f {
		if len(h.Values(name)) > 0 || len(h.Values(alt)) == 0 {
			continue
		}
		if out == nil {
			out = h.Clone()
		}
		out[http.CanonicalHeaderKey(name)] = h.Values(alt)
	}
	if out == nil {
		return h, false
	}
	return out, true
}

// fallbackList is HeaderFallbacks compiled for a verifier: canonical
// names in a fixed order, looked up without canonicalizing them again.
type fallbackList []fallbackPair

type fallbackPair struct{ name, alt string }

// compile returns the fallbacks as a list.
func (f HeaderFallbacks) compile() fallbackList {
	var out fallbackList
	for _, name := range slices.Sorted(maps.Keys(f)) {
		out = append(out, fallbackPair{http.CanonicalHeaderKey(name), http.CanonicalHeaderKey(f[name])})
	}
	return out
}

// applyTo returns req with the fallbacks applied to its header, as
// HeaderFallbacks.Apply does, or req itself when none applies. The body
// is shared, never copied.
func (l fallbackList) applyTo(req *Request) *Request {
	var out http.Header
	for _, p := range l {
		if len(req.Header[p.name]) > 0 || len(req.Header[p.alt]) == 0 {
			continue
		}
		if out == nil {
			out = req.Header.Clone()
		}
		out[p.name] = req.Header[p.alt]
	}
	if out == nil {
		return req
	}
	r := *req
	r.Header = out
	return &r
}

// SingleHeader returns the one value of header name, trimmed, for a
// verifier that reads a header the scheme requires. An absent or empty
// header is rejected with the missing reason; a header sent more than
// once with ReasonMalformedHeader, since the two copies could disagree.
func SingleHeader(h http.Header, name string, missing Reason) (string, *VerificationError) {
	return singleHeaderKey(h, http.CanonicalHeaderKey(name), name, missing)
}

// singleHeaderKey returns the one value of the header whose canonical name
// is key; name is the one rejections give. An absent or empty header is
// rejected with the missing reason; a header sent more than once with
// ReasonMalformedHeader, since the two copies could disagree.
func singleHeaderKey(h http.Header, key, name string, missing Reason) (string, *VerificationError) {
	value, n := sigsyntax.HeaderKey(h, key)
	switch {
	case n > 1:
		return "", Reject(ReasonMalformedHeader, "header %s is sent %d times", name, n)
	case value == "":
		return "", Reject(missing, "header %s is missing", name)
	}
	return value, nil
}
