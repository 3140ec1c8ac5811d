package webhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// BodySHA256IDPrefix starts every event ID derived from the body's SHA-256
// (the EventIDFromBody options of the token, basic-auth, Twilio, Ed25519 and
// unsigned verifiers): the ID is this prefix and the lower-case hex digest.
const BodySHA256IDPrefix = "sha256:"

// eventSource says where a verifier reads the event ID and type of a request
// it has found authentic. It backs the EventID*/EventType* options of the
// verifiers that are not HMAC verifiers.
type eventSource struct {
	idHeader   string
	idPath     string
	idFromBody bool
	typeHeader string
	typePath   string
}

// validate reports every problem with the source through bad. An ID source
// is required; the header and the path are exclusive, and the body digest
// may stand alone or back either of them up.
func (s eventSource) validate(bad func(format string, args ...any)) {
	switch {
	case s.idHeader == "" && s.idPath == "" && !s.idFromBody:
		bad("no event ID source: set EventIDHeader or EventIDPath, or EventIDFromBody to use the body's SHA-256")
	case s.idHeader != "" && s.idPath != "":
		bad("EventIDHeader and EventIDPath are both set: choose one event ID source")
	}
	if s.typeHeader != "" && s.typePath != "" {
		bad("EventTypeHeader and EventTypePath are both set: choose one event type source")
	}
	for _, h := range []struct{ field, name string }{{"EventIDHeader", s.idHeader}, {"EventTypeHeader", s.typeHeader}} {
		if h.name != "" && !isHeaderName(h.name) {
			bad("%s %q is not a valid header name", h.field, h.name)
		}
	}
	for _, p := range []struct{ field, path string }{{"EventIDPath", s.idPath}, {"EventTypePath", s.typePath}} {
		if p.path != "" && !validJSONPath(p.path) {
			bad("%s %q is not a dotted path: use keys separated by single dots, for example \"data.object.id\"", p.field, p.path)
		}
	}
}

// extract reads the event ID and type of an authentic request, parsing the
// body as JSON only when a path is configured. A header sent twice is
// malformed; an absent ID falls back to the body's digest when idFromBody
// is set.
func (s eventSource) extract(h http.Header, body []byte) (id, eventType string, rej *VerificationError) {
	doc := jsonDocument{body: body} // parsed on the first lookup, if any
	switch {
	case s.idHeader != "":
		id, rej = singleHeader(h, s.idHeader, ReasonMissingEventID)
	case s.idPath != "":
		id, rej = doc.lookup(s.idPath, ReasonMissingEventID, "event ID")
	}
	switch {
	case rej != nil && (rej.Reason != ReasonMissingEventID || !s.idFromBody):
		return "", "", rej
	case rej != nil || id == "":
		// Absent, or no header or path configured: validate made sure
		// idFromBody is set.
		id, rej = BodySHA256ID(body), nil
	}
	switch {
	case s.typeHeader != "":
		eventType, rej = singleHeader(h, s.typeHeader, ReasonMissingEventType)
	case s.typePath != "":
		eventType, rej = doc.lookup(s.typePath, ReasonMissingEventType, "event type")
	}
	if rej != nil {
		return "", "", rej
	}
	return id, eventType, nil
}

// verifiedMetadata is the Verification of an authentic request whose
// secret keyID matched: its event ID and type, and the body's digest.
func verifiedMetadata(events eventSource, req *Request, keyID string) (Verification, error) {
	id, eventType, rej := events.extract(req.Header, req.Body)
	if rej != nil {
		return Verification{}, rej
	}
	return Verification{
		EventID:       id,
		EventType:     eventType,
		PayloadSHA256: sha256.Sum256(req.Body),
		KeyID:         keyID,
	}, nil
}

// BodySHA256ID returns the event ID that the EventIDFromBody options derive
// from a body: BodySHA256IDPrefix followed by the hex SHA-256 of the body.
func BodySHA256ID(body []byte) string {
	sum := sha256.Sum256(body)
	return BodySHA256IDPrefix + hex.EncodeToString(sum[:])
}
