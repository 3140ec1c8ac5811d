package webhookstest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"time"
)

// SNSKey is an RSA key and a certificate that sign Amazon SNS messages in
// tests: the certificate is issued to sns.amazonaws.com, as SNS's are, by
// a root of the key's own. Serve CertificatePEM from an httptest TLS
// server at a path of SNS's shape (providers.SNSCertificatePath, such as
// /SimpleNotificationService-test.pem), set CertURL to it, and configure
// the verifier with the server's host in Config.KeyHosts, its client in
// Config.HTTPClient and Roots in Config.KeyRoots.
type SNSKey struct {
	Key *rsa.PrivateKey
	// CertificatePEM is the PEM certificate of Key's public key, alone,
	// as SNS serves it.
	CertificatePEM []byte
	// Roots holds the root that issued the certificate.
	Roots *x509.CertPool
	// CertURL is written into SigningCertURL. Set it before signing.
	CertURL string
	// TopicARN is the topic messages are published to.
	TopicARN string
	// SignatureVersion is "1" (SHA1withRSA) or "2" (SHA256withRSA, the
	// default when empty).
	SignatureVersion string
}

// NewSNSKey generates a 2048-bit key, a root and a certificate of the key
// for sns.amazonaws.com, valid for a day.
func NewSNSKey(topicARN string) (*SNSKey, error) {
	ca, err := NewCertificateAuthority("hookinbox test SNS root")
	if err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	certPEM, err := ca.Issue(&key.PublicKey, "sns.amazonaws.com")
	if err != nil {
		return nil, err
	}
	return &SNSKey{Key: key, TopicARN: topicARN, CertificatePEM: certPEM, Roots: ca.Pool()}, nil
}

// CertificateAuthority issues certificates in tests, under a root of its
// own (see SNSKey).
type CertificateAuthority struct {
	cert *x509.Certificate
	key  *rsa.PrivateKey
	// IssuerURL, when set, is written into the certificates it issues as
	// their Authority Information Access issuer URL.
	IssuerURL string
}

// NewCertificateAuthority generates a root valid for a day.
func NewCertificateAuthority(name string) (*CertificateAuthority, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CertificateAuthority{cert: cert, key: key}, nil
}

// Pool returns a pool holding the authority's certificate, to trust it as
// a root.
func (ca *CertificateAuthority) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// DER returns the authority's certificate in DER, as an issuer URL serves
// it.
func (ca *CertificateAuthority) DER() []byte { return ca.cert.Raw }

// Issue returns a PEM certificate of pub for the DNS name, valid for a
// day, signed by the authority.
func (ca *CertificateAuthority) Issue(pub *rsa.PublicKey, dnsName string) ([]byte, error) {
	der, err := ca.issue(pub, dnsName, false)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// Intermediate returns an authority whose certificate this one signs.
func (ca *CertificateAuthority) Intermediate(name string) (*CertificateAuthority, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := ca.issue(&key.PublicKey, name, true)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CertificateAuthority{cert: cert, key: key}, nil
}

func (ca *CertificateAuthority) issue(pub *rsa.PublicKey, name string, isCA bool) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if isCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	} else {
		tmpl.DNSNames = []string{name}
	}
	if ca.IssuerURL != "" {
		tmpl.IssuingCertificateURL = []string{ca.IssuerURL}
	}
	return x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
}

// SNSMessage is an SNS message for SNSKey.Sign. Empty fields get values:
// MessageId a fresh UUID, Timestamp now, TopicArn the key's.
type SNSMessage struct {
	Type         string  `json:"Type"`
	MessageID    string  `json:"MessageId"`
	Token        string  `json:"Token,omitempty"`
	TopicArn     string  `json:"TopicArn"`
	Subject      *string `json:"Subject,omitempty"`
	Message      string  `json:"Message"`
	SubscribeURL string  `json:"SubscribeURL,omitempty"`
	Timestamp    string  `json:"Timestamp"`
}

// Sign returns the JSON body SNS posts for m, signed with the key as the
// documented string to sign says.
func (k *SNSKey) Sign(m SNSMessage) ([]byte, error) {
	if k.CertURL == "" {
		return nil, errors.New("webhookstest: SNSKey.CertURL is not set")
	}
	if m.Type == "" {
		m.Type = "Notification"
	}
	if m.MessageID == "" {
		m.MessageID = randomUUID()
	}
	if m.TopicArn == "" {
		m.TopicArn = k.TopicARN
	}
	if m.Timestamp == "" {
		m.Timestamp = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	}
	var b strings.Builder
	field := func(name, value string) { b.WriteString(name + "\n" + value + "\n") }
	field("Message", m.Message)
	field("MessageId", m.MessageID)
	if m.Type == "Notification" {
		if m.Subject != nil {
			field("Subject", *m.Subject)
		}
	} else {
		field("SubscribeURL", m.SubscribeURL)
	}
	field("Timestamp", m.Timestamp)
	if m.Type != "Notification" {
		field("Token", m.Token)
	}
	field("TopicArn", m.TopicArn)
	field("Type", m.Type)
	version := k.SignatureVersion
	if version == "" {
		version = "2"
	}
	var (
		sig []byte
		err error
	)
	if version == "1" {
		sum := sha1.Sum([]byte(b.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.Key, crypto.SHA1, sum[:])
	} else {
		sum := sha256.Sum256([]byte(b.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.Key, crypto.SHA256, sum[:])
	}
	if err != nil {
		return nil, err
	}
	out := struct {
		SNSMessage
		SignatureVersion string `json:"SignatureVersion"`
		Signature        string `json:"Signature"`
		SigningCertURL   string `json:"SigningCertURL"`
		UnsubscribeURL   string `json:"UnsubscribeURL,omitempty"`
	}{m, version, b64(sig), k.CertURL, ""}
	if m.Type == "Notification" {
		out.UnsubscribeURL = "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=" + m.TopicArn + ":" + randomUUID()
	}
	return json.Marshal(out)
}

// snsSign posts the sample as an SNS Notification.
func snsSign(s *Signer, d *Delivery, m Message) error {
	if s.sns == nil {
		return errors.New("webhookstest: sns signs with a certificate: use NewKeySigner")
	}
	subject := "Order shipped"
	body, err := s.sns.Sign(SNSMessage{Type: "Notification", MessageID: m.ID, Subject: &subject, Message: string(d.Body), Timestamp: m.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z")})
	if err != nil {
		return err
	}
	d.Body = body
	d.EventType = "Notification"
	if sig, ok := bodyValue(body, "Signature"); ok {
		d.Credentials = append(d.Credentials, sig)
	}
	setSNSHeaders(d, "Notification", m.ID, s.sns.TopicARN)
	return nil
}

func setSNSHeaders(d *Delivery, typ, id, topic string) {
	d.Header.Set("Content-Type", "text/plain; charset=UTF-8")
	d.Header.Set("X-Amz-Sns-Message-Type", typ)
	d.Header.Set("X-Amz-Sns-Message-Id", id)
	d.Header.Set("X-Amz-Sns-Topic-Arn", topic)
}
