package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
	"github.com/google/go-cmp/cmp"
)

// fullSnapshot sets every field of every type in a snapshot to a non-zero
// value, so that omitempty drops nothing.
func fullSnapshot() *policy.Snapshot {
	s := validSnapshot()
	s.Now = 100*time.Second + 250*time.Millisecond
	s.Jobs[0].Weight = 0.5
	s.Jobs[0].Arrival = 1234567891 * time.Nanosecond
	s.Jobs[0].Deadline = 36 * time.Hour
	s.Jobs[0].StepsDone = 1
	s.Jobs[0].StepsTotal = 2
	s.Jobs[0].AttainedGPUSeconds = 3.5
	s.Jobs[0].Skew = 0.75
	s.Jobs[0].Colocated = map[string]tputs{"B": {"v100": 3.25}}
	b := jobB(s)
	b.Elastic = validElastic()
	b.Adaptive = validAdaptive()
	b.Sensitivity = validSensitivity()
	b.Placement = []allocation.Assignment{{Server: "n1", GPUs: 1}, {Server: "n2", GPUs: 1}}
	return s
}

func TestSnapshotJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		snap *policy.Snapshot
	}{
		{"full", fullSnapshot()},
		{"valid", validSnapshot()},
		{"empty", &policy.Snapshot{}},
		{"negative times", &policy.Snapshot{
			// JSON carries out-of-contract values faithfully: Validate, not
			// decoding, rejects them.
			Now:  -3 * time.Second,
			Jobs: []policy.Job{{ID: "x", Arrival: -time.Millisecond, Deadline: -time.Hour}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.snap)
			if err != nil {
				t.Fatal(err)
			}
			var got policy.Snapshot
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("Unmarshal(%s): %v", b, err)
			}
			if diff := cmp.Diff(tc.snap, &got); diff != "" {
				t.Errorf("round trip through %s (-want +got):\n%s", b, diff)
			}
			// Encoding is deterministic.
			b2, err := json.Marshal(&got)
			if err != nil {
				t.Fatal(err)
			}
			if string(b2) != string(b) {
				t.Errorf("re-encoding differs:\n%s\n%s", b, b2)
			}
		})
	}
}

