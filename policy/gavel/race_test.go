//go:build race

package gavel

// The race detector slows the pure-Go simplex about tenfold; random tests
// shrink under it.
const raceEnabled = true
