package webhooks

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// patterns maps event-type patterns to values: exact types ("push"),
// prefix wildcards ("invoice.*", matching "invoice.paid" and
// "invoice.payment.failed" but not "invoice") and "*". The most specific
// pattern matches: exact, then the longest prefix, then "*". The zero value
// is empty and ready to use; it is not safe for concurrent writes.
type patterns[T any] struct {
	exact    map[string]T
	prefixes map[string]T // "invoice." → value
	any      T
	hasAny   bool
}

// add registers v for pattern, refusing a malformed pattern and, wrapping
// ErrDuplicatePattern, one already registered.
func (p *patterns[T]) add(pattern string, v T) error {
	if err := checkPattern(pattern); err != nil {
		return err
	}
	if p.exact == nil {
		p.exact = make(map[string]T)
		p.prefixes = make(map[string]T)
	}
	var dup bool
	switch {
	case pattern == "*":
		dup = p.hasAny
		if !dup {
			p.any, p.hasAny = v, true
		}
	case strings.HasSuffix(pattern, ".*"):
		prefix := pattern[:len(pattern)-1]
		_, dup = p.prefixes[prefix]
		if !dup {
			p.prefixes[prefix] = v
		}
	default:
		_, dup = p.exact[pattern]
		if !dup {
			p.exact[pattern] = v
		}
	}
	if dup {
		return fmt.Errorf("%w: %q", ErrDuplicatePattern, pattern)
	}
	return nil
}

// match returns the value of the most specific pattern matching eventType.
func (p *patterns[T]) match(eventType string) (T, bool) {
	if v, ok := p.exact[eventType]; ok {
		return v, true
	}
	// Longest prefix first: walk back through the dots of the type.
	for i := len(eventType) - 1; i > 0; i-- {
		if eventType[i] != '.' {
			continue
		}
		if v, ok := p.prefixes[eventType[:i+1]]; ok && i+1 < len(eventType) {
			return v, true
		}
	}
	return p.any, p.hasAny
}

// typeMatches reports whether pattern, which checkPattern accepts,
// matches eventType as patterns.match would.
func typeMatches(pattern, eventType string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasSuffix(pattern, ".*"):
		prefix := pattern[:len(pattern)-1]
		return len(eventType) > len(prefix) && strings.HasPrefix(eventType, prefix)
	}
	return pattern == eventType
}

// checkPattern reports why pattern cannot be registered, or nil.
func checkPattern(pattern string) error {
	bad := func(why string) error {
		return fmt.Errorf("webhooks: invalid event-type pattern %q: %s; use an event type, \"prefix.*\" or \"*\"", pattern, why)
	}
	switch {
	case pattern == "*":
		return nil
	case pattern == "":
		return bad("it is empty")
	case len(pattern) > maxKeyBytes:
		return bad(fmt.Sprintf("it is longer than %d bytes, the longest event type stored", maxKeyBytes))
	case !utf8.ValidString(pattern):
		return bad("it is not valid UTF-8")
	case strings.TrimSpace(pattern) != pattern:
		return bad("it has white space around it, which no event type has")
	case strings.ContainsFunc(pattern, unicode.IsControl):
		return bad("it contains a control character")
	}
	name := strings.TrimSuffix(pattern, ".*")
	if name == "" || strings.Contains(name, "*") {
		return bad("'*' may only be the whole pattern or follow a final '.'")
	}
	return nil
}