// keys returns the sorted keys of a JSON object.
func keys(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v (%T) is not a JSON object", v, v)
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestSnapshotJSONFieldNames(t *testing.T) {
	b, err := json.Marshal(fullSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	check := func(what string, v any, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, keys(t, v)); diff != "" {
			t.Errorf("%s keys (-want +got):\n%s", what, diff)
		}
	}
	check("snapshot", doc, []string{"cluster", "jobs", "now"})
	if doc["now"] != 100.25 {
		t.Errorf("now = %v, want 100.25 (seconds)", doc["now"])
	}
	cluster := doc["cluster"].(map[string]any)
	check("cluster", cluster, []string{"servers"})
	servers := cluster["servers"].([]any)
	check("server", servers[0], []string{"accelerator", "cpus", "gpus", "id", "memory_gb"})
	if diff := cmp.Diff(map[string]any{"id": "n1", "accelerator": "v100", "gpus": 4.0, "cpus": 32.0, "memory_gb": 256.0}, servers[0]); diff != "" {
		t.Errorf("server (-want +got):\n%s", diff)
	}
	jobs := doc["jobs"].([]any)
	check("job A", jobs[0], []string{
		"arrival", "attained_gpu_seconds", "colocated", "deadline", "gpus", "id", "placement",
		"skew", "steps_done", "steps_total", "tenant", "throughput", "weight",
	})
	a := jobs[0].(map[string]any)
	for k, want := range map[string]any{
		"id": "A", "tenant": "alice", "weight": 0.5, "gpus": 1.0,
		"arrival": 1.234567891, "deadline": 129600.0,
		"steps_done": 1.0, "steps_total": 2.0, "attained_gpu_seconds": 3.5, "skew": 0.75,
		"throughput": map[string]any{"v100": 4.0, "k80": 1.0},
		"colocated":  map[string]any{"B": map[string]any{"v100": 3.25}},
		"placement":  []any{map[string]any{"server": "n1", "gpus": 1.0}},
	} {
		if diff := cmp.Diff(want, a[k]); diff != "" {
			t.Errorf("job A %s (-want +got):\n%s", k, diff)
		}
	}
	bj := jobs[1].(map[string]any)
	check("job B", bj, []string{
		"adaptive", "arrival", "attained_gpu_seconds", "colocated", "deadline", "elastic", "gpus", "id",
		"placement", "sensitivity", "skew", "steps_done", "steps_total", "tenant", "throughput", "weight",
	})
	check("elastic", bj["elastic"], []string{
		"batch_size", "grad_sqr", "grad_var", "local_batch_max", "local_batch_min",
		"max_batch_size", "max_gpus", "min_gpus", "perf",
	})
	check("perf", bj["elastic"].(map[string]any)["perf"], []string{
		"alpha_c", "alpha_n", "alpha_r", "beta_c", "beta_n", "beta_r", "gamma",
	})
	check("adaptive", bj["adaptive"], []string{"batch_size", "epoch_seconds", "epochs", "history", "regimes"})
	check("sensitivity", bj["sensitivity"], []string{"cpus", "memory_gb", "speedup"})
}

// Zero-valued optional fields are omitted; the required ones stay.
func TestJobJSONOmitsZero(t *testing.T) {
	b, err := json.Marshal(policy.Job{ID: "j"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"id":"j","gpus":0,"throughput":null,"arrival":0}`; got != want {
		t.Errorf("Marshal(zero job) = %s, want %s", got, want)
	}
}

// A document written by hand against the external schema, using every name.
const handSnapshot = `{
	"now": 3600,
	"cluster": {"servers": [
		{"id": "n1", "accelerator": "v100", "gpus": 4, "cpus": 32, "memory_gb": 244},
		{"id": "n2", "accelerator": "k80", "gpus": 2, "cpus": 8.5, "memory_gb": 61}
	]},
	"jobs": [{
		"id": "resnet-1",
		"tenant": "vision",
		"weight": 2,
		"gpus": 2,
		"arrival": 12.5,
		"throughput": {"v100": 40.5, "k80": 10},
		"steps_done": 1000,
		"steps_total": 50000,
		"attained_gpu_seconds": 7200.25,
		"deadline": 86400.000000001,
		"placement": [{"server": "n1", "gpus": 2}],
		"colocated": {"lm-2": {"v100": 20}},
		"skew": 0.4
	}, {
		"id": "lm-2",
		"gpus": 0,
		"arrival": 0.001,
		"throughput": {"v100": 3},
		"elastic": {
			"min_gpus": 1, "max_gpus": 4, "batch_size": 64, "max_batch_size": 512,
			"local_batch_min": 8, "local_batch_max": 128,
			"perf": {"alpha_c": 0.1, "beta_c": 0.01, "alpha_n": 0.2, "beta_n": 0.02,
			         "alpha_r": 0.05, "beta_r": 0.005, "gamma": 1.2},
			"grad_sqr": 0.5, "grad_var": 4
		},
		"adaptive": {"regimes": [16, 32], "epoch_seconds": [60, 45.5], "epochs": 90, "history": [10, 0], "batch_size": 32},
		"sensitivity": {"cpus": [1, 3], "memory_gb": [4], "speedup": [[0.7], [1]]}
	}]
}`

func TestSnapshotJSONDecodeHandWritten(t *testing.T) {
	var got policy.Snapshot
	if err := json.Unmarshal([]byte(handSnapshot), &got); err != nil {
		t.Fatal(err)
	}
	want := policy.Snapshot{
		Now: time.Hour,
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "n1", Accelerator: "v100", GPUs: 4, CPUs: 32, MemoryGB: 244},
			{ID: "n2", Accelerator: "k80", GPUs: 2, CPUs: 8.5, MemoryGB: 61},
		}},
		Jobs: []policy.Job{{
			ID:                 "resnet-1",
			Tenant:             "vision",
			Weight:             2,
			GPUs:               2,
			Arrival:            12*time.Second + 500*time.Millisecond,
			Throughput:         tputs{"v100": 40.5, "k80": 10},
			StepsDone:          1000,
			StepsTotal:         50000,
			AttainedGPUSeconds: 7200.25,
			Deadline:           24*time.Hour + time.Nanosecond,
			Placement:          []allocation.Assignment{{Server: "n1", GPUs: 2}},
			Colocated:          map[string]tputs{"lm-2": {"v100": 20}},
			Skew:               0.4,
		}, {
			ID:         "lm-2",
			Arrival:    time.Millisecond,
			Throughput: tputs{"v100": 3},
			Elastic: &policy.Elastic{
				MinGPUs: 1, MaxGPUs: 4, BatchSize: 64, MaxBatchSize: 512,
				LocalBatchMin: 8, LocalBatchMax: 128,
				Perf: throughput.Params{
					AlphaC: 0.1, BetaC: 0.01, AlphaN: 0.2, BetaN: 0.02,
					AlphaR: 0.05, BetaR: 0.005, Gamma: 1.2,
				},
				GradSqr: 0.5, GradVar: 4,
			},
			Adaptive: &policy.Adaptive{
				Regimes: []int{16, 32}, EpochSeconds: []float64{60, 45.5}, Epochs: 90, History: []int{10, 0}, BatchSize: 32,
			},
			Sensitivity: &throughput.Sensitivity{
				CPUs: []float64{1, 3}, MemoryGB: []float64{4}, Speedup: [][]float64{{0.7}, {1}},
			},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded snapshot (-want +got):\n%s", diff)
	}
	if err := policy.Validate(&got); err != nil {
		t.Errorf("hand-written snapshot is invalid: %v", err)
	}
}

func TestSnapshotJSONOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"now", `{"now": 1e300}`, "now: 1e+300 seconds is out of range"},
		{"negative now", `{"now": -1e300}`, "now: -1e+300 seconds is out of range"},
		{"now just beyond a Duration", `{"now": 9223372037}`, "now"},
		{"arrival", `{"jobs": [{"id": "A", "arrival": 1e300}]}`, `job "A": arrival: 1e+300 seconds is out of range`},
		{"deadline", `{"jobs": [{"id": "A", "deadline": 1e300}]}`, `job "A": deadline: 1e+300 seconds is out of range`},
		{"negative deadline", `{"jobs": [{"id": "A", "deadline": -1e300}]}`, `job "A": deadline: -1e+300 seconds is out of range`},
		{"largest float", `{"now": 1.7976931348623157e308}`, "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s policy.Snapshot
			err := json.Unmarshal([]byte(tc.doc), &s)
			if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Unmarshal(%s) = %v, want ErrInvalidSnapshot containing %q", tc.doc, err, tc.want)
			}
		})
	}
	// Syntax and type errors are plain decoding errors.
	for _, doc := range []string{`{"now": "soon"}`, `{"jobs": [{"arrival": true}]}`, `{"now": 1`, `{"jobs": [{"gpus": 1.5}]}`} {
		var s policy.Snapshot
		if err := json.Unmarshal([]byte(doc), &s); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", doc)
		}
	}
}

// The largest whole number of seconds a Duration holds decodes exactly.
func TestSnapshotJSONLargeTimes(t *testing.T) {
	var s policy.Snapshot
	if err := json.Unmarshal([]byte(`{"now": 9223372036, "jobs": [{"id": "A", "arrival": -9223372036}]}`), &s); err != nil {
		t.Fatal(err)
	}
	if want := 9223372036 * time.Second; s.Now != want {
		t.Errorf("now = %v, want %v", s.Now, want)
	}
	if want := -9223372036 * time.Second; s.Jobs[0].Arrival != want {
		t.Errorf("arrival = %v, want %v", s.Jobs[0].Arrival, want)
	}
}

func TestDecisionJSON(t *testing.T) {
	d := &policy.Decision{
		Policy:    "gavel.las",
		Objective: 1.25,
		Allocation: allocation.Allocation{
			"A": {Shares: map[allocation.Accelerator]float64{"v100": 0.5, "k80": 0.25}, GPUs: 2},
			"B": {GPUs: 1},
		},
		Wake: 90*time.Second + 500*time.Millisecond,
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"policy":    "gavel.las",
		"objective": 1.25,
		"allocation": map[string]any{
			"A": map[string]any{"shares": map[string]any{"v100": 0.5, "k80": 0.25}, "gpus": 2.0},
			"B": map[string]any{"gpus": 1.0},
		},
		"wake": 90.5,
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("decision JSON %s (-want +got):\n%s", b, diff)
	}
	var got policy.Decision
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, &got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	// With a placement and without a wake time.
	d.Wake = 0
	d.Placement = map[string][]allocation.Assignment{"A": {{Server: "n1", GPUs: 2}}}
	b, err = json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	doc = nil
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"allocation", "objective", "placement", "policy"}, keys(t, doc)); diff != "" {
		t.Errorf("decision keys of %s (-want +got):\n%s", b, diff)
	}
	got = policy.Decision{}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, &got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	for _, doc := range []string{`{"wake": 1e300}`, `{"wake": -1e300}`} {
		if err := json.Unmarshal([]byte(doc), &got); err == nil || !strings.Contains(err.Error(), "wake") {
			t.Errorf("Unmarshal(%s) = %v, want an error naming wake", doc, err)
		}
	}
}

// dummy is a policy for registry tests.
type dummy struct {
	name string
	X    int `json:"x"`
}

func (d *dummy) Name() string { return d.name }

func (d *dummy) Allocate(context.Context, *policy.Snapshot) (*policy.Decision, error) {
	return &policy.Decision{Policy: d.name}, nil
}

func dummyFactory(name string) policy.Factory {
	return func(config []byte) (policy.Policy, error) {
		d := &dummy{name: name}
		if err := policy.DecodeConfig(config, d); err != nil {
			return nil, err
		}
		return d, nil
	}
}

// registerTestPolicies registers the test policies once per process, so that
// the tests survive -count=N.
var registerTestPolicies = sync.OnceFunc(func() {
	// Deliberately out of order: Registered sorts.
	for _, name := range []string{"testsys.zeta", "testsys.dummy", "atest.v-2", "testsys.alpha"} {
		policy.Register(name, "test policy "+name, dummyFactory(name))
	}
})

func mustPanic(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", what)
			return
		}
		if msg := fmt.Sprint(r); !strings.Contains(msg, want) {
			t.Errorf("%s panicked with %q, want it to mention %q", what, msg, want)
		}
	}()
	f()
}

func TestRegisterPanics(t *testing.T) {
	registerTestPolicies()
	for _, name := range []string{
		"Gavel.LAS", "Gavel", "gavel.", ".las", "", "gavel.las.x", "gavel.-x",
		"1gavel.las", "gavel las", "gavel_x.las", "gavel.LAS", " gavel.las",
	} {
		mustPanic(t, fmt.Sprintf("Register(%q)", name), fmt.Sprintf("malformed name %q", name), func() {
			policy.Register(name, "bad", dummyFactory(name))
		})
	}
	mustPanic(t, "registering testsys.dummy twice", `"testsys.dummy" registered twice`, func() {
		policy.Register("testsys.dummy", "again", dummyFactory("testsys.dummy"))
	})
	// The failed registrations left the registry as it was.
	var names []string
	for _, i := range policy.Registered() {
		names = append(names, i.Name)
	}
	if diff := cmp.Diff([]string{"atest.v-2", "testsys.alpha", "testsys.dummy", "testsys.zeta"}, names); diff != "" {
		t.Errorf("Registered (-want +got):\n%s", diff)
	}
}

func TestRegistered(t *testing.T) {
	registerTestPolicies()
	got := policy.Registered()
	if !slices.IsSortedFunc(got, func(a, b policy.Info) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("Registered() is not sorted: %v", got)
	}
	want := []policy.Info{
		{Name: "atest.v-2", Description: "test policy atest.v-2"},
		{Name: "testsys.alpha", Description: "test policy testsys.alpha"},
		{Name: "testsys.dummy", Description: "test policy testsys.dummy"},
		{Name: "testsys.zeta", Description: "test policy testsys.zeta"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Registered() (-want +got):\n%s", diff)
	}
	// The result is a copy.
	got[0].Name = "mutated"
	if policy.Registered()[0].Name != "atest.v-2" {
		t.Error("Registered() returned the registry's own slice")
	}
}

func TestNew(t *testing.T) {
	registerTestPolicies()
	p, err := policy.New("testsys.dummy", []byte(`{"x": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&dummy{name: "testsys.dummy", X: 7}, p, cmp.AllowUnexported(dummy{})); diff != "" {
		t.Errorf("New (-want +got):\n%s", diff)
	}
	if _, err := policy.New("testsys.dummy", []byte(`{"y": 7}`)); !errors.Is(err, policy.ErrInvalidConfig) {
		t.Errorf("New with an unknown knob: err = %v, want ErrInvalidConfig", err)
	}

	for _, name := range []string{"nope.x", "", "testsys.dumm", "TESTSYS.DUMMY"} {
		p, err := policy.New(name, nil)
		if p != nil || !errors.Is(err, policy.ErrUnknownPolicy) {
			t.Errorf("New(%q) = %v, %v; want ErrUnknownPolicy", name, p, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%q", name)) || !strings.Contains(msg, "testsys.dummy") {
			t.Errorf("New(%q): error %q should name the policy and list the registered ones", name, msg)
		}
	}
}

func TestDecodeConfig(t *testing.T) {
	type config struct {
		Alpha float64 `json:"alpha"`
		Name  string  `json:"name,omitempty"`
	}
	initial := config{Alpha: 1, Name: "default"}
	for _, tc := range []struct {
		name    string
		in      string
		nilIn   bool
		want    config
		wantErr bool
	}{
		{name: "nil", nilIn: true, want: initial},
		{name: "empty", in: "", want: initial},
		{name: "blank", in: " \n\t ", want: initial},
		{name: "empty object", in: "{}", want: initial},
		{name: "null", in: "null", want: initial},
		{name: "partial", in: `{"alpha": 2.5}`, want: config{Alpha: 2.5, Name: "default"}},
		{name: "full", in: `{"alpha": 0, "name": "x"}`, want: config{Name: "x"}},
		{name: "unknown field", in: `{"alpha": 2, "alpah": 3}`, wantErr: true},
		{name: "misspelt only", in: `{"Alpah": 3}`, wantErr: true},
		{name: "wrong type", in: `{"alpha": "high"}`, wantErr: true},
		{name: "not an object", in: `[1]`, wantErr: true},
		{name: "syntax", in: `{"alpha":`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []byte
			if !tc.nilIn {
				in = []byte(tc.in)
			}
			got := initial
			err := policy.DecodeConfig(in, &got)
			if tc.wantErr {
				if !errors.Is(err, policy.ErrInvalidConfig) {
					t.Errorf("DecodeConfig(%q) = %v, want ErrInvalidConfig", tc.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeConfig(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecodeConfig(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// Seconds just below MaxInt64/1e9 that still round to 2⁶³ ns do not fit a
// Duration and must be rejected rather than wrap around to a negative time.
func TestJSONDurationBoundary(t *testing.T) {
	for _, doc := range []string{
		`{"now": 9223372036.854776}`,
		`{"jobs": [{"id": "A", "arrival": 9223372036.854776}]}`,
		`{"jobs": [{"id": "A", "deadline": 9223372036.854776}]}`,
	} {
		var s policy.Snapshot
		if err := json.Unmarshal([]byte(doc), &s); !errors.Is(err, policy.ErrInvalidSnapshot) {
			t.Errorf("Unmarshal(%s) = %v (now %v), want ErrInvalidSnapshot", doc, err, s.Now)
		}
	}
	var d policy.Decision
	if err := json.Unmarshal([]byte(`{"wake": 9223372036.854776}`), &d); err == nil {
		t.Errorf("wake 9223372036.854776 decoded to %v, want an error", d.Wake)
	}
}

// DecodeSnapshot names a typo, a key in the wrong case and where each is;
// it accepts what Marshal writes; json.Unmarshal stays lenient.
func TestDecodeSnapshotStrict(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"jobs":[{"id":"a","gpus":1,"thruoghput":{"v100":1}}]}`, `jobs[0].thruoghput: unknown key "thruoghput"`},
		{`{"jobs":[{"id":"a","GPUs":1}]}`, `jobs[0].GPUs: key "GPUs": write it "gpus"`},
		{`{"cluster":{"servers":[{"id":"s","accelerator":"v100","gpus":1,"memory":8}]}}`, `cluster.servers[0].memory: unknown key`},
		{`{"jobs":[{"id":"a","elastic":{"batch_size":8,"perf":{"alpha_c":1,"betac":2}}}]}`, `jobs[0].elastic.perf.betac: unknown key`},
		{`{"nwo":3}`, `nwo: unknown key`},
		{`{} {}`, `trailing data`},
	} {
		_, err := policy.DecodeSnapshot([]byte(tc.in))
		if !errors.Is(err, policy.ErrInvalidSnapshot) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalidSnapshot naming %q", tc.in, err, tc.want)
		}
		var lenient policy.Snapshot
		if tc.want != "trailing data" {
			if err := json.Unmarshal([]byte(tc.in), &lenient); err != nil {
				t.Errorf("%s: lenient decode failed: %v", tc.in, err)
			}
		}
	}
	full := policy.Snapshot{Now: 5 * time.Second, Jobs: []policy.Job{{ID: "a", GPUs: 2, GPUsPerWorker: 1, Arrival: time.Second, Deadline: time.Hour,
		Throughput: map[allocation.Accelerator]float64{"v100": 1}, Colocated: map[string]map[allocation.Accelerator]float64{"b": {"v100": 0.5}},
		Elastic: &policy.Elastic{MinGPUs: 1, MaxGPUs: 4, BatchSize: 32}, Adaptive: &policy.Adaptive{Regimes: []int{32}, EpochSeconds: []float64{1}, Epochs: 2},
		Placement: []allocation.Assignment{{Server: "s", GPUs: 2}}}},
		Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s", Accelerator: "v100", GPUs: 4, CPUs: 8, MemoryGB: 32}}}}
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	got, err := policy.DecodeSnapshot(b)
	if err != nil {
		t.Fatalf("what Marshal writes is refused: %v\n%s", err, b)
	}
	if diff := cmp.Diff(full, *got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// Whatever DecodeSnapshot accepts, json.Unmarshal decodes to the same
// snapshot; whatever json.Unmarshal refuses, DecodeSnapshot refuses; and
// nothing panics.
func FuzzDecodeSnapshot(f *testing.F) {
	for _, s := range []string{`{"jobs":[{"id":"a","gpus":1,"throughput":{"v100":1}}]}`, `{"now":3,"cluster":{"servers":[{"id":"s","accelerator":"v100","gpus":2}]}}`,
		`{"jobs":[{"id":"a","GPUs":1}]}`, `{"jobs":[{"id":"a","elastic":{"perf":{"alpha_c":1}}}]}`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		strictSnap, strictErr := policy.DecodeSnapshot(data)
		var lenient policy.Snapshot
		lenientErr := json.Unmarshal(data, &lenient)
		switch {
		case strictErr == nil && lenientErr != nil:
			t.Fatalf("strict accepts what lenient refuses (%v): %q", lenientErr, data)
		case strictErr == nil && !cmp.Equal(*strictSnap, lenient):
			t.Fatalf("strict and lenient decode %q differently", data)
		case strictErr != nil && !errors.Is(strictErr, policy.ErrInvalidSnapshot):
			t.Fatalf("error %v does not wrap ErrInvalidSnapshot", strictErr)
		}
	})
}
