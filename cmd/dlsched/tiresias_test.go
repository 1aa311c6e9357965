package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The dossier's two-job trace on one 4-GPU server: event-driven, 2D-LAS
// gives JCTs 4800 and 4100 s (average 4450 s, 1.24 h) and FIFO 3000 and
// 4100 s (average 3550 s, 0.99 h).
func TestCompareTiresiasTrace(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "two.csv")
	if err := os.WriteFile(trace, []byte("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"+
		"0,4,0,1,resnet50,3000,900\n1,4,900,1,resnet50,2000,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "compare", "--policies", "tiresias.las,baseline.fifo", "--workload", trace, "--cluster", "v100=4")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "workload: 2 Tiresias jobs from ") || !strings.Contains(lines[0], "event-driven") {
		t.Fatalf("want an event-driven setup line, a header and 2 rows:\n%s", out)
	}
	// Ranked by average JCT: FIFO first.
	for i, want := range []string{"baseline.fifo 0.99 ", "tiresias.las 1.24 "} {
		if got := strings.Join(strings.Fields(lines[2+i]), " "); !strings.HasPrefix(got, want) {
			t.Errorf("row %q: want %s h average JCT", lines[2+i], want)
		}
	}

	code, _, errOut = runCLI(t, "", "simulate", "--workload", trace, "--jobs", "3")
	if code != 2 || !strings.Contains(errOut, "--jobs applies to generated workloads only, not to the file "+trace) {
		t.Errorf("--jobs with a Tiresias trace: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "simulate", "--workload", trace+".missing")
	if code != 2 || !strings.Contains(errOut, "--workload") {
		t.Errorf("missing trace: exit %d, stderr %q", code, errOut)
	}
}
