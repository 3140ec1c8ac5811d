package storetest

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

var replayCases = []replayCase{
	{"RegisterNewSeenConflict", testRegisterNewSeenConflict},
	{"RegisterNotExtended", testRegisterNotExtended},
	{"RegisterAfterExpiry", testRegisterAfterExpiry},
	{"RegisterConcurrent", testRegisterConcurrent},
	{"RegisterConcurrentConflictingDigests", testRegisterConcurrentConflictingDigests},
	{"RegisterKeysAreExact", testRegisterKeysAreExact},
	{"RegisterCanceledContext", testRegisterCanceledContext},
}

var (
	digestA = sha256.Sum256([]byte("payload A"))
	digestB = sha256.Sum256([]byte("payload B"))
)

// replayKey is a registration of key k for provider "acme", tenant "t1",
// to be completed by registration.
func replayKey(k string) webhooks.ReplayRegistration {
	return webhooks.ReplayRegistration{Provider: "acme", Key: k}
}

// registration is k with a digest and times.
func registration(k webhooks.ReplayRegistration, digest [sha256.Size]byte, now, expiresAt time.Time) webhooks.ReplayRegistration {
	k.PayloadSHA256, k.Now, k.ExpiresAt = digest, now, expiresAt
	return k
}

// wantRegister requires Register(key, digest, now, expiresAt) to report want.
func wantRegister(t *testing.T, s webhooks.ReplayStore, k webhooks.ReplayRegistration, digest [sha256.Size]byte, now, expiresAt time.Time, want webhooks.ReplayOutcome, why string) {
	t.Helper()
	got, err := s.Register(t.Context(), registration(k, digest, now, expiresAt))
	if err != nil {
		t.Fatalf("Register(%s/%s, now=%s): %v; want no error", k.Provider, k.Key, fmtTime(now), err)
	}
	if got != want {
		t.Errorf("Register(%s/%s, digest %x…, now=%s, expiresAt=%s) = %v; want %v: %s",
			k.Provider, k.Key, digest[:4], fmtTime(now), fmtTime(expiresAt), got, want, why)
	}
}

func testRegisterNewSeenConflict(t *testing.T, s webhooks.ReplayStore) {
	k, exp := replayKey("r1"), at(time.Hour)
	wantRegister(t, s, k, digestA, base, exp, webhooks.ReplayNew, "the key was never registered")
	wantRegister(t, s, k, digestA, at(time.Second), exp, webhooks.ReplaySeen, "the key is registered with this digest")
	wantRegister(t, s, k, digestB, at(2*time.Second), exp, webhooks.ReplayConflict, "the key is registered with another digest")
	wantRegister(t, s, k, digestA, at(3*time.Second), exp, webhooks.ReplaySeen, "a conflict must not replace the registered digest")
	wantRegister(t, s, k, digestB, at(4*time.Second), exp, webhooks.ReplayConflict, "a conflict must not replace the registered digest")
}

func testRegisterNotExtended(t *testing.T, s webhooks.ReplayStore) {
	k := replayKey("r1")
	wantRegister(t, s, k, digestA, base, at(10*time.Second), webhooks.ReplayNew, "the key was never registered")
	wantRegister(t, s, k, digestA, at(5*time.Second), at(time.Hour), webhooks.ReplaySeen, "the registration is valid until base+10s")
	wantRegister(t, s, k, digestB, at(6*time.Second), at(time.Hour), webhooks.ReplayConflict, "the registration is valid until base+10s")
	wantRegister(t, s, k, digestA, at(10*time.Second), at(time.Hour), webhooks.ReplayNew,
		"the registration expired at base+10s: Seen and Conflict must not extend it")
}

