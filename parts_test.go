package webhooks_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
)

// The shared option parts are exported so that custom verifiers (and package
// providers) read metadata exactly as the built-in verifiers do. These tests
// use them on their own; every verifier's tests use them through options.

func TestEventSourceExtract(t *testing.T) {
	t.Parallel()
	body := `{"id":"evt_1","type":"invoice.paid","action":"sent"}`
	sum := sha256.Sum256([]byte(body))
	digestID := "sha256:" + hex.EncodeToString(sum[:])
	idFunc := func(_ *webhooks.Request, v webhooks.Verification) (string, error) {
		return "computed-" + v.EventType + "-" + v.KeyID, nil
	}
	tests := []struct {
		name             string
		src              webhooks.EventSource
		req              *webhooks.Request
		want             webhooks.Reason
		wantID, wantType string
	}{
		{"header", webhooks.EventSource{IDHeader: "X-Id", TypeHeader: "X-Type"}, request(body, "X-Id", "h1", "X-Type", "t"), "", "h1", "t"},
		{"paths", webhooks.EventSource{IDPath: "id", TypePath: "type"}, request(body), "", "evt_1", "invoice.paid"},
		{"suffix", webhooks.EventSource{IDPath: "id", TypePath: "type", TypeSuffixPath: "action"}, request(body), "", "evt_1", "invoice.paid.sent"},
		{"func sees the type and key", webhooks.EventSource{IDFunc: idFunc, TypePath: "type"}, request(body), "", "computed-invoice.paid-k1", "invoice.paid"},
		{"body digest alone", webhooks.EventSource{IDFromBody: true}, request(body), "", digestID, ""},
		{"body digest backs up a header", webhooks.EventSource{IDHeader: "X-Id", IDFromBody: true}, request(body), "", digestID, ""},
		{"header wins over the digest", webhooks.EventSource{IDHeader: "X-Id", IDFromBody: true}, request(body, "X-Id", "h1"), "", "h1", ""},
		{"body digest backs up a path", webhooks.EventSource{IDPath: "missing", IDFromBody: true}, request(body), "", digestID, ""},
		{"body digest backs up a func", webhooks.EventSource{IDFunc: func(*webhooks.Request, webhooks.Verification) (string, error) { return "", nil }, IDFromBody: true}, request(body), "", digestID, ""},
		{"optional type missing", webhooks.EventSource{IDPath: "id", TypeHeader: "X-Type", TypeOptional: true}, request(body), "", "evt_1", ""},
		{"missing header", webhooks.EventSource{IDHeader: "X-Id"}, request(body), webhooks.ReasonMissingEventID, "", ""},
		{"header twice", webhooks.EventSource{IDHeader: "X-Id", IDFromBody: true}, request(body, "X-Id", "1", "X-Id", "2"), webhooks.ReasonMalformedHeader, "", ""},
		{"missing type", webhooks.EventSource{IDPath: "id", TypeHeader: "X-Type"}, request(body), webhooks.ReasonMissingEventType, "", ""},
		{"not JSON", webhooks.EventSource{IDPath: "id"}, request("id=1"), webhooks.ReasonMalformedPayload, "", ""},
		{"func gives nothing", webhooks.EventSource{IDFunc: func(*webhooks.Request, webhooks.Verification) (string, error) { return "", nil }}, request(body), webhooks.ReasonMissingEventID, "", ""},
		{"func rejects", webhooks.EventSource{IDFunc: func(*webhooks.Request, webhooks.Verification) (string, error) {
			return "", webhooks.Reject(webhooks.ReasonMalformedPayload, "no")
		}}, request(body), webhooks.ReasonMalformedPayload, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, tt.src.Validate())
			got, err := tt.src.Extract(tt.req, webhooks.Verification{KeyID: "k1"}, webhooks.SignedParts{Body: true})
			if tt.want != "" {
				wantReason(t, err, tt.want)
				assert.Equal(t, webhooks.Verification{}, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantID, got.EventID)
			assert.Equal(t, tt.wantType, got.EventType)
			assert.Equal(t, "k1", got.KeyID, "the rest of the verification is kept")
			if tt.wantID == digestID {
				assert.Equal(t, sha256.Sum256(tt.req.Body), got.PayloadSHA256, "IDFromBody sets the digest it used")
			} else {
				assert.Zero(t, got.PayloadSHA256, "the body's digest is the Receiver's to compute")
			}
		})
	}

	// A digest the verifier computed is kept, and IDFromBody uses it.
	var semantic [sha256.Size]byte
	semantic[0] = 1
	got, err := webhooks.EventSource{IDFromBody: true}.Extract(request(body), webhooks.Verification{PayloadSHA256: semantic}, webhooks.SignedParts{Body: true})
	require.NoError(t, err)
	assert.Equal(t, semantic, got.PayloadSHA256)
	assert.Equal(t, "sha256:"+hex.EncodeToString(semantic[:]), got.EventID)

	// A plain error from IDFunc is returned wrapped, not as a rejection.
	down := errors.New("lookup down")
	_, err = webhooks.EventSource{IDFunc: func(*webhooks.Request, webhooks.Verification) (string, error) { return "", down }}.Extract(request(body), webhooks.Verification{}, webhooks.SignedParts{Body: true})
	assert.ErrorIs(t, err, down)
	var vErr *webhooks.VerificationError
	assert.False(t, errors.As(err, &vErr))
}

