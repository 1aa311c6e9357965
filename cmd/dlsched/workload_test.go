package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/workload"
)

// jsonTrace writes tiny's generated workload as a JSON-lines trace and
// returns its path.
func jsonTrace(t *testing.T) string {
	t.Helper()
	jobs, err := workload.Generator{Seed: 1, Jobs: 20, Rate: 8}.Generate()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := workload.WriteTrace(f, jobs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Small workload files of the formats read by content.
const (
	gavelTrace = "ResNet-50 (batch size 64)\tpython3 main.py\timage_classification/imagenet\t--num_minibatches\t1\t4000\t1\t1\t-1.000000\t0\n" +
		"LM (batch size 20)\tpython3 main.py\tlanguage_modeling\t--steps\t0\t12000\t4\t5\t2.000000\t360.5\n"
	tiresiasTrace = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n" +
		"0,4,0,1,resnet50,3000,900\n1,4,900,1,resnet50,2000,0\n"
	polluxWorkload = "name,time,application,num_replicas,batch_size\nncf-1,0,ncf,1,32768\ncifar10-0,60,cifar10,2,2048\n"
)

// writeFile writes content to a file of the test's temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDetectFormat(t *testing.T) {
	shockwave, _ := shockwaveFiles(t)
	for _, tc := range []struct{ want, path string }{
		{"json", jsonTrace(t)},
		{"gavel", writeFile(t, "g.trace", gavelTrace)},
		{"tiresias", writeFile(t, "t.csv", tiresiasTrace)},
		{"pollux", writeFile(t, "p.csv", polluxWorkload)},
		{"shockwave", shockwave},
		// Blank lines first, Windows line endings and reordered columns.
		{"pollux", writeFile(t, "q.csv", "\n\r\ntime,name,batch_size,application,num_replicas\r\n1,a,8,bert,1\r\n")},
	} {
		f, err := detectFormat(tc.path)
		if err != nil || f.name != tc.want {
			t.Errorf("%s: format %v, %v; want %s", tc.path, f, err, tc.want)
		}
	}
	for _, content := range []string{"hello, world\n", "", "a\tb\n"} {
		path := writeFile(t, "x.txt", content)
		_, err := detectFormat(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--format") {
			t.Fatalf("%q: error %v; want one naming the file and --format", content, err)
		}
		for _, f := range formats {
			if !strings.Contains(err.Error(), f.name+" ("+f.looks+")") {
				t.Errorf("%q: error %q does not say it tried %s", content, err, f.name)
			}
		}
	}
}

// Each format runs with its own defaults, named in the setup line.
func TestWorkloadFiles(t *testing.T) {
	shockwave, thr := shockwaveFiles(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"json", []string{"--workload", jsonTrace(t)}, []string{"workload: 20 jobs from ", "cluster: 24 GPUs: v100 2 × 4 GPUs; p100 2 × 4 GPUs; k80 2 × 4 GPUs"}},
		{"gavel", []string{"--workload", writeFile(t, "g.trace", gavelTrace)}, []string{"workload: 2 Gavel jobs from ", "2 of 2 (2 finished"}},
		{"tiresias", []string{"--workload", writeFile(t, "t.csv", tiresiasTrace)}, []string{"workload: 2 Tiresias jobs from ", "cluster: 64 GPUs: v100 16 × 4 GPUs", "event-driven"}},
		{"pollux", []string{"--workload", writeFile(t, "p.csv", polluxWorkload), "--cluster", "t4=8"}, []string{"workload: 2 Pollux jobs from ", "synthetic models", "round 1m0s, restart 30s (also on resizes)", "2 of 2 (2 finished"}},
		{"shockwave", []string{"--workload", shockwave, "--throughputs", thr}, []string{"workload: 4 Shockwave jobs from ", "cluster: 32 GPUs: v100 8 × 4 GPUs", "round 2m0s, recompute 16m40s, restart 20s", `as the workload's simulator ran them: allox {"rule":"shockwave","alpha":0.2}`}},
		{"format given", []string{"--workload", writeFile(t, "t.txt", tiresiasTrace), "--format", "tiresias"}, []string{"workload: 2 Tiresias jobs from "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"simulate", "--policy", "gavel.fifo"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestWorkloadErrors(t *testing.T) {
	trace := jsonTrace(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"jobs with a file", []string{"--workload", trace, "--jobs", "5"}, []string{"--jobs applies to generated workloads only", trace}},
		{"multi-gpu with a file", []string{"--workload", trace, "--multi-gpu"}, []string{"--multi-gpu applies to generated workloads only"}},
		{"models with a JSON file", []string{"--workload", trace, "--models", "d"}, []string{"--models does not apply to the file", "json format"}},
		{"throughputs with a built-in", []string{"--workload", "gavel", "--throughputs", "t.json"}, []string{"--throughputs does not apply to the built-in workload gavel"}},
		{"priorities with synergy", []string{"--workload", "synergy", "--priorities"}, []string{"--priorities does not apply to the built-in workload synergy"}},
		{"format with a built-in", []string{"--workload", "gavel", "--format", "json"}, []string{"--format applies to workload files"}},
		{"unknown format", []string{"--workload", trace, "--format", "csv"}, []string{`--format: "csv" is not one of json, gavel, tiresias, pollux, shockwave`}},
		{"wrong format", []string{"--workload", trace, "--format", "tiresias"}, []string{trace + ":1"}},
		{"missing file", []string{"--workload", trace + ".missing"}, []string{"neither a built-in workload (mixed, ", "no such file"}},
		{"unrecognised file", []string{"--workload", writeFile(t, "x.txt", "hello\n")}, []string{"unknown format", "tiresias (CSV header"}},
		{"empty file", []string{"--workload", writeFile(t, "e.jsonl", "\n"), "--format", "json"}, []string{"holds no jobs"}},
		{"bad line", []string{"--workload", writeFile(t, "b.jsonl", `{"id":"a","gpus":1,"throughput":{"v100":1}}`+"\n"+`{"id":"b","gpus":-1}`+"\n")}, []string{"b.jsonl:2"}},
		{"synergy without v100", []string{"--workload", "synergy", "--cluster", "k80=8,p100=8"}, []string{"no v100"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"simulate"}, tc.args...)...)
			if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// The synergy workload runs on Synergy's servers with its CPU- and
// memory-sensitive speeds: giving sensitive jobs more cores (tune) beats
// the GPU-proportional share, which it could not without the model.
func TestSynergyWorkload(t *testing.T) {
	code, out, errOut := runCLI(t, "", "compare", "--workload", "synergy", "--jobs", "30", "--cluster", "v100=16/8:24c:500g",
		"--policies", "synergy.tune,synergy.proportional")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "workload: 30 generated synergy jobs") ||
		!strings.Contains(lines[0], "cluster: 16 GPUs: v100 2 × 8 GPUs, 24 cores, 500 GB; round 5m0s") {
		t.Fatalf("want Synergy's setup, a header and 2 rows:\n%s", out)
	}
	if !strings.HasPrefix(lines[2], "synergy.tune ") || !strings.HasPrefix(lines[3], "synergy.proportional ") {
		t.Errorf("want tune ranked before proportional:\n%s", out)
	}
	if f2, f3 := strings.Fields(lines[2]), strings.Fields(lines[3]); f2[1] == f3[1] {
		t.Errorf("tune and proportional have the same average JCT %s h: no CPU model?", f2[1])
	}
}

// The mixed workload tells policies the jobs' co-located throughputs, so
// gandiva (introspection) does not lack them; a system's view that keeps
// no co-location (Pollux's) does not tell them.
func TestMixedInformsColocation(t *testing.T) {
	for _, tc := range []struct {
		workload string
		lacks    bool
	}{{"mixed", false}, {"pollux", true}} {
		code, out, errOut := runCLI(t, "", "compare", "--policies", "gandiva", "--workload", tc.workload, "--jobs", "12", "--out", t.TempDir())
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.workload, code, errOut)
		}
		if got := strings.Contains(out, "lacks: colocation"); got != tc.lacks {
			t.Errorf("%s: lacks colocation %v, want %v:\n%s", tc.workload, got, tc.lacks, out)
		}
	}
}
