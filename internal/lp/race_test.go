//go:build race

package lp

// raceEnabled reports a race-detector build, which slows the pure-Go
// simplex about tenfold: timing limits widen and random tests shrink.
const raceEnabled = true
