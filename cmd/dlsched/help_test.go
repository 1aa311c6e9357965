package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// A subcommand's -h lists every flag it takes on standard output and exits
// 0, like dlsched -h.
func TestSubcommandHelp(t *testing.T) {
	var w workloadFlags
	workload := flag.NewFlagSet("workload", flag.ContinueOnError)
	workload.SetOutput(io.Discard)
	w.register(workload)
	var shared []string
	workload.VisitAll(func(f *flag.Flag) { shared = append(shared, f.Name) })

	for _, tc := range []struct {
		cmd   string
		flags []string
	}{
		{"compare", append([]string{"policies", "strict", "seeds", "rates"}, shared...)},
		{"simulate", append([]string{"policy", "config"}, shared...)},
		{"allocate", []string{"policy", "in", "config", "example"}},
	} {
		for _, h := range []string{"-h", "--help", "-help"} {
			t.Run(tc.cmd+" "+h, func(t *testing.T) {
				code, out, errOut := runCLI(t, "", tc.cmd, h)
				if code != 0 || errOut != "" {
					t.Fatalf("exit %d, stderr %q: want 0 and nothing", code, errOut)
				}
				if !strings.HasPrefix(out, "usage: dlsched "+tc.cmd+" ") {
					t.Errorf("stdout does not start with the usage line:\n%s", out)
				}
				for _, f := range tc.flags {
					if !strings.Contains(out, "\n  -"+f+" ") && !strings.Contains(out, "\n  -"+f+"\n") {
						t.Errorf("usage lacks -%s:\n%s", f, out)
					}
				}
			})
		}
	}
	// Help does not hide a bad flag given before it.
	if code, _, errOut := runCLI(t, "", "compare", "--bogus", "-h"); code != 2 || !strings.Contains(errOut, "bogus") {
		t.Errorf("compare --bogus -h: exit %d, stderr %q; want 2 naming the flag", code, errOut)
	}
}
