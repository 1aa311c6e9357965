//go:build race

package all_test

// raceEnabled reports a race-detector build, several times slower: timing
// bounds widen.
const raceEnabled = true
