package providers

import "time"

// fixedClock is a clock that always tells the same time.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }
