package policy_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
	"github.com/google/go-cmp/cmp"
)

type tputs = map[allocation.Accelerator]float64

// validSnapshot is a small snapshot that passes Validate: 4 V100s on n1, 2
// K80s on n2, and two running jobs. Every call returns a fresh deep copy, so
// that each test row can mutate it freely.
func validSnapshot() *policy.Snapshot {
	return &policy.Snapshot{
		Now: 100 * time.Second,
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "n1", Accelerator: "v100", GPUs: 4, CPUs: 32, MemoryGB: 256},
			{ID: "n2", Accelerator: "k80", GPUs: 2, CPUs: 16, MemoryGB: 128},
		}},
		Jobs: []policy.Job{{
			ID:         "A",
			Tenant:     "alice",
			GPUs:       1,
			Arrival:    10 * time.Second,
			Throughput: tputs{"v100": 4, "k80": 1},
			Placement:  []allocation.Assignment{{Server: "n1", GPUs: 1}},
		}, {
			ID:                 "B",
			Tenant:             "bob",
			Weight:             2,
			GPUs:               2,
			Arrival:            20 * time.Second,
			Deadline:           500 * time.Second,
			Throughput:         tputs{"v100": 3, "k80": 1.5},
			StepsDone:          10,
			StepsTotal:         100,
			AttainedGPUSeconds: 160,
			Skew:               0.25,
			Colocated:          map[string]tputs{"A": {"v100": 2, "k80": 1}},
		}},
	}
}

func validElastic() *policy.Elastic {
	return &policy.Elastic{
		MinGPUs: 1, MaxGPUs: 4,
		BatchSize: 128, MaxBatchSize: 1024,
		LocalBatchMin: 16, LocalBatchMax: 256,
		Perf: throughput.Params{
			AlphaC: 0.01, BetaC: 0.001, AlphaN: 0.02, BetaN: 0.002,
			AlphaR: 0.005, BetaR: 0.0005, Gamma: 1.5,
		},
		GradSqr: 1.5, GradVar: 3,
	}
}

func validAdaptive() *policy.Adaptive {
	return &policy.Adaptive{
		Regimes:      []int{32, 64, 128},
		EpochSeconds: []float64{30, 20, 15},
		Epochs:       10,
		History:      []int{2, 3, 0},
		BatchSize:    64,
	}
}

func validSensitivity() *throughput.Sensitivity {
	return &throughput.Sensitivity{
		CPUs:     []float64{1, 2, 4},
		MemoryGB: []float64{8, 16},
		Speedup:  [][]float64{{0.5, 0.6}, {0.8, 0.9}, {1, 1.1}},
	}
}

// jobB returns job B of s, the job most rows mutate.
func jobB(s *policy.Snapshot) *policy.Job { return &s.Jobs[1] }

type invalidCase struct {
	name   string
	mutate func(s *policy.Snapshot)
	// want are substrings the error message must contain: the job (quoted)
	// and the JSON field name, or the server for cluster errors.
	want []string
	// nilSnapshot validates a nil *Snapshot instead.
	nilSnapshot bool
	// alsoIs is a further sentinel the error must wrap.
	alsoIs error
}

// numericFieldCases builds the NaN / +Inf / negative rows for every numeric
// field of a job.
func numericFieldCases() []invalidCase {
	fields := []struct {
		field string
		set   func(j *policy.Job, x float64)
	}{
		{"weight", func(j *policy.Job, x float64) { j.Weight = x }},
		{"steps_done", func(j *policy.Job, x float64) { j.StepsDone = x }},
		{"steps_total", func(j *policy.Job, x float64) { j.StepsTotal = x }},
		{"attained_gpu_seconds", func(j *policy.Job, x float64) { j.AttainedGPUSeconds = x }},
		{"skew", func(j *policy.Job, x float64) { j.Skew = x }},
		{"throughput[v100]", func(j *policy.Job, x float64) { j.Throughput["v100"] = x }},
		{"throughput[k80]", func(j *policy.Job, x float64) { j.Throughput["k80"] = x }},
		{"colocated[A][v100]", func(j *policy.Job, x float64) { j.Colocated["A"]["v100"] = x }},
		{"colocated[A][k80]", func(j *policy.Job, x float64) { j.Colocated["A"]["k80"] = x }},
	}
	values := []struct {
		name string
		x    float64
		msg  string
	}{
		{"NaN", math.NaN(), "NaN is not a finite non-negative number"},
		{"+Inf", math.Inf(1), "+Inf is not a finite non-negative number"},
		{"-Inf", math.Inf(-1), "-Inf is not a finite non-negative number"},
		{"negative", -1, "-1 is not a finite non-negative number"},
		{"tiny negative", -1e-300, "-1e-300 is not a finite non-negative number"},
	}
	var cases []invalidCase
	for _, f := range fields {
		for _, v := range values {
			cases = append(cases, invalidCase{
				name:   f.field + " " + v.name,
				mutate: func(s *policy.Snapshot) { f.set(jobB(s), v.x) },
				want:   []string{`job "B"`, f.field + ": " + v.msg},
			})
		}
	}
	return cases
}

