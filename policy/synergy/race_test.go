//go:build race

package synergy_test

// raceEnabled reports whether the race detector is on; heavy tests shrink
// under it.
const raceEnabled = true
