package pgstore_test

import (
	"testing"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/storetest"
)

func TestInboxConformance(t *testing.T) {
	t.Parallel()
	storetest.RunInbox(t, func(t *testing.T) webhooks.InboxStore { return newStore(t) })
}

func TestReplayConformance(t *testing.T) {
	t.Parallel()
	storetest.RunReplay(t, func(t *testing.T) webhooks.ReplayStore { return newStore(t) })
}