func invalidCases() []invalidCase {
	cases := []invalidCase{{
		name:        "nil snapshot",
		nilSnapshot: true,
		want:        []string{"nil snapshot"},
	}, {
		name:   "negative now",
		mutate: func(s *policy.Snapshot) { s.Now = -time.Second; s.Jobs = nil },
		want:   []string{"now", "negative"},
	}, {
		name:   "skew above 1",
		mutate: func(s *policy.Snapshot) { jobB(s).Skew = 1.5 },
		want:   []string{`job "B"`, "skew: 1.5 is above 1"},
	}, {
		name:   "steps_done above steps_total",
		mutate: func(s *policy.Snapshot) { jobB(s).StepsDone = 101 },
		want:   []string{`job "B"`, "steps_done: 101 exceeds steps_total 100"},
	}, {
		name:   "negative arrival",
		mutate: func(s *policy.Snapshot) { jobB(s).Arrival = -time.Second },
		want:   []string{`job "B"`, "arrival", "negative"},
	}, {
		name:   "arrival after now",
		mutate: func(s *policy.Snapshot) { jobB(s).Arrival = s.Now + time.Nanosecond },
		want:   []string{`job "B"`, "arrival", "after now"},
	}, {
		name:   "negative deadline",
		mutate: func(s *policy.Snapshot) { jobB(s).Deadline = -time.Second },
		want:   []string{`job "B"`, "deadline", "negative"},
	}, {
		name:   "duplicate job ID",
		mutate: func(s *policy.Snapshot) { jobB(s).ID = "A" },
		want:   []string{`job "A"`, "id: duplicate"},
	}, {
		name:   "empty job ID",
		mutate: func(s *policy.Snapshot) { jobB(s).ID = "" },
		// An empty ID cannot be quoted usefully: the job is named by index.
		want: []string{"job 1", "id: empty"},
	}, {
		name:   "unknown accelerator in throughput",
		mutate: func(s *policy.Snapshot) { jobB(s).Throughput["tpu"] = 3 },
		want:   []string{`job "B"`, "throughput", `unknown accelerator "tpu"`},
	}, {
		name:   "more GPUs than any runnable type has",
		mutate: func(s *policy.Snapshot) { jobB(s).GPUs = 5 },
		want:   []string{`job "B"`, "gpus", "wants 5 GPUs", "v100: 4", "k80: 2"},
	}, {
		name: "more GPUs than the only runnable type has",
		mutate: func(s *policy.Snapshot) {
			// 4 V100s would hold it, but the job cannot run there.
			jobB(s).GPUs = 3
			jobB(s).Throughput["v100"] = 0
		},
		want: []string{`job "B"`, "gpus", "wants 3 GPUs", "k80: 2"},
	}, {
		name:   "zero throughput everywhere",
		mutate: func(s *policy.Snapshot) { jobB(s).Throughput = tputs{"v100": 0, "k80": 0} },
		want:   []string{`job "B"`, "throughput", "zero on every accelerator type"},
	}, {
		name:   "empty throughput map",
		mutate: func(s *policy.Snapshot) { jobB(s).Throughput = tputs{} },
		want:   []string{`job "B"`, "throughput", "zero on every accelerator type"},
	}, {
		name:   "nil throughput map",
		mutate: func(s *policy.Snapshot) { jobB(s).Throughput = nil },
		want:   []string{`job "B"`, "throughput", "zero on every accelerator type"},
	}, {
		name:   "zero GPUs for a non-elastic job",
		mutate: func(s *policy.Snapshot) { jobB(s).GPUs = 0 },
		want:   []string{`job "B"`, "gpus: 0", "only elastic jobs"},
	}, {
		name:   "negative GPUs",
		mutate: func(s *policy.Snapshot) { jobB(s).GPUs = -2 },
		want:   []string{`job "B"`, "gpus: -2 is negative"},
	}, {
		name:   "negative GPUs for an elastic job",
		mutate: func(s *policy.Snapshot) { jobB(s).GPUs = -2; jobB(s).Elastic = validElastic() },
		want:   []string{`job "B"`, "gpus: -2 is negative"},
	}, {
		name:   "placement on an unknown server",
		mutate: func(s *policy.Snapshot) { jobB(s).Placement = []allocation.Assignment{{Server: "n9", GPUs: 1}} },
		want:   []string{`job "B"`, "placement", `unknown server "n9"`},
	}, {
		name:   "placement with too many GPUs",
		mutate: func(s *policy.Snapshot) { jobB(s).Placement = []allocation.Assignment{{Server: "n2", GPUs: 3}} },
		want:   []string{`job "B"`, "placement", `3 GPUs on server "n2", which has 2`},
	}, {
		name:   "placement with zero GPUs",
		mutate: func(s *policy.Snapshot) { jobB(s).Placement = []allocation.Assignment{{Server: "n1", GPUs: 0}} },
		want:   []string{`job "B"`, "placement", `0 GPUs on server "n1"`},
	}, {
		name:   "colocated with an unknown partner",
		mutate: func(s *policy.Snapshot) { jobB(s).Colocated = map[string]tputs{"Z": {"v100": 1}} },
		want:   []string{`job "B"`, "colocated[Z]", "partner must be another job"},
	}, {
		name:   "colocated with itself",
		mutate: func(s *policy.Snapshot) { jobB(s).Colocated = map[string]tputs{"B": {"v100": 1}} },
		want:   []string{`job "B"`, "colocated[B]", "partner must be another job"},
	}, {
		name:   "colocated on an unknown accelerator",
		mutate: func(s *policy.Snapshot) { jobB(s).Colocated["A"]["tpu"] = 1 },
		want:   []string{`job "B"`, "colocated[A]", `unknown accelerator "tpu"`},
	}, {
		name: "colocated with an unknown partner sharing a valid map",
		mutate: func(s *policy.Snapshot) {
			m := tputs{"v100": 1}
			jobB(s).Colocated = map[string]tputs{"A": m, "Z": m}
		},
		want: []string{`job "B"`, "colocated[Z]", "partner must be another job"},
	}, {
		name: "colocated sharing an invalid map",
		mutate: func(s *policy.Snapshot) {
			m := tputs{"v100": math.Inf(1)}
			jobB(s).Colocated = map[string]tputs{"A": m, "C": m}
		},
		want: []string{`job "B"`, "colocated[A][v100]"},
	}, {
		name: "duplicate server ID",
		mutate: func(s *policy.Snapshot) {
			s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: "n1", Accelerator: "a100", GPUs: 8})
		},
		want:   []string{`server "n1"`, "id: duplicate"},
		alsoIs: allocation.ErrInvalid,
	}, {
		name:   "empty server ID",
		mutate: func(s *policy.Snapshot) { s.Cluster.Servers[1].ID = "" },
		want:   []string{"server 1", "id: empty"},
		alsoIs: allocation.ErrInvalid,
	}, {
		name:   "empty accelerator",
		mutate: func(s *policy.Snapshot) { s.Cluster.Servers[1].Accelerator = "" },
		want:   []string{`server "n2"`, "accelerator: empty"},
		alsoIs: allocation.ErrInvalid,
	}, {
		name:   "negative server GPUs",
		mutate: func(s *policy.Snapshot) { s.Cluster.Servers[1].GPUs = -1 },
		want:   []string{`server "n2"`, "gpus: -1 is outside"},
		alsoIs: allocation.ErrInvalid,
	}, {
		name:   "NaN server cpus",
		mutate: func(s *policy.Snapshot) { s.Cluster.Servers[0].CPUs = math.NaN() },
		want:   []string{`server "n1"`, "cpus: NaN"},
		alsoIs: allocation.ErrInvalid,
	}, {
		name:   "infinite server cpus",
		mutate: func(s *policy.Snapshot) { s.Cluster.Servers[0].CPUs = math.Inf(1) },
		want:   []string{`server "n1"`, "cpus: +Inf"},
		alsoIs: allocation.ErrInvalid,
	}, {
		name:   "negative server memory",
		mutate: func(s *policy.Snapshot) { s.Cluster.Servers[0].MemoryGB = -4 },
		want:   []string{`server "n1"`, "memory_gb: -4"},
		alsoIs: allocation.ErrInvalid,
	}}

	elastic := []struct {
		name   string
		mutate func(e *policy.Elastic)
		want   string
	}{
		{"batch_size 0", func(e *policy.Elastic) { e.BatchSize = 0 }, "elastic.batch_size: 0"},
		{"max_gpus below min_gpus", func(e *policy.Elastic) { e.MinGPUs, e.MaxGPUs = 4, 2 }, "elastic.max_gpus: 2 is negative or below min_gpus 4"},
		{"negative min_gpus", func(e *policy.Elastic) { e.MinGPUs = -1 }, "elastic.min_gpus: -1 is negative"},
		{"negative max_gpus", func(e *policy.Elastic) { e.MinGPUs, e.MaxGPUs = 0, -1 }, "elastic.max_gpus: -1"},
		{"max_batch_size below batch_size", func(e *policy.Elastic) { e.MaxBatchSize = 64 }, "elastic.max_batch_size: 64 is negative or below batch_size 128"},
		{"local_batch_max below local_batch_min", func(e *policy.Elastic) { e.LocalBatchMax = 8 }, "elastic.local_batch_max: 8 is negative or below local_batch_min 16"},
		{"negative local_batch_min", func(e *policy.Elastic) { e.LocalBatchMin = -1 }, "elastic.local_batch_min: -1 is negative"},
		{"gamma 0.5", func(e *policy.Elastic) { e.Perf.Gamma = 0.5 }, "elastic.perf.gamma: 0.5"},
		{"NaN grad_sqr", func(e *policy.Elastic) { e.GradSqr = math.NaN() }, "elastic.grad_sqr: NaN"},
		{"negative grad_var", func(e *policy.Elastic) { e.GradVar = -1 }, "elastic.grad_var: -1"},
		{"infinite alpha_c", func(e *policy.Elastic) { e.Perf.AlphaC = math.Inf(1) }, "elastic.perf.alpha_c: +Inf"},
		{"negative beta_n", func(e *policy.Elastic) { e.Perf.BetaN = -0.5 }, "elastic.perf.beta_n: -0.5"},
	}
	for _, tc := range elastic {
		cases = append(cases, invalidCase{
			name: "elastic " + tc.name,
			mutate: func(s *policy.Snapshot) {
				e := validElastic()
				tc.mutate(e)
				jobB(s).Elastic = e
			},
			want: []string{`job "B"`, tc.want},
		})
	}

	adaptive := []struct {
		name   string
		mutate func(a *policy.Adaptive)
		want   string
	}{
		{"empty regimes", func(a *policy.Adaptive) { a.Regimes, a.EpochSeconds, a.History = nil, nil, nil }, "adaptive.regimes: empty"},
		{"non-ascending regimes", func(a *policy.Adaptive) { a.Regimes = []int{32, 128, 64} }, "adaptive.regimes: batch sizes must be positive and strictly ascending"},
		{"repeated regime", func(a *policy.Adaptive) { a.Regimes = []int{32, 32, 128} }, "adaptive.regimes: batch sizes must be positive and strictly ascending"},
		{"zero regime", func(a *policy.Adaptive) { a.Regimes = []int{0, 32, 128} }, "adaptive.regimes: batch sizes must be positive"},
		{"epoch_seconds too short", func(a *policy.Adaptive) { a.EpochSeconds = a.EpochSeconds[:2] }, "adaptive.epoch_seconds: 2 values for 3 regimes"},
		{"epoch_seconds too long", func(a *policy.Adaptive) { a.EpochSeconds = append(a.EpochSeconds, 1) }, "adaptive.epoch_seconds: 4 values for 3 regimes"},
		{"zero epoch_seconds", func(a *policy.Adaptive) { a.EpochSeconds[1] = 0 }, "adaptive.epoch_seconds[1]: 0 is not a finite positive number"},
		{"NaN epoch_seconds", func(a *policy.Adaptive) { a.EpochSeconds[2] = math.NaN() }, "adaptive.epoch_seconds[2]: NaN"},
		{"history length", func(a *policy.Adaptive) { a.History = []int{1} }, "adaptive.history: 1 values for 3 regimes"},
		{"negative history", func(a *policy.Adaptive) { a.History[0] = -1 }, "adaptive.history[0]: -1 is negative"},
		{"epochs 0", func(a *policy.Adaptive) { a.Epochs, a.History = 0, nil }, "adaptive.epochs: 0"},
		{"batch_size not a regime", func(a *policy.Adaptive) { a.BatchSize = 48 }, "adaptive.batch_size: 48 is not one of the regimes"},
		{"history sum above epochs", func(a *policy.Adaptive) { a.History = []int{4, 4, 3} }, "adaptive.history[2]: 3 puts the epochs done above the 10 in total"},
		{"history sum overflows", func(a *policy.Adaptive) { a.History = []int{math.MaxInt, math.MaxInt, 0} }, "adaptive.history[0]: 9223372036854775807 puts the epochs done above the 10 in total"},
	}
	for _, tc := range adaptive {
		cases = append(cases, invalidCase{
			name: "adaptive " + tc.name,
			mutate: func(s *policy.Snapshot) {
				a := validAdaptive()
				tc.mutate(a)
				jobB(s).Adaptive = a
			},
			want: []string{`job "B"`, tc.want},
		})
	}

	sensitivity := []struct {
		name   string
		mutate func(x *throughput.Sensitivity)
		want   string
	}{
		{"non-ascending cpus", func(x *throughput.Sensitivity) { x.CPUs = []float64{1, 4, 2} }, "sensitivity.cpus: values must be finite, positive and strictly ascending"},
		{"empty cpus", func(x *throughput.Sensitivity) { x.CPUs, x.Speedup = nil, nil }, "sensitivity.cpus: empty"},
		{"zero cpus", func(x *throughput.Sensitivity) { x.CPUs[0] = 0 }, "sensitivity.cpus: values must be finite, positive"},
		{"non-ascending memory", func(x *throughput.Sensitivity) { x.MemoryGB = []float64{16, 16} }, "sensitivity.memory_gb: values must be finite, positive and strictly ascending"},
		{"ragged speedup rows", func(x *throughput.Sensitivity) { x.Speedup[1] = []float64{0.8} }, "sensitivity.speedup[1]: 1 values for 2 memory values"},
		{"missing speedup row", func(x *throughput.Sensitivity) { x.Speedup = x.Speedup[:2] }, "sensitivity.speedup: 2 rows for 3 CPU values"},
		{"negative speedup", func(x *throughput.Sensitivity) { x.Speedup[2][0] = -0.1 }, "sensitivity.speedup[2][0]: -0.1 is not a finite non-negative number"},
		{"NaN speedup", func(x *throughput.Sensitivity) { x.Speedup[0][1] = math.NaN() }, "sensitivity.speedup[0][1]: NaN"},
	}
	for _, tc := range sensitivity {
		cases = append(cases, invalidCase{
			name: "sensitivity " + tc.name,
			mutate: func(s *policy.Snapshot) {
				x := validSensitivity()
				tc.mutate(x)
				jobB(s).Sensitivity = x
			},
			want: []string{`job "B"`, tc.want},
		})
	}
	return append(cases, numericFieldCases()...)
}