func TestEventSourceValidate(t *testing.T) {
	t.Parallel()
	fn := func(*webhooks.Request, webhooks.Verification) (string, error) { return "", nil }
	for name, tt := range map[string]struct {
		src  webhooks.EventSource
		want string
	}{
		"none":                {webhooks.EventSource{}, "no event ID source"},
		"header and path":     {webhooks.EventSource{IDHeader: "X-Id", IDPath: "id"}, "more than one of Event.IDHeader, Event.IDPath and Event.IDFunc"},
		"path and func":       {webhooks.EventSource{IDPath: "id", IDFunc: fn}, "more than one of"},
		"two types":           {webhooks.EventSource{IDFromBody: true, TypeHeader: "X-T", TypePath: "t"}, "Event.TypeHeader and Event.TypePath are both set"},
		"suffix alone":        {webhooks.EventSource{IDFromBody: true, TypeSuffixPath: "action"}, "Event.TypeSuffixPath is set without an event type"},
		"bad header":          {webhooks.EventSource{IDHeader: "X Id"}, `Event.IDHeader "X Id" is not a valid header name`},
		"bad type header":     {webhooks.EventSource{IDFromBody: true, TypeHeader: "X:T"}, `Event.TypeHeader "X:T"`},
		"bad path":            {webhooks.EventSource{IDPath: "a..b"}, `Event.IDPath "a..b" is not a dotted path`},
		"bad type path":       {webhooks.EventSource{IDFromBody: true, TypePath: "."}, `Event.TypePath "."`},
		"bad suffix path":     {webhooks.EventSource{IDFromBody: true, TypePath: "t", TypeSuffixPath: "a."}, `Event.TypeSuffixPath "a."`},
		"all of them at once": {webhooks.EventSource{IDHeader: "X Id", IDPath: "a..b", TypeSuffixPath: "x"}, "Event.TypeSuffixPath is set without"},
	} {
		err := tt.src.Validate()
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tt.want, name)
		}
	}
}

func TestTimestampSource(t *testing.T) {
	t.Parallel()
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	header := webhooks.TimestampSource{Header: "X-Ts"}
	raw, at, err := header.FromHeader(http.Header{"X-Ts": {" " + ts + " "}}, "")
	require.NoError(t, err)
	assert.Equal(t, ts, raw, "the raw value as sent, trimmed")
	assert.True(t, at.Equal(fixedNow))

	_, _, err = header.FromHeader(http.Header{}, "")
	wantReason(t, err, webhooks.ReasonMissingTimestamp)
	_, _, err = header.FromHeader(http.Header{"X-Ts": {ts, ts}}, "")
	wantReason(t, err, webhooks.ReasonMalformedHeader)
	_, _, err = header.FromHeader(http.Header{"X-Ts": {"yesterday"}}, "")
	wantReason(t, err, webhooks.ReasonMalformedTime)

	key := webhooks.TimestampSource{Key: "t", Format: webhooks.TimestampUnixMillis}
	_, at, err = key.FromHeader(nil, strconv.FormatInt(fixedNow.UnixMilli(), 10))
	require.NoError(t, err)
	assert.True(t, at.Equal(fixedNow))
	_, _, err = key.FromHeader(nil, "")
	wantReason(t, err, webhooks.ReasonMissingTimestamp)

	// A body timestamp is not read before authentication, and vice versa.
	path := webhooks.TimestampSource{Path: "meta.at", Format: webhooks.TimestampRFC3339}
	raw, at, err = path.FromHeader(http.Header{"X-Ts": {ts}}, ts)
	assert.NoError(t, err)
	assert.True(t, raw == "" && at.IsZero())
	at, err = path.FromBody([]byte(`{"meta":{"at":"2025-03-14T15:09:26Z"}}`))
	require.NoError(t, err)
	assert.True(t, at.Equal(fixedNow))
	_, err = path.FromBody([]byte(`{"meta":{}}`))
	wantReason(t, err, webhooks.ReasonMissingTimestamp)
	_, err = path.FromBody([]byte(`{"meta":{"at":"noon"}}`))
	wantReason(t, err, webhooks.ReasonMalformedTime)
	at, err = header.FromBody([]byte(`{}`))
	assert.NoError(t, err)
	assert.True(t, at.IsZero())

	// The window: DefaultTolerance by default, both ways, edges included.
	for offset, want := range map[time.Duration]webhooks.Reason{
		0: "", webhooks.DefaultTolerance: "", -webhooks.DefaultTolerance: "",
		webhooks.DefaultTolerance + time.Second: webhooks.ReasonTimestampExpired, -webhooks.DefaultTolerance - time.Second: webhooks.ReasonTimestampExpired,
	} {
		err := header.CheckWindow(fixedNow.Add(offset), fixedNow)
		if want == "" {
			assert.NoError(t, err, offset)
		} else {
			wantReason(t, err, want)
		}
	}
	narrow := webhooks.TimestampSource{Header: "X-Ts", Tolerance: time.Second}
	wantReason(t, narrow.CheckWindow(fixedNow.Add(-2*time.Second), fixedNow), webhooks.ReasonTimestampExpired)
	assert.NoError(t, webhooks.TimestampSource{}.CheckWindow(time.Time{}, fixedNow), "no source, no window")
}

