package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/google/go-cmp/cmp"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPolicies(t *testing.T) {
	code, out, _ := runCLI(t, "", "policies")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{"gavel.las ", "gavel.las-agnostic ", "pollux ", "shockwave ", "themis "} {
		if !strings.Contains(out, name) {
			t.Errorf("policies output lacks %q:\n%s", name, out)
		}
	}
}

func TestAllocateExample(t *testing.T) {
	code, out, errOut := runCLI(t, "", "allocate", "--example", "--policy", "gavel.las")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d policy.Decision
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	var snap policy.Snapshot
	if err := json.Unmarshal(example, &snap); err != nil {
		t.Fatal(err)
	}
	if d.Policy != "gavel.las" || d.Objective <= 0 || len(d.Allocation) != len(snap.Jobs) {
		t.Fatalf("decision %+v: want gavel.las, positive objective, %d jobs", d, len(snap.Jobs))
	}
	if err := d.Allocation.Validate(snap.Cluster); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"policy"`, `"objective"`, `"allocation"`, `"shares"`, `"gpus"`} {
		if !strings.Contains(out, field) {
			t.Errorf("decision JSON lacks %s", field)
		}
	}
}

func TestAllocateStdinMatchesExample(t *testing.T) {
	_, fromFlag, _ := runCLI(t, "", "allocate", "--example")
	code, fromStdin, errOut := runCLI(t, string(example), "allocate")
	if code != 0 || fromFlag != fromStdin {
		t.Fatalf("exit %d (%s); stdin and --example decisions differ", code, errOut)
	}
}

func TestExampleRoundTrips(t *testing.T) {
	code, out, _ := runCLI(t, "", "example")
	if code != 0 || out != string(example) {
		t.Fatalf("exit %d; example output differs from the embedded snapshot", code)
	}
}

// A bad job and one that can never fit are left out with their reasons; the
// good job is scheduled, and the output says what a binder does.
func TestAllocateLeavesBadJobsOut(t *testing.T) {
	snap := `{"cluster":{"servers":[{"id":"a","accelerator":"v100","gpus":2}]},
		"jobs":[{"id":"bad","gpus":1,"throughput":{"v100":-2}},
		        {"id":"big","gpus":4,"throughput":{"v100":1}},
		        {"id":"ok","gpus":2,"gpus_per_worker":2,"throughput":{"v100":1}}]}`
	for _, name := range []string{"gavel.las", "tiresias.las"} {
		code, out, errOut := runCLI(t, snap, "allocate", "--policy", name)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		var got struct {
			Placement   map[string][]allocation.Assignment `json:"placement"`
			Unscheduled map[string]string                  `json:"unscheduled"`
			Changes     []policy.Change                    `json:"changes"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		want := []policy.Change{{Job: "ok", Kind: policy.Start, To: []allocation.Assignment{{Server: "a", GPUs: 2}}}}
		if diff := cmp.Diff(want, got.Changes); diff != "" {
			t.Errorf("%s: changes (-want +got):\n%s", name, diff)
		}
		if !strings.HasPrefix(got.Unscheduled["bad"], "throughput[v100]") || !strings.HasPrefix(got.Unscheduled["big"], "gpus: wants 4") {
			t.Errorf("%s: unscheduled %q", name, got.Unscheduled)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		args        []string
		code        int
		want        string
	}{
		{"no command", "", nil, 2, "usage"},
		{"unknown command", "", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"unknown policy", "", []string{"allocate", "--policy", "nope.x", "--example"}, 2, `unknown policy "nope.x"`},
		{"bad flag", "", []string{"allocate", "--bogus"}, 2, "bogus"},
		{"bad config", "", []string{"allocate", "--example", "--config", `{"agnostik":1}`}, 2, "agnostik"},
		{"not JSON", "{", []string{"allocate"}, 2, "invalid snapshot"},
		{"trailing data", `{"jobs":[]} {}`, []string{"allocate"}, 2, "trailing data"},
		{"missing file", "", []string{"allocate", "--in", "/nonexistent/snap.json"}, 2, "no such file"},
		{"bad job, strict", `{"cluster":{"servers":[{"id":"a","accelerator":"v100","gpus":1}]},
			"jobs":[{"id":"j1","gpus":1,"throughput":{"v100":-2}}]}`,
			[]string{"allocate", "--strict"}, 2, `job "j1": throughput[v100]`},
		{"duplicate job", `{"cluster":{"servers":[{"id":"a","accelerator":"v100","gpus":1}]},
			"jobs":[{"id":"j1","gpus":1,"throughput":{"v100":1}},{"id":"j1","gpus":1,"throughput":{"v100":1}}]}`,
			[]string{"allocate"}, 2, `job "j1": id: duplicate`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "dlsched: ") {
				t.Errorf("stderr is not one line starting with 'dlsched: ': %q", errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q lacks %q", errOut, tc.want)
			}
		})
	}
}

// allocate refuses a snapshot key it does not know, naming it and where it
// is; --lenient ignores it.
func TestAllocateStrictSnapshot(t *testing.T) {
	in := `{"cluster":{"servers":[{"id":"s","accelerator":"v100","gpus":2}]},"jobs":[{"id":"a","gpus":1,"throughput":{"v100":1},"wieght":2}]}`
	code, out, errOut := runCLI(t, in, "allocate", "--policy", "gavel.las", "--in", "-")
	if code == 0 || out != "" || !strings.Contains(errOut, `jobs[0].wieght: unknown key "wieght"`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want a failure naming jobs[0].wieght", code, out, errOut)
	}
	code, out, errOut = runCLI(t, in, "allocate", "--policy", "gavel.las", "--in", "-", "--lenient")
	if code != 0 || !strings.Contains(out, `"placement"`) {
		t.Errorf("--lenient: exit %d, stderr %q", code, errOut)
	}
}

// The first interrupt cancels the run; the second exits at once with 130,
// even while the run has not yet stopped.
func TestInterruptTwice(t *testing.T) {
	sig := make(chan os.Signal, 2)
	cancelled := make(chan struct{})
	exited := make(chan int, 1)
	var stderr strings.Builder
	go interrupt(sig, func() { close(cancelled) }, &stderr, func(code int) { exited <- code })
	sig <- os.Interrupt
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the first interrupt did not cancel the run")
	}
	select {
	case code := <-exited:
		t.Fatalf("exited with %d after one interrupt", code)
	case <-time.After(50 * time.Millisecond):
	}
	sig <- os.Interrupt
	select {
	case code := <-exited:
		if code != 130 {
			t.Errorf("exit status %d, want 130", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second interrupt did not exit")
	}
	if !strings.Contains(stderr.String(), "interrupt again") {
		t.Errorf("stderr %q does not say how to exit at once", stderr.String())
	}
}
