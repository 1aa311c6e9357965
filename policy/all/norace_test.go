//go:build !race

package all_test

const raceEnabled = false
