package providers

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Credentials carried in a JSON body (Mailgun's signature object, Figma's
// passcode, Microsoft Graph's clientState) must appear once: JSON parsers
// disagree on which of two equal keys wins (encoding/json takes the last,
// others the first), so a body that gives one twice could be read one way
// here and another way by the host's code. Such a body is refused, as a
// header sent twice is.

// duplicateField reports whether the JSON body gives a key at one of the
// dotted paths more than once in the same object; a "*" segment stands for
// every item of an array. Keys are compared as encoding/json matches them
// to struct fields, without regard to case (so "Token" and "token" are the
// same key, and encoding/json would read the last of them). Only the
// objects on the way to a path are walked, and only keys that lead to a
// path are compared, so the cost is linear in the body. A body that is not
// JSON reports false: the caller's own parsing refuses it.
func duplicateField(body []byte, paths ...string) bool {
	want := make([][]string, len(paths))
	for i, p := range paths {
		want[i] = strings.Split(p, ".")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dup, _ := walkDuplicates(dec, nil, want)
	return dup
}

// walkDuplicates reads one JSON value at path.
func walkDuplicates(dec *json.Decoder, path []string, want [][]string) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return false, nil
	}
	dup := false
	switch d {
	case '{':
		seen := make([]bool, len(want)) // the wanted paths met in this object
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return dup, err
			}
			key, _ := k.(string)
			at := append(slices.Clip(path), key)
			for i, w := range want {
				if pathFold(w, at) {
					dup = dup || seen[i]
					seen[i] = true
				}
			}
			if !prefixOfWanted(at, want) {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return dup, err
				}
				continue
			}
			d, err := walkDuplicates(dec, at, want)
			dup = dup || d
			if err != nil {
				return dup, err
			}
		}
	case '[':
		for dec.More() {
			d, err := walkDuplicates(dec, append(slices.Clip(path), "*"), want)
			dup = dup || d
			if err != nil {
				return dup, err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return dup, err
}

// pathFold reports whether the path at is w, its keys compared as
// encoding/json compares keys with field names.
func pathFold(w, at []string) bool {
	return len(w) == len(at) && slices.EqualFunc(w, at, strings.EqualFold)
}

// prefixOfWanted reports whether a wanted path goes through at.
func prefixOfWanted(at []string, want [][]string) bool {
	return slices.ContainsFunc(want, func(w []string) bool { return len(w) > len(at) && pathFold(w[:len(at)], at) })
}