func TestValidateInvalid(t *testing.T) {
	cases := invalidCases()
	names := make(map[string]bool)
	for _, tc := range cases {
		if names[tc.name] {
			t.Fatalf("duplicate test name %q", tc.name)
		}
		names[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			var s *policy.Snapshot
			if !tc.nilSnapshot {
				s = validSnapshot()
				tc.mutate(s)
			}
			err := policy.Validate(s)
			if err == nil {
				t.Fatal("Validate succeeded, want an error")
			}
			if !errors.Is(err, policy.ErrInvalidSnapshot) {
				t.Errorf("error %q does not wrap ErrInvalidSnapshot", err)
			}
			if tc.alsoIs != nil && !errors.Is(err, tc.alsoIs) {
				t.Errorf("error %q does not wrap %v", err, tc.alsoIs)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, policy.ErrInvalidSnapshot.Error()+": ") {
				t.Errorf("error %q does not start with %q", msg, policy.ErrInvalidSnapshot.Error()+": ")
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q spans several lines", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestValidateValid(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *policy.Snapshot)
	}{
		{"base", func(*policy.Snapshot) {}},
		{"no jobs", func(s *policy.Snapshot) { s.Jobs = nil }},
		{"empty snapshot", func(s *policy.Snapshot) { *s = policy.Snapshot{} }},
		{"elastic job with zero GPUs and no throughput", func(s *policy.Snapshot) {
			b := jobB(s)
			b.GPUs, b.Throughput, b.Colocated, b.Elastic = 0, nil, nil, validElastic()
		}},
		{"zero throughput on one type", func(s *policy.Snapshot) { jobB(s).Throughput["k80"] = 0 }},
		{"type missing from throughput", func(s *policy.Snapshot) { delete(jobB(s).Throughput, "v100") }},
		{"all GPUs of the only runnable type", func(s *policy.Snapshot) {
			jobB(s).GPUs = 4
			jobB(s).Throughput["k80"] = 0
		}},
		{"arrival equal to now", func(s *policy.Snapshot) { jobB(s).Arrival = s.Now }},
		{"deadline before now", func(s *policy.Snapshot) { jobB(s).Deadline = time.Second }},
		{"unknown length with steps done", func(s *policy.Snapshot) { jobB(s).StepsTotal = 0 }},
		{"steps_done equal to steps_total", func(s *policy.Snapshot) { jobB(s).StepsDone = 100 }},
		{"skew 1", func(s *policy.Snapshot) { jobB(s).Skew = 1 }},
		{"zero-GPU server", func(s *policy.Snapshot) {
			s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: "n3", Accelerator: "a100"})
			jobB(s).Throughput["a100"] = 0
		}},
		{"placement on all GPUs of a server", func(s *policy.Snapshot) {
			jobB(s).Placement = []allocation.Assignment{{Server: "n2", GPUs: 2}}
		}},
		{"all per-system facts", func(s *policy.Snapshot) {
			b := jobB(s)
			b.Elastic, b.Adaptive, b.Sensitivity = validElastic(), validAdaptive(), validSensitivity()
		}},
		{"elastic zero values", func(s *policy.Snapshot) {
			// Zero bounds mean "no bound"; gamma zero means unset.
			jobB(s).Elastic = &policy.Elastic{BatchSize: 1}
		}},
		{"adaptive without history", func(s *policy.Snapshot) {
			a := validAdaptive()
			a.History = nil
			jobB(s).Adaptive = a
		}},
		{"adaptive history summing to epochs", func(s *policy.Snapshot) {
			a := validAdaptive()
			a.History = []int{5, 5, 0}
			jobB(s).Adaptive = a
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, want := validSnapshot(), validSnapshot()
			tc.mutate(s)
			tc.mutate(want)
			if err := policy.Validate(s); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if diff := cmp.Diff(want, s); diff != "" {
				t.Errorf("Validate modified the snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

// The whole message is one line: the sentinel, the job, the field, the value.
func TestValidateMessage(t *testing.T) {
	s := validSnapshot()
	s.Jobs[1].Weight = -2
	err := policy.Validate(s)
	want := `invalid snapshot: job "B": weight: -2 is not a finite non-negative number`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want %s", err, want)
	}
}

// A Census shared by many jobs answers each as a fresh one does: its memo
// of worker capacities never leaks one job's answer into another's.
func TestCensusShared(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 50 {
		var c allocation.Cluster
		for i := range 1 + r.IntN(6) {
			c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprint(i), Accelerator: []allocation.Accelerator{"v100", "k80"}[r.IntN(2)], GPUs: 1 + r.IntN(8)})
		}
		shared := policy.NewCensus(c)
		for range 20 {
			w := 1 << r.IntN(3)
			j := &policy.Job{ID: "j", GPUs: w * (1 + r.IntN(4)), GPUsPerWorker: w,
				Throughput: map[allocation.Accelerator]float64{"v100": float64(r.IntN(2)), "k80": 1}}
			if got, want := shared.Runnable(j), policy.NewCensus(c).Runnable(j); (got == nil) != (want == nil) {
				t.Fatalf("cluster %+v, job %+v: shared census says %v, a fresh one %v", c, j, got, want)
			}
		}
	}
}

// BenchmarkCensus checks 10,000 elastic jobs against 2,000 servers with one
// Census, as a policy's round does, where Job.Runnable per job would
// measure the cluster again each time.
func BenchmarkCensus(b *testing.B) {
	var c allocation.Cluster
	for i := range 2000 {
		c.Servers = append(c.Servers, allocation.Server{ID: fmt.Sprint(i), Accelerator: "v100", GPUs: 8})
	}
	j := &policy.Job{ID: "j", GPUs: 4, GPUsPerWorker: 2, Throughput: map[allocation.Accelerator]float64{"v100": 1}}
	for b.Loop() {
		cs := policy.NewCensus(c)
		for range 10000 {
			if err := cs.Runnable(j); err != nil {
				b.Fatal(err)
			}
		}
	}
}
