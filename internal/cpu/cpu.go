// Package cpu tells how much processor time this process has used, so that
// tests of how fast work stops after a cancellation can bound the work done
// rather than the wall clock, which a busy machine stretches.
package cpu

import "time"

// Used returns the processor time (user and system) the process has used
// so far, and true; where the operating system cannot tell, it returns the
// time since an arbitrary origin, by the wall clock, and false.
func Used() (time.Duration, bool) { return used() }
