package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hookinbox/webhooks/internal/hmackey"
	"testing"
)

func signHex(key, content string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(content))
	return hex.EncodeToString(m.Sum(nil))
}

// TestHMACKeysBounded verifies requests under more secrets than the cache
// holds: each verifies, and the cache stays at its bound.
func TestHMACKeysBounded(t *testing.T) {
	t.Parallel()
	var current atomic.Value
	creds := CredentialResolverFunc(func(context.Context, Route) ([]Secret, error) {
		return []Secret{{ID: "rotating", Value: []byte(current.Load().(string))}}, nil
	})
	v, err := NewHMACVerifier(HMACOptions{SignedRequest: SignedRequest{SignatureHeader: "X-Sig", Event: EventSource{IDHeader: "X-Id"}}}, creds)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"a":1}`
	for i := range hmackey.MaxKeys + 100 {
		secret := "secret-" + strconv.Itoa(i)
		current.Store(secret)
		req := &Request{Header: http.Header{"X-Sig": {signHex(secret, body)}, "X-Id": {"e"}}, Body: []byte(body)}
		if _, err := v.Verify(context.Background(), Route{}, req); err != nil {
			t.Fatalf("secret %d: %v", i, err)
		}
	}
	if n := v.keys.Len(); n > hmackey.MaxKeys {
		t.Errorf("the cache holds %d keys, more than %d", n, hmackey.MaxKeys)
	}
}

// TestHMACKeysFollowTheValue changes a secret's value under the same ID:
// the new value verifies, the old one no longer does, and DecodeSecret
// runs once per value.
func TestHMACKeysFollowTheValue(t *testing.T) {
	t.Parallel()
	var current atomic.Value
	current.Store("whsec_" + base64.StdEncoding.EncodeToString([]byte("first-key")))
	creds := CredentialResolverFunc(func(context.Context, Route) ([]Secret, error) {
		return []Secret{{ID: "same-id", Value: []byte(current.Load().(string))}}, nil
	})
	var decodes atomic.Int32
	opts := HMACOptions{
		SignedRequest: SignedRequest{
			SignatureHeader: "X-Sig",
			Event:           EventSource{IDHeader: "X-Id"},
		},
		DecodeSecret: func(s []byte) ([]byte, error) {
			decodes.Add(1)
			return base64.StdEncoding.DecodeString(strings.TrimPrefix(string(s), "whsec_"))
		},
	}
	v, err := NewHMACVerifier(opts, creds)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"a":1}`
	verify := func(key string) error {
		req := &Request{Header: http.Header{"X-Sig": {signHex(key, body)}, "X-Id": {"e"}}, Body: []byte(body)}
		_, err := v.Verify(context.Background(), Route{}, req)
		return err
	}
	for range 3 {
		if err := verify("first-key"); err != nil {
			t.Fatal(err)
		}
	}
	current.Store("whsec_" + base64.StdEncoding.EncodeToString([]byte("second-key")))
	if err := verify("second-key"); err != nil {
		t.Fatal(err)
	}
	if err := verify("first-key"); err == nil {
		t.Error("the old value still verifies")
	}
	if n := decodes.Load(); n != 2 {
		t.Errorf("DecodeSecret ran %d times for two values", n)
	}
}

// TestHMACAgainstCryptoHMAC checks the pooled, keyed HMAC states and the
// payload digest against crypto/hmac and crypto/sha256: keys shorter and
// longer than a block, text of every length before and after the body,
// bodies around block boundaries, and a second secret when the first does
// not match.
func TestHMACAgainstCryptoHMAC(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for _, keyLen := range []int{1, 20, 32, 63, 64, 65, 100, 200} {
		for _, idLen := range []int{0, 1, 7, 40, 61, 62, 63, 64, 65, 130} {
			for _, bodyLen := range []int{255, 256, 257, 300, 319, 320, 321, 1000, 2048, 4099} {
				key := make([]byte, keyLen)
				body := make([]byte, bodyLen)
				for i := range key {
					key[i] = byte(r.Uint32())
				}
				for i := range body {
					body[i] = byte('a' + r.IntN(26))
				}
				id := strings.Repeat("i", idLen)
				opts := HMACOptions{
					SignedRequest: SignedRequest{
						SignatureHeader: "X-Sig",
						SignedContent:   "{body}",
						Event:           EventSource{IDHeader: "X-Id"},
					},
				}
				content := string(body)
				if idLen > 0 {
					opts.SignedContent = "{id}:{body}.{id}"
					content = id + ":" + content + "." + id
				}
				m := hmac.New(sha256.New, key)
				m.Write([]byte(content))
				sig := hex.EncodeToString(m.Sum(nil))
				for _, secrets := range [][]string{{string(key)}, {"another secret", string(key)}} {
					creds := CredentialResolverFunc(func(context.Context, Route) ([]Secret, error) {
						out := make([]Secret, len(secrets))
						for i, s := range secrets {
							out[i] = Secret{ID: strconv.Itoa(i), Value: []byte(s)}
						}
						return out, nil
					})
					v, err := NewHMACVerifier(opts, creds)
					if err != nil {
						t.Fatal(err)
					}
					id := id
					if id == "" {
						id = "e"
					}
					req := &Request{Header: http.Header{"X-Sig": {sig}, "X-Id": {id}}, Body: body}
					got, err := v.Verify(context.Background(), Route{}, req)
					if err != nil {
						t.Fatalf("key %d, id %d, body %d, %d secrets: %v", keyLen, idLen, bodyLen, len(secrets), err)
					}
					if got.EventID != id {
						t.Fatalf("key %d, id %d, body %d: event ID %q; want %q", keyLen, idLen, bodyLen, got.EventID, id)
					}
					bad := &Request{Header: http.Header{"X-Sig": {strings.Repeat("0", 64)}, "X-Id": {id}}, Body: body}
					if _, err := v.Verify(context.Background(), Route{}, bad); !errors.Is(err, ReasonBadSignature) {
						t.Fatalf("key %d, id %d, body %d: a wrong signature gives %v", keyLen, idLen, bodyLen, err)
					}
				}
			}
		}
	}
}
