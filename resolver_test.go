package webhooks

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	var _ Resolver = r
	v := VerifierFunc(func(context.Context, Route, *Request) (Verification, error) { return Verification{EventID: "1"}, nil })
	require.NoError(t, r.Register("github", v))
	require.NoError(t, r.Register("demo", v))
	assert.ErrorIs(t, r.Register("github", v), ErrDuplicateProvider)
	assert.Error(t, r.Register("", v))
	for _, bad := range []string{"a/b", " github", "github ", ".", "..", "a\x00b", "a\nb", "\xff"} {
		assert.Error(t, r.Register(bad, v), "key %q", bad)
	}
	assert.Error(t, r.Register("nil", nil))

	got, ok := r.Lookup("github")
	require.True(t, ok)
	ver, err := got.Verify(context.Background(), Route{}, &Request{})
	require.NoError(t, err)
	assert.Equal(t, "1", ver.EventID)
	_, ok = r.Lookup("stripe")
	assert.False(t, ok)
	assert.Equal(t, []string{"demo", "github"}, r.Providers())

	assert.Panics(t, func() { r.MustRegister("github", v) })
	assert.NotPanics(t, func() { r.MustRegister("stripe", v) })
}

func TestSecretNeverPrints(t *testing.T) {
	t.Parallel()
	s := Secret{ID: "k1", Value: []byte("hunter2")}
	for _, out := range []string{s.String(), s.GoString(), s.LogValue().String()} {
		assert.NotContains(t, out, "hunter2")
		assert.Contains(t, out, "k1")
	}
	secrets, err := StaticSecrets("a", "", "b").Secrets(context.Background(), Route{Provider: "p"})
	require.NoError(t, err)
	require.Len(t, secrets, 3, "empty secrets are kept, so constructors can refuse them")
	assert.Equal(t, "static:0", secrets[0].ID)
	assert.Equal(t, "static:2", secrets[2].ID)
}

func TestVerificationErrorIs(t *testing.T) {
	t.Parallel()
	err := Reject(ReasonBadSignature, "no signature matched %d secrets", 2)
	assert.ErrorIs(t, err, ReasonBadSignature)
	assert.NotErrorIs(t, err, ReasonMissingSignature)
	assert.Equal(t, "webhooks: verification failed: bad_signature: no signature matched 2 secrets", err.Error())
}
