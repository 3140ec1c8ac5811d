package providers

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/hookinbox/webhooks"
)

// RedactedValue replaces a credential in the payload an entry stores
// (webhooks.Verification.Payload): Figma's passcode, Microsoft Graph's
// clientState and validation tokens, Mailgun's signature.signature, SNS's
// Signature and Slack's verification token are stored as this JSON string,
// after the request verified. The rest of the body is kept byte for byte.
const RedactedValue = "[redacted]"

// redactedJSON is RedactedValue as a JSON value.
var redactedJSON = []byte(`"` + RedactedValue + `"`)

// credentialPaths are the dotted paths of a JSON body at which a scheme
// carries credentials; a "*" segment stands for every item of an array.
// Keys are matched as encoding/json matches them, without regard to case.
type credentialPaths [][]string

// pathsOf compiles dotted paths.
func pathsOf(paths ...string) credentialPaths {
	out := make(credentialPaths, len(paths))
	for i, p := range paths {
		out[i] = strings.Split(p, ".")
	}
	return out
}

// redact sets v.Payload to the body with every value at the paths
// replaced by RedactedValue, when the body holds one; an entry's IDs
// derived from the body are then derived from the payload (withDigest
// sets v.PayloadSHA256 to its digest). A body whose credentials cannot be
// found (it is not JSON) is refused: it cannot be stored without them.
func (c credentialPaths) redact(body []byte, v *webhooks.Verification, withDigest bool) error {
	out, err := redactJSON(body, c)
	if err != nil {
		return webhooks.Reject(webhooks.ReasonMalformedPayload, "the body is not JSON, so its credentials cannot be kept out of the inbox")
	}
	if out != nil {
		v.Payload = out
		if withDigest {
			v.PayloadSHA256 = sha256.Sum256(out)
		}
	}
	return nil
}

// errNotJSON is redactJSON's error for a body that is not one JSON value.
var errNotJSON = errors.New("providers: the body is not a JSON value")

// redactJSON returns a copy of body with each value at one of the paths,
// whatever its kind, replaced by the JSON string RedactedValue, or nil
// when there is none. Only the objects and arrays on the way to a path are
// walked. body is never modified, and the copy shares no memory with it.
func redactJSON(body []byte, paths credentialPaths) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var spans [][2]int64
	if err := walkRedact(dec, nil, paths, &spans); err != nil {
		return nil, errNotJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotJSON // more than one value
	}
	if len(spans) == 0 {
		return nil, nil
	}
	out := make([]byte, 0, len(body)+len(spans)*len(redactedJSON))
	at := int64(0)
	for _, s := range spans {
		out = append(out, body[at:s[0]]...)
		out = append(out, redactedJSON...)
		at = s[1]
	}
	return append(out, body[at:]...), nil
}

// walkRedact reads one JSON value at path, recording the byte spans of the
// values at the wanted paths in order.
func walkRedact(dec *json.Decoder, path []string, want credentialPaths, spans *[][2]int64) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if err := walkMember(dec, append(slices.Clip(path), key), want, spans); err != nil {
				return err
			}
		}
	case '[':
		for dec.More() {
			if err := walkMember(dec, append(slices.Clip(path), "*"), want, spans); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// walkMember reads the value of an object member or array item at at:
// recorded when a path is at, walked when one goes through it, skipped
// otherwise.
func walkMember(dec *json.Decoder, at []string, want credentialPaths, spans *[][2]int64) error {
	wanted := slices.ContainsFunc(want, func(w []string) bool { return pathFold(w, at) })
	if !wanted && prefixOfWanted(at, want) {
		return walkRedact(dec, at, want, spans)
	}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if wanted {
		// RawMessage holds the value's bytes exactly as they are in the
		// body, which ends where the decoder now is.
		end := dec.InputOffset()
		*spans = append(*spans, [2]int64{end - int64(len(raw)), end})
	}
	return nil
}
