package cpu

import (
	"testing"
	"time"
)

// Sleeping for 50 ms uses almost no CPU time, so a Used that returned the
// wall clock fails; spinning must make it grow, so a Used that returned
// nothing fails. The spin runs until the CPU clock has moved rather than
// for a fixed wall time, because a busy machine (CI runs packages side by
// side on two cores) can take the core away for most of any fixed span.
func TestUsed(t *testing.T) {
	before, ok := Used()
	if !ok {
		t.Skip("no CPU clock here: Used falls back to the wall clock")
	}
	time.Sleep(50 * time.Millisecond)
	slept, _ := Used()
	if d := slept - before; d > 25*time.Millisecond {
		t.Errorf("sleeping 50 ms used %v of CPU time", d)
	}
	const want, limit = 20 * time.Millisecond, 10 * time.Second
	start := time.Now()
	for {
		if now, _ := Used(); now-slept >= want {
			break
		}
		if time.Since(start) > limit {
			now, _ := Used()
			t.Fatalf("spinning for %v used %v of CPU time, want at least %v", limit, now-slept, want)
		}
	}
}
