package webhookstest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hookinbox/webhooks/webhookstest"
)

func TestClockTimers(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := webhookstest.NewClock(start)
	var fired []string
	want := func(what string, w ...string) {
		t.Helper()
		if !slices.Equal(fired, w) {
			t.Errorf("%s: fired %q; want %q", what, fired, w)
		}
	}
	waiting := c.Timers(2)
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s") })
	select {
	case <-waiting:
		t.Fatal("Timers(2) closed with one timer set")
	default:
	}
	stop := c.AfterFunc(time.Second, func() { fired = append(fired, "1s") })
	<-waiting // closed once the second timer is set
	c.AfterFunc(3*time.Second, func() { fired = append(fired, "3s") })
	c.AfterFunc(0, func() { fired = append(fired, "now") })
	want("a timer for no time at all", "now")

	c.Advance(2*time.Second - time.Nanosecond)
	want("Advance calls the timers it reaches before it returns", "now", "1s")
	if stop() {
		t.Error("stop of a timer that fired = true; want false")
	}
	c.Set(start.Add(5 * time.Second))
	want("Set calls the timers in the order they are due", "now", "1s", "2s", "3s")

	stop = c.AfterFunc(time.Second, func() { fired = append(fired, "stopped") })
	if !stop() {
		t.Error("stop of a waiting timer = false; want true")
	}
	c.Advance(time.Hour)
	want("a stopped timer does not fire", "now", "1s", "2s", "3s")
	<-c.Timers(0)
}