func TestTimestampSourceValidate(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		src  webhooks.TimestampSource
		want string
	}{
		"two sources":        {webhooks.TimestampSource{Header: "X-Ts", Key: "t"}, "more than one of Timestamp.Header, Timestamp.Key and Timestamp.Path"},
		"three sources":      {webhooks.TimestampSource{Header: "X-Ts", Key: "t", Path: "ts"}, "choose one timestamp source"},
		"bad header":         {webhooks.TimestampSource{Header: "X Ts"}, `Timestamp.Header "X Ts" is not a valid header name`},
		"bad path":           {webhooks.TimestampSource{Path: "a..b"}, `Timestamp.Path "a..b" is not a dotted path`},
		"unknown format":     {webhooks.TimestampSource{Header: "X-Ts", Format: 7}, "Timestamp.Format TimestampFormat(7) is unknown"},
		"negative tolerance": {webhooks.TimestampSource{Header: "X-Ts", Tolerance: -time.Second}, "Timestamp.Tolerance -1s is negative"},
		"window, no source":  {webhooks.TimestampSource{Tolerance: time.Minute}, "without a timestamp source"},
		"format, no source":  {webhooks.TimestampSource{Format: webhooks.TimestampRFC3339}, "without a timestamp source"},
	} {
		err := tt.src.Validate()
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tt.want, name)
		}
	}
	for _, ok := range []webhooks.TimestampSource{{}, {Header: "X-Ts"}, {Key: "t", Tolerance: time.Hour}, {Path: "a.b", Format: webhooks.TimestampUnixMillis}} {
		assert.NoError(t, ok.Validate(), "%+v", ok)
	}
}

func TestHeaderFallbacks(t *testing.T) {
	t.Parallel()
	f := webhooks.HeaderFallbacks{"webhook-id": "Svix-Id", "Webhook-Signature": "svix-signature"}
	require.NoError(t, f.Validate("Webhook-Id", "Webhook-Signature", "Webhook-Timestamp", ""))

	h := http.Header{"Svix-Id": {"msg_1"}, "Webhook-Signature": {"v1,new"}, "Svix-Signature": {"v1,old"}}
	got := f.Apply(h)
	assert.Equal(t, "msg_1", got.Get("Webhook-Id"), "an absent header is read from its fallback")
	assert.Equal(t, "v1,new", got.Get("Webhook-Signature"), "a present header is read by its own name only")
	assert.Empty(t, h.Get("Webhook-Id"), "the request's header is not modified")

	present := http.Header{"Webhook-Id": {"msg_2"}}
	got = f.Apply(present)
	got.Set("X-Probe", "1")
	assert.Equal(t, "1", present.Get("X-Probe"), "nothing to apply: the same header is returned, not a copy")
	assert.Nil(t, webhooks.HeaderFallbacks(nil).Apply(nil))

	for name, tt := range map[string]struct {
		f    webhooks.HeaderFallbacks
		want string
	}{
		"not read":          {webhooks.HeaderFallbacks{"X-Other": "X-Alt"}, `fallback for "X-Other", which is not a header these options read`},
		"bad name":          {webhooks.HeaderFallbacks{"Webhook-Id": "Svix Id"}, `HeaderFallbacks["Webhook-Id"] "Svix Id" is not a valid header name`},
		"onto a read one":   {webhooks.HeaderFallbacks{"Webhook-Id": "webhook-signature"}, "which is itself a header these options read"},
		"two spellings":     {webhooks.HeaderFallbacks{"Webhook-Id": "A-Id", "webhook-id": "B-Id"}, `two fallbacks for "Webhook-Id"`},
		"reported together": {webhooks.HeaderFallbacks{"X-Other": "X-Alt", "Webhook-Id": "Svix Id"}, "is not a valid header name"},
	} {
		err := tt.f.Validate("Webhook-Id", "Webhook-Signature")
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tt.want, name)
		}
	}
}
