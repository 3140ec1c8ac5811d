package providers

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// SNS message types.
const (
	SNSNotification             = "Notification"
	SNSSubscriptionConfirmation = "SubscriptionConfirmation"
	SNSUnsubscribeConfirmation  = "UnsubscribeConfirmation"
)

// SNSOptions configures an Amazon SNS verifier.
type SNSOptions struct {
	// Keys supplies the certificate named by each message's
	// SigningCertURL. Required: use NewCertificateFetcher with
	// SNSCertificateHosts, SNSCertificatePath and SNSCertificateNames
	// (New does).
	Keys KeySource
	// Confirm receives SubscriptionConfirmation and
	// UnsubscribeConfirmation messages once verified (see
	// Config.Confirm). Defaults to nil.
	Confirm func(ctx context.Context, route webhooks.Route, c Confirmation) error
	// Tolerance, when set, is how far a message's Timestamp may lie from
	// the clock. Defaults to 0: no window, since SNS retries a delivery
	// for as long as its delivery policy says (hours, with a custom one)
	// with the original signed Timestamp; the signed MessageId stops
	// replays within the inbox's memory.
	Tolerance time.Duration
	// Clock tells the time. Defaults to the system clock.
	Clock webhooks.Clock
}

// snsVerifier verifies Amazon SNS HTTP(S) deliveries. The credentials are
// the topic ARNs the route accepts: anyone can create a topic and
// subscribe an endpoint to it, and SNS signs such messages too, so the
// topic is what says the message is for this host.
type snsVerifier struct {
	opts   SNSOptions
	topics webhooks.CredentialResolver
	clock  webhooks.Clock
}

// NewSNSVerifier returns a verifier of Amazon SNS messages for the topic
// ARNs topics supplies (Secret.Value is an ARN such as
// "arn:aws:sns:us-east-1:123456789012:orders").
//
// It checks, in this order: the message's syntax and signature version
// (1: SHA1withRSA, 2: SHA256withRSA), that its TopicArn is one of the
// route's, then fetches the certificate at SigningCertURL through Keys
// (which refuses URLs outside its rules without fetching, and certificates
// that are not issued to SNS under a trusted root) and verifies the
// signature of the documented string to sign. A Notification
// becomes an event whose ID is the signed MessageId and whose type is
// "Notification"; a SubscriptionConfirmation or UnsubscribeConfirmation is
// handed to Confirm and answered 200, never stored, and its SubscribeURL
// is never visited by the verifier.
//
// Source: https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
// and https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message-verify-message-signature.html
// (the fields of the string to sign per type, SignatureVersion 1 and 2,
// https certificates from SNS, rejecting unexpected TopicArns).
func NewSNSVerifier(opts SNSOptions, topics webhooks.CredentialResolver) (webhooks.Verifier, error) {
	var p problemList
	if opts.Keys == nil {
		p.bad("Keys is nil: use providers.NewCertificateFetcher with providers.SNSCertificateHosts, SNSCertificatePath and SNSCertificateNames")
	}
	if opts.Tolerance < 0 {
		p.bad("Tolerance is negative")
	}
	p = append(p, webhooks.CheckCredentials(topics, "topic ARN", func(v []byte) error {
		if !strings.HasPrefix(string(v), "arn:") {
			return errors.New("it is not an ARN (arn:aws:sns:<region>:<account>:<topic>)")
		}
		return nil
	}))
	if err := optionsError("SNS", p...); err != nil {
		return nil, err
	}
	clock := opts.Clock
	if clock == nil {
		clock = webhooks.SystemClock{}
	}
	return &snsVerifier{opts: opts, topics: topics, clock: clock}, nil
}

// snsMessage is an SNS HTTP delivery body.
type snsMessage struct {
	Type             string  `json:"Type"`
	MessageID        string  `json:"MessageId"`
	Token            string  `json:"Token"`
	TopicArn         string  `json:"TopicArn"`
	Subject          *string `json:"Subject"`
	Message          string  `json:"Message"`
	Timestamp        string  `json:"Timestamp"`
	SignatureVersion string  `json:"SignatureVersion"`
	Signature        string  `json:"Signature"`
	SigningCertURL   string  `json:"SigningCertURL"`
	SubscribeURL     string  `json:"SubscribeURL"`
}

// snsFields are the keys of an SNS message, each of which must appear once.
var snsFields = []string{"Type", "MessageId", "Token", "TopicArn", "Subject", "Message", "Timestamp",
	"SignatureVersion", "Signature", "SigningCertURL", "SubscribeURL", "UnsubscribeURL"}

// SNSStringToSign returns the string an SNS message's signature covers,
// as documented for its Type; ok is false for an unknown type.
func SNSStringToSign(body []byte) (s string, ok bool) {
	var m snsMessage
	if json.Unmarshal(body, &m) != nil {
		return "", false
	}
	return m.stringToSign()
}

func (m *snsMessage) stringToSign() (string, bool) {
	var b strings.Builder
	field := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	switch m.Type {
	case SNSNotification:
		field("Message", m.Message)
		field("MessageId", m.MessageID)
		if m.Subject != nil {
			field("Subject", *m.Subject)
		}
		field("Timestamp", m.Timestamp)
		field("TopicArn", m.TopicArn)
		field("Type", m.Type)
	case SNSSubscriptionConfirmation, SNSUnsubscribeConfirmation:
		field("Message", m.Message)
		field("MessageId", m.MessageID)
		field("SubscribeURL", m.SubscribeURL)
		field("Timestamp", m.Timestamp)
		field("Token", m.Token)
		field("TopicArn", m.TopicArn)
		field("Type", m.Type)
	default:
		return "", false
	}
	return b.String(), true
}

