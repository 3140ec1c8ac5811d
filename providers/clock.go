package providers

import "time"

// systemClock is the wall clock, for verifiers given no Clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