func testRegisterAfterExpiry(t *testing.T, s webhooks.ReplayStore) {
	k, exp := replayKey("r1"), at(10*time.Second)
	wantRegister(t, s, k, digestA, base, exp, webhooks.ReplayNew, "the key was never registered")
	wantRegister(t, s, k, digestA, exp.Add(-time.Microsecond), exp, webhooks.ReplaySeen, "the registration is valid for 1µs more")
	// Expired when expiresAt <= now; the key is registered again, here with
	// another digest, which then holds.
	wantRegister(t, s, k, digestB, exp, at(time.Minute), webhooks.ReplayNew, "the registration expired (expiresAt <= now)")
	wantRegister(t, s, k, digestB, at(30*time.Second), at(time.Hour), webhooks.ReplaySeen, "the key was registered again with this digest")
	wantRegister(t, s, k, digestA, at(30*time.Second), at(time.Hour), webhooks.ReplayConflict, "the new registration has the other digest")
	wantRegister(t, s, k, digestA, at(2*time.Minute), at(time.Hour), webhooks.ReplayNew, "the second registration expired at base+1m")
}

func testRegisterConcurrent(t *testing.T, s webhooks.ReplayStore) {
	const n = 50
	k := replayKey("r1")
	outcomes := make([]webhooks.ReplayOutcome, n)
	runConcurrently(n, func(i int) {
		o, err := s.Register(t.Context(), registration(k, digestA, base, at(time.Hour)))
		if err != nil {
			t.Errorf("concurrent Register: %v; want no error", err)
		}
		outcomes[i] = o
	})
	if c := countOutcomes(outcomes); c[webhooks.ReplayNew] != 1 || c[webhooks.ReplaySeen] != n-1 {
		t.Errorf("%d concurrent Register of one key: outcomes %v; want exactly 1 new and %d seen", n, c, n-1)
	}
	wantRegister(t, s, k, digestA, at(time.Second), at(time.Hour), webhooks.ReplaySeen, "the key was registered")
}

func testRegisterConcurrentConflictingDigests(t *testing.T, s webhooks.ReplayStore) {
	const n = 40
	k := replayKey("r1")
	digests := [2][sha256.Size]byte{digestA, digestB}
	outcomes := make([]webhooks.ReplayOutcome, n)
	runConcurrently(n, func(i int) {
		o, err := s.Register(t.Context(), registration(k, digests[i%2], base, at(time.Hour)))
		if err != nil {
			t.Errorf("concurrent Register: %v; want no error", err)
		}
		outcomes[i] = o
	})
	winner := -1
	for i, o := range outcomes {
		if o == webhooks.ReplayNew {
			if winner >= 0 {
				t.Fatalf("concurrent Register of one key: calls %d and %d both reported new; want exactly 1", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("concurrent Register of one key: none reported new; want exactly 1")
	}
	for i, o := range outcomes {
		want := webhooks.ReplayConflict
		if i%2 == winner%2 {
			want = webhooks.ReplaySeen
		}
		if i != winner && o != want {
			t.Errorf("concurrent Register #%d (digest %d; digest %d registered) = %v; want %v", i, i%2, winner%2, o, want)
		}
	}
}

func testRegisterKeysAreExact(t *testing.T, s webhooks.ReplayStore) {
	keys := []webhooks.ReplayRegistration{
		{Provider: "acme", Key: "r1"},
		{Provider: "Acme", Key: "r1"},
		{Provider: "acme", Key: "R1"},
		{Provider: "acme", Key: "r1 "},
		{Provider: "other", Key: "r1"},
		{Provider: "acme/t1", Key: "r1"},
	}
	for i := range 20 {
		keys = append(keys, replayKey(fmt.Sprintf("bulk-%02d", i)))
	}
	for _, k := range keys {
		wantRegister(t, s, k, digestA, base, at(time.Hour), webhooks.ReplayNew, "keys are exact and byte-wise")
	}
	for _, k := range keys {
		wantRegister(t, s, k, digestA, at(time.Second), at(time.Hour), webhooks.ReplaySeen, "every key was registered")
	}
}

func testRegisterCanceledContext(t *testing.T, s webhooks.ReplayStore) {
	k := replayKey("r1")
	_, err := s.Register(canceledContext(), registration(k, digestA, base, at(time.Hour)))
	wantCanceled(t, err, "Register")
	wantRegister(t, s, k, digestA, base, at(time.Hour), webhooks.ReplayNew, "the call with a canceled context must not register the key")
}
