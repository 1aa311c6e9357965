package main

import (
	"bytes"
	"testing"
)

// The loop is deterministic: the Runner is only ever asked after the state
// changed, and the loop waits for its answer.
func TestRun(t *testing.T) {
	const want = `  0.70 h  resnet      finished
  1.50 h  transformer finished
  2.10 h  lstm        finished
  2.20 h  a3c         finished
`
	for range 3 {
		var out bytes.Buffer
		if err := run(&out); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
	}
}
