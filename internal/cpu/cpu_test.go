package cpu

import (
	"testing"
	"time"
)

// Spinning for 50 ms of wall time uses about 50 ms of CPU time; sleeping
// for 50 ms uses almost none. Both are measured, so that a Used that
// returned the wall clock (or nothing) fails.
func TestUsed(t *testing.T) {
	before, ok := Used()
	if !ok {
		t.Skip("no CPU clock here: Used falls back to the wall clock")
	}
	time.Sleep(50 * time.Millisecond)
	slept, _ := Used()
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	spun, _ := Used()
	if d := slept - before; d > 25*time.Millisecond {
		t.Errorf("sleeping 50 ms used %v of CPU time", d)
	}
	// A busy machine can take the core away for part of the spin.
	if d := spun - slept; d < 10*time.Millisecond || d > 200*time.Millisecond {
		t.Errorf("spinning 50 ms used %v of CPU time", d)
	}
}
