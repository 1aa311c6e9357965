//go:build !race

package tiresias_test

const raceEnabled = false
