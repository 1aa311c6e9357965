package main

import (
	"context"
	"strings"
	"testing"
)

// Bad flags are refused before anything connects, naming the flag.
func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--policy", "nope"}, "nope"},
		{[]string{"--policy", "gavel.las", "--config", `{"wieght": 1}`}, "wieght"},
		{[]string{"--round", "0s"}, "--round 0s"},
		{[]string{"--state", "journal"}, `--state "journal": want NAMESPACE/NAME`},
		{[]string{"--leader-elect", "ns/"}, `--leader-elect "ns/": want NAMESPACE/NAME`},
		{[]string{"--kubeconfig", "/nonexistent"}, "/nonexistent"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--bogus"}, "bogus"},
	} {
		err := run(context.Background(), tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: %v, want an error saying %q", tc.args, err, tc.says)
		}
	}
}
