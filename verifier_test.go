package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

func TestReasonIsAnError(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("receiving: %w", webhooks.Reject(webhooks.ReasonBadSignature, "no signature matched"))

	// A rejection matches its reason code, and a *VerificationError with
	// that reason, through any wrapping.
	assert.ErrorIs(t, err, webhooks.ReasonBadSignature)
	assert.ErrorIs(t, err, &webhooks.VerificationError{Reason: webhooks.ReasonBadSignature})
	assert.NotErrorIs(t, err, webhooks.ReasonMissingSignature)
	assert.NotErrorIs(t, err, &webhooks.VerificationError{Reason: webhooks.ReasonMissingSignature})
	assert.NotErrorIs(t, err, errors.New(webhooks.ReasonBadSignature.Error()), "only the code matches, not a look-alike")

	assert.Equal(t, "webhooks: verification failed: bad_signature", webhooks.ReasonBadSignature.Error())
	assert.Equal(t, "webhooks: verification failed: missing_event_id", webhooks.Reject(webhooks.ReasonMissingEventID, "").Error())
	assert.Equal(t, "webhooks: verification failed: empty_body: the request body is empty",
		webhooks.Reject(webhooks.ReasonEmptyBody, "the request body is empty").Error())

	// Custom reasons work the same way.
	const quota webhooks.Reason = "over_quota"
	assert.ErrorIs(t, webhooks.Reject(quota, "tenant over its quota"), quota)

	// The verifiers' own rejections match their reason codes.
	v, err := webhooks.NewHMACVerifier(providers.GitHubOptions(), webhooks.StaticSecrets(ghSecret))
	assert.NoError(t, err)
	_, err = v.Verify(context.Background(), webhooks.Route{Provider: "github"}, request(ghPayload, "X-GitHub-Delivery", "d"))
	assert.ErrorIs(t, err, webhooks.ReasonMissingSignature)
}
