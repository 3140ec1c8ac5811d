package webhooks_test

import (
	"fmt"
	"time"

	"github.com/hookinbox/webhooks"
)

// The zero ExponentialPolicy is the Processor's default: five attempts in
// all, 5 seconds after the first failure, doubling each time, capped at an
// hour. A RetryAfter longer than the computed delay wins (up to
// MaxRetryAfter), and a failure that is not transient (Permanent) is
// dead-lettered at once.
func ExampleExponentialPolicy() {
	var policy webhooks.ExponentialPolicy
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	failed := func(attempt int, f webhooks.Failure) string {
		d := policy.Decide(webhooks.FailedAttempt{Attempt: attempt, Failure: f, ReceivedAt: now, Now: now})
		if d.DeadLetter {
			return "dead letter"
		}
		return "retry in " + d.RetryAt.Sub(now).String()
	}

	transient := webhooks.Failure{Class: webhooks.FailureError, Transient: true}
	for attempt := 1; attempt <= 5; attempt++ {
		fmt.Printf("attempt %d failed: %s\n", attempt, failed(attempt, transient))
	}
	fmt.Println("with RetryAfter 2m:", failed(1, webhooks.Failure{Class: webhooks.FailureError, Transient: true, RetryAfter: 2 * time.Minute}))
	fmt.Println("permanent:", failed(1, webhooks.Failure{Class: webhooks.FailurePermanent}))

	// Delay alone is the computed backoff, here of a policy of the host's.
	policy = webhooks.ExponentialPolicy{MaxAttempts: 10, InitialDelay: time.Minute, Multiplier: 3, MaxDelay: 2 * time.Hour}
	for attempt := 1; attempt <= 6; attempt++ {
		fmt.Print(policy.Delay(attempt), " ")
	}
	fmt.Println()
	// Output:
	// attempt 1 failed: retry in 5s
	// attempt 2 failed: retry in 10s
	// attempt 3 failed: retry in 20s
	// attempt 4 failed: retry in 40s
	// attempt 5 failed: dead letter
	// with RetryAfter 2m: retry in 2m0s
	// permanent: dead letter
	// 1m0s 3m0s 9m0s 27m0s 1h21m0s 2h0m0s
}

// Jitter spreads the retries of events that failed together (a downstream
// outage) by shortening each delay by a random fraction of up to Jitter.
// Its delays vary, within bounds; a test that needs one exact delay gives
// the policy its own Rand.
func ExampleExponentialPolicy_jitter() {
	policy := webhooks.ExponentialPolicy{Jitter: 0.2}
	for attempt := 1; attempt <= 3; attempt++ {
		lowest, highest := policy.Delay(attempt), policy.Delay(attempt)
		for range 1000 {
			d := policy.Delay(attempt)
			lowest, highest = min(lowest, d), max(highest, d)
		}
		full := webhooks.ExponentialPolicy{}.Delay(attempt)
		fmt.Printf("attempt %d: within [%v, %v]: %v\n", attempt, full*8/10, full, lowest >= full*8/10 && highest <= full)
	}

	policy.Rand = func() float64 { return 0.5 } // tests only
	fmt.Println(policy.Delay(1))
	// Output:
	// attempt 1: within [4s, 5s]: true
	// attempt 2: within [8s, 10s]: true
	// attempt 3: within [16s, 20s]: true
	// 4.5s
}

// A RetryPolicyFunc gives some events rules of their own and leaves the
// rest to the default policy: here a payment is retried for a day, with
// delays up to an hour, before it becomes a dead letter.
func ExampleRetryPolicyFunc() {
	payments := webhooks.ExponentialPolicy{MaxAttempts: 50, MaxAge: 24 * time.Hour, InitialDelay: time.Minute, MaxDelay: time.Hour}
	var others webhooks.ExponentialPolicy
	policy := webhooks.RetryPolicyFunc(func(f webhooks.FailedAttempt) webhooks.RetryDecision {
		if f.Key.Provider == "stripe" && f.EventType == "payment_intent.succeeded" {
			return payments.Decide(f)
		}
		return others.Decide(f)
	})
	// NewProcessor(inbox, mux, webhooks.WithRetryPolicy(policy)) uses it.

	received := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	for _, f := range []webhooks.FailedAttempt{
		{Key: webhooks.InboxKey{Provider: "stripe"}, EventType: "payment_intent.succeeded", Attempt: 5, Now: received.Add(time.Hour)},
		{Key: webhooks.InboxKey{Provider: "stripe"}, EventType: "payment_intent.succeeded", Attempt: 30, Now: received.Add(23*time.Hour + 30*time.Minute)},
		{Key: webhooks.InboxKey{Provider: "stripe"}, EventType: "customer.updated", Attempt: 5, Now: received.Add(time.Minute)},
	} {
		f.ReceivedAt = received
		f.Failure = webhooks.Failure{Class: webhooks.FailureError, Transient: true}
		d := policy.Decide(f)
		if d.DeadLetter {
			fmt.Printf("%s, attempt %d: dead letter\n", f.EventType, f.Attempt)
			continue
		}
		fmt.Printf("%s, attempt %d: retry in %v\n", f.EventType, f.Attempt, d.RetryAt.Sub(f.Now))
	}
	// Output:
	// payment_intent.succeeded, attempt 5: retry in 16m0s
	// payment_intent.succeeded, attempt 30: dead letter
	// customer.updated, attempt 5: dead letter
}
