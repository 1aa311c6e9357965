//go:build race

package tiresias_test

// The race detector slows the simulations about tenfold; the reproduction
// skips under it.
const raceEnabled = true
