package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// --out writes exactly the files the command documentation and the README
// list, into a directory it creates.
func TestOutFiles(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"simulate", "--policy", "gavel.las"}, []string{"jobs.csv", "result.json", "rounds.csv", "summary.json"}},
		{[]string{"compare", "--policies", "gavel.las,gavel.fifo"}, []string{"jct_cdf.svg", "report.html", "results.csv", "results.json", "summary.json", "utilization.svg"}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out", "nested")
			args := slices.Concat(tc.args, []string{"--out", dir}, tiny)
			if code, _, errOut := runCLI(t, "", args...); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				if info, err := e.Info(); err != nil || !e.Type().IsRegular() || info.Size() == 0 {
					t.Errorf("%s: not a non-empty regular file (%v)", e.Name(), err)
				}
				got = append(got, e.Name())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("--out wrote %q, want %q", got, tc.want)
			}
		})
	}
}