func (v *snsVerifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if len(req.Body) == 0 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonEmptyBody, "the request body is empty")
	}
	var m snsMessage
	if json.Unmarshal(req.Body, &m) != nil {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body is not an SNS message")
	}
	toSign, ok := m.stringToSign()
	switch {
	case !ok:
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "the SNS message Type is unknown")
	case m.Signature == "":
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMissingSignature, "the SNS message has no Signature")
	case m.MessageID == "" || m.TopicArn == "" || m.SigningCertURL == "":
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "the SNS message lacks MessageId, TopicArn or SigningCertURL")
	}
	var (
		hash    crypto.Hash
		digest  []byte
		content = []byte(toSign)
	)
	switch m.SignatureVersion {
	case "1":
		sum := sha1.Sum(content)
		hash, digest = crypto.SHA1, sum[:]
	case "2":
		sum := sha256.Sum256(content)
		hash, digest = crypto.SHA256, sum[:]
	default:
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "the SNS SignatureVersion is neither 1 nor 2")
	}
	sig, err := sigsyntax.DecodeBase64(m.Signature)
	if err != nil {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "the SNS Signature is not base64")
	}
	at, timeOK := sigsyntax.ParseTimestamp(m.Timestamp, sigsyntax.RFC3339)
	if !timeOK {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedTime, "the SNS Timestamp is not RFC 3339")
	}

	// The topic first: a message for another topic is refused before any
	// certificate is fetched.
	topics, err := v.topics.Secrets(ctx, route)
	if err != nil {
		return webhooks.Verification{}, fmt.Errorf("webhooks: SNS verifier: resolving topics: %w", err)
	}
	keyID, tried := "", 0
	for _, t := range topics {
		if len(t.Value) == 0 {
			continue
		}
		tried++
		if constantTimeEqual(t.Value, []byte(m.TopicArn)) && keyID == "" {
			keyID = t.ID
		}
	}
	if tried == 0 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonNoCredentials, "no topic ARN is configured for this route")
	}
	if keyID == "" {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "the message's TopicArn is not one this route accepts")
	}
	key, err := v.opts.Keys.PublicKey(ctx, m.SigningCertURL)
	if err != nil {
		if vErr, ok := errors.AsType[*webhooks.VerificationError](err); ok {
			return webhooks.Verification{}, vErr
		}
		return webhooks.Verification{}, fmt.Errorf("webhooks: SNS verifier: %w", err)
	}
	pub, ok := key.(*rsa.PublicKey)
	if !ok {
		return webhooks.Verification{}, errors.New("webhooks: SNS verifier: the signing certificate's key is not RSA")
	}
	if rsa.VerifyPKCS1v15(pub, hash, digest, sig) != nil {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "the SNS Signature does not verify")
	}
	// The signature covers the fields as encoding/json read them (keys
	// matched without regard to case, the last kept); a body that gives
	// one twice could be read otherwise by the host, so it is refused.
	if duplicateField(req.Body, snsFields...) {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "the SNS message gives one of its fields twice")
	}
	if v.opts.Tolerance > 0 {
		window := webhooks.TimestampSource{Path: "Timestamp", Format: webhooks.TimestampRFC3339, Tolerance: v.opts.Tolerance}
		if err := window.CheckWindow(at, v.clock.Now()); err != nil {
			return webhooks.Verification{}, err
		}
	}
	out := webhooks.Verification{
		EventID:    m.MessageID,
		EventType:  m.Type,
		OccurredAt: at,
		KeyID:      keyID,
	}
	if m.Type == SNSNotification {
		// Stored without its Signature, with which anyone who reads the
		// inbox could deliver the message again wherever its topic is
		// accepted.
		if err := snsSecrets.redact(req.Body, &out, false); err != nil {
			return webhooks.Verification{}, err
		}
		return out, nil
	}
	c := Confirmation{Provider: "sns", Type: m.Type, Topic: m.TopicArn, URL: m.SubscribeURL, Token: m.Token, MessageID: m.MessageID}
	switch {
	case v.opts.Confirm != nil:
		if err := v.opts.Confirm(ctx, route, c); err != nil {
			return webhooks.Verification{}, webhooks.HookError("SNS verifier: confirming a subscription", err)
		}
	case m.Type == SNSSubscriptionConfirmation:
		return webhooks.Verification{}, errors.New("webhooks: SNS verifier: a SubscriptionConfirmation arrived and no Confirm is configured; set Config.Confirm to confirm it (SNS sends it again)")
	}
	out.Handshake = &webhooks.Response{StatusCode: http.StatusOK}
	return out, nil
}

// snsSecrets is where an SNS message carries its signature.
var snsSecrets = pathsOf("Signature")

// Format prints the verifier's type only, whatever the verb.
func (v *snsVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "snsVerifier") }

// ConfirmSNSSubscription confirms a subscription by visiting its
// SubscribeURL with client, after checking that the URL is https on one
// of hosts (nil: SNSCertificateHosts, sns.<region>.amazonaws.com and its
// China form). Call it from
// Config.Confirm for the topics the host means to subscribe to.
func ConfirmSNSSubscription(ctx context.Context, client *http.Client, c Confirmation, hosts []string) error {
	if hosts == nil {
		hosts = SNSCertificateHosts
	}
	if c.Type != SNSSubscriptionConfirmation || !hostAllowed(c.URL, hosts) {
		return errors.New("webhooks: not an SNS SubscriptionConfirmation with an https SubscribeURL on an allowed host")
	}
	if client == nil {
		return errors.New("webhooks: ConfirmSNSSubscription needs an *http.Client")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("webhooks: confirming an SNS subscription: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webhooks: confirming an SNS subscription: status %d", resp.StatusCode)
	}
	return nil
}
