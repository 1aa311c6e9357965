package workload

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// ErrTrace is wrapped by every error about the content of a trace or
// throughput file; see TraceError.
var ErrTrace = errors.New("sim: invalid trace")

// TraceError is a problem at one place of a trace file. Its message reads
// "file:line: job "id": field: problem", leaving out the parts that are not
// known. It matches ErrTrace and the underlying error with errors.Is.
type TraceError struct {
	// File is the name the reader was given.
	File string
	// Line is the 1-based line number; zero if the problem is not tied to
	// one line.
	Line int
	// Job is the ID of the job concerned, if known.
	Job string
	// Field names the field, column or key concerned, if any.
	Field string
	// Err is the problem.
	Err error
}

func (e *TraceError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Job != "" {
		fmt.Fprintf(&b, "job %q: ", e.Job)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns ErrTrace and Err.
func (e *TraceError) Unwrap() []error { return []error{ErrTrace, e.Err} }

func traceErr(file string, line int, job, field, format string, args ...any) error {
	return &TraceError{File: file, Line: line, Job: job, Field: field, Err: fmt.Errorf(format, args...)}
}

// traceMaxSeconds bounds times read from traces, well inside time.Duration.
const traceMaxSeconds = 1e9

// traceSeconds converts a time in seconds read from a trace, which must be
// finite, non-negative and at most traceMaxSeconds.
func traceSeconds(s float64) (time.Duration, error) {
	if math.IsNaN(s) || s < 0 || s > traceMaxSeconds {
		return 0, fmt.Errorf("%v seconds is not in [0, %g]", s, float64(traceMaxSeconds))
	}
	return time.Duration(math.Round(s * float64(time.Second))), nil
}

// traceNonNeg checks that x is a finite non-negative number.
func traceNonNeg(x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return fmt.Errorf("%v is not a finite non-negative number", x)
	}
	return nil
}

// traceLines calls f with each line of r (without its line ending) and its
// 1-based number, skipping blank lines.
func traceLines(r io.Reader, f func(line []byte, n int) error) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			b = bytes.TrimRight(b, "\r\n")
			if len(bytes.TrimSpace(b)) > 0 {
				if ferr := f(b, n); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// WriteTrace writes jobs in the trace format ReadTrace reads: JSON lines,
// one policy.Job per line in its JSON encoding (snake_case field names,
// arrival and deadline in seconds, throughputs in steps per second per
// accelerator type), in the order given. For example:
//
//	{"id":"a","gpus":1,"throughput":{"v100":2.5},"steps_total":900,"arrival":0}
//	{"id":"b","weight":5,"gpus":4,"throughput":{"k80":1,"v100":3},"steps_total":1e4,"arrival":360.5,"deadline":7200}
func WriteTrace(w io.Writer, jobs []policy.Job) error {
	bw := bufio.NewWriter(w)
	for i := range jobs {
		b, err := json.Marshal(jobs[i])
		if err != nil {
			return fmt.Errorf("sim: trace: job %q: %w", jobs[i].ID, err)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// traceJobKeys are the JSON keys of policy.Job.
var traceJobKeys = func() map[string]bool {
	keys := map[string]bool{"arrival": true, "deadline": true}
	t := reflect.TypeFor[policy.Job]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}()

// ReadTrace reads a trace written by WriteTrace: JSON lines, one
// policy.Job per line; blank lines are skipped. name names the input in
// errors, which wrap ErrTrace as a *TraceError naming the line, the job and
// the field, e.g. `trace.jsonl:3: job "x": gpus: -1 is negative`.
//
// Each job must have a unique non-empty ID, a GPU count of at least 1 (0 is
// allowed for elastic jobs), finite non-negative numbers, arrival and
// deadline in [0, 1e9] seconds, steps_done not above a non-zero
// steps_total, and a positive throughput on at least one accelerator type
// (unless elastic). Unknown keys are errors. The per-system facts
// (colocated, elastic, adaptive, sensitivity) are decoded but otherwise left
// for policy.Validate to check.
func ReadTrace(r io.Reader, name string) ([]policy.Job, error) {
	jobs := []policy.Job{}
	seen := map[string]int{}
	err := traceLines(r, func(line []byte, n int) error {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(line, &raw); err != nil {
			return traceErr(name, n, "", "", "%v", err)
		}
		var id string
		if v, ok := raw["id"]; ok {
			if err := json.Unmarshal(v, &id); err != nil {
				return traceErr(name, n, "", "id", "not a string")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(raw)) {
			if !traceJobKeys[k] {
				return traceErr(name, n, id, k, "unknown field")
			}
		}
		for _, k := range []string{"arrival", "deadline"} {
			v, ok := raw[k]
			if !ok {
				continue
			}
			var s float64
			if err := json.Unmarshal(v, &s); err != nil {
				return traceErr(name, n, id, k, "not a number")
			}
			if _, err := traceSeconds(s); err != nil {
				return traceErr(name, n, id, k, "%v", err)
			}
		}
		var j policy.Job
		if err := json.Unmarshal(line, &j); err != nil {
			if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
				return traceErr(name, n, id, strings.TrimPrefix(te.Field, "plain."), "cannot hold JSON %s", te.Value)
			}
			return traceErr(name, n, id, "", "%v", err)
		}
		if field, err := traceCheckJob(&j); err != nil {
			return &TraceError{File: name, Line: n, Job: id, Field: field, Err: err}
		}
		if prev, dup := seen[j.ID]; dup {
			return traceErr(name, n, id, "id", "duplicate of line %d", prev)
		}
		seen[j.ID] = n
		jobs = append(jobs, j)
		return nil
	})
	if err != nil {
		if _, ok := errors.AsType[*TraceError](err); !ok {
			err = fmt.Errorf("sim: trace %s: %w", name, err)
		}
		return nil, err
	}
	return jobs, nil
}

// traceCheckJob checks the common facts of a job read from a trace and
// returns the offending field.
func traceCheckJob(j *policy.Job) (string, error) {
	if j.ID == "" {
		return "id", errors.New("empty")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"weight", j.Weight},
		{"steps_done", j.StepsDone},
		{"steps_total", j.StepsTotal},
		{"attained_gpu_seconds", j.AttainedGPUSeconds},
		{"skew", j.Skew},
	} {
		if err := traceNonNeg(f.v); err != nil {
			return f.name, err
		}
	}
	switch {
	case j.Skew > 1:
		return "skew", fmt.Errorf("%v is above 1", j.Skew)
	case j.StepsTotal > 0 && j.StepsDone > j.StepsTotal:
		return "steps_done", fmt.Errorf("%v exceeds steps_total %v", j.StepsDone, j.StepsTotal)
	case j.GPUs < 0:
		return "gpus", fmt.Errorf("%d is negative", j.GPUs)
	case j.GPUs == 0 && j.Elastic == nil:
		return "gpus", errors.New("0; only elastic jobs may leave the GPU count to the policy")
	}
	runnable := false
	for _, k := range slices.Sorted(maps.Keys(j.Throughput)) {
		field := fmt.Sprintf("throughput[%s]", k)
		if k == "" {
			return field, errors.New("empty accelerator type")
		}
		if err := traceNonNeg(j.Throughput[k]); err != nil {
			return field, err
		}
		runnable = runnable || j.Throughput[k] > 0
	}
	if !runnable && j.Elastic == nil {
		return "throughput", errors.New("zero on every accelerator type; the job cannot run")
	}
	return "", nil
}

// ReadGavelTrace reads a trace in the format of Gavel's scheduler
// (utils.parse_trace): one job per line, 10 tab-separated fields
//
//	job_type command working_directory num_steps_arg needs_data_dir total_steps scale_factor priority_weight SLO arrival_time
//
// or the 7 fields of Gavel's older Philly-derived traces (traces/msr)
//
//	job_type command num_steps_arg needs_data_dir total_steps arrival_time scale_factor
//
// where those jobs get priority weight 1 and no SLO. Blank lines are
// skipped. The command, working directory and num_steps_arg are ignored;
// needs_data_dir must be 0 or 1.
//
// The i-th job of the file (from 0) gets ID fmt.Sprintf("job-%05d", i), as
// the Generator's jobs do. job_type names a template of p; the job's
// Throughput is p's figure for that template at its scale factor on every
// accelerator type p measures (zero where it cannot run), which must be
// positive on at least one type. GPUs is the scale factor, StepsTotal
// total_steps, Weight priority_weight (positive), Arrival arrival_time in
// seconds. An SLO above zero is a factor of the job's duration, as in
// Gavel's generator: Deadline = arrival + SLO × total_steps / T, with T the
// template's throughput at the scale factor on "v100" (or, if zero, its
// fastest type); an SLO of zero or below (Gavel writes -1) means none.
//
// The zero Profile means DefaultProfile. Errors wrap ErrTrace as a
// *TraceError naming the line, job ID and field.
func ReadGavelTrace(r io.Reader, name string, p Profile) ([]policy.Job, error) {
	if p.IsZero() {
		p = DefaultProfile()
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("sim: gavel trace %s: %w", name, err)
	}
	templates := make(map[string]bool, len(p.Templates))
	for _, t := range p.Templates {
		templates[t.Name] = true
	}
	accs := p.Accelerators()
	jobs := []policy.Job{}
	err := traceLines(r, func(line []byte, n int) error {
		id := fmt.Sprintf("job-%05d", len(jobs))
		bad := func(field, format string, args ...any) error {
			return traceErr(name, n, id, field, format, args...)
		}
		f := strings.Split(string(line), "\t")
		var jobType, needsData, steps, scale, weight, slo, arrival string
		switch len(f) {
		case 10:
			jobType, needsData, steps, scale, weight, slo, arrival = f[0], f[4], f[5], f[6], f[7], f[8], f[9]
		case 7:
			jobType, needsData, steps, arrival, scale, weight, slo = f[0], f[3], f[4], f[5], f[6], "1", "-1"
		default:
			return bad("", "%d tab-separated fields, want 10 (or 7 in the old format)", len(f))
		}
		if !templates[jobType] {
			return bad("job_type", "unknown template %q", jobType)
		}
		if needsData != "0" && needsData != "1" {
			return bad("needs_data_dir", "%q is not 0 or 1", needsData)
		}
		total, err := strconv.ParseFloat(steps, 64)
		if err != nil || math.IsInf(total, 0) || math.IsNaN(total) || total <= 0 {
			return bad("total_steps", "%q is not a positive number", steps)
		}
		s, err := strconv.Atoi(scale)
		if err != nil || s < 1 {
			return bad("scale_factor", "%q is not a positive integer", scale)
		}
		w, err := strconv.ParseFloat(weight, 64)
		if err != nil || math.IsInf(w, 0) || math.IsNaN(w) || w <= 0 {
			return bad("priority_weight", "%q is not a positive number", weight)
		}
		sloFactor, err := strconv.ParseFloat(slo, 64)
		if err != nil || math.IsInf(sloFactor, 0) || math.IsNaN(sloFactor) {
			return bad("SLO", "%q is not a number", slo)
		}
		a, err := strconv.ParseFloat(arrival, 64)
		if err != nil {
			return bad("arrival_time", "%q is not a number", arrival)
		}
		at, err := traceSeconds(a)
		if err != nil {
			return bad("arrival_time", "%v", err)
		}
		tp := make(map[allocation.Accelerator]float64, len(accs))
		runnable := false
		for _, acc := range accs {
			tp[acc] = p.Throughput(jobType, acc, s)
			runnable = runnable || tp[acc] > 0
		}
		if !runnable {
			return bad("scale_factor", "template %q cannot run on %d GPU(s) of any type in the profile", jobType, s)
		}
		j := policy.Job{
			ID:         id,
			Weight:     w,
			GPUs:       s,
			Arrival:    at,
			Throughput: tp,
			StepsTotal: total,
		}
		if sloFactor > 0 {
			d, err := traceSeconds(a + sloFactor*total/referenceThroughput(p, accs, jobType, s))
			if err != nil {
				return bad("SLO", "deadline: %v", err)
			}
			j.Deadline = d
		}
		jobs = append(jobs, j)
		return nil
	})
	if err != nil {
		if _, ok := errors.AsType[*TraceError](err); !ok {
			err = fmt.Errorf("sim: gavel trace %s: %w", name, err)
		}
		return nil, err
	}
	return jobs, nil
}

// ReadTiresiasTrace reads a trace in the CSV format of Tiresias' simulator,
// with a header row naming the columns, e.g.
//
//	job_id,num_gpu,submit_time,iterations,model_name,duration,interval
//
// Columns are found by name and may come in any order; job_id, num_gpu,
// submit_time and duration must be present, the others (iterations,
// model_name, interval, …) are ignored. Each row becomes a job with ID
// job_id (unique, non-empty), GPUs num_gpu (at least 1) and Arrival
// submit_time in seconds, in file order.
//
// Tiresias' traces give a job's run time (duration, seconds, positive) on
// its GPUs, not a throughput, and its cluster has one GPU type. So the job
// gets a throughput of 1 step per second on each of accs (at least one type
// is required) and StepsTotal = duration: it takes duration seconds on any
// of them. iterations is ignored because Tiresias' policies ignore it. An
// optional model_name column sets Skew for the models in TiresiasSkew.
// Errors wrap ErrTrace as a *TraceError naming the line, job and column.
func ReadTiresiasTrace(r io.Reader, name string, accs ...allocation.Accelerator) ([]policy.Job, error) {
	if len(accs) == 0 {
		return nil, fmt.Errorf("sim: tiresias trace %s: no accelerator type given", name)
	}
	for _, a := range accs {
		if a == "" {
			return nil, fmt.Errorf("sim: tiresias trace %s: empty accelerator type", name)
		}
	}
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, traceErr(name, 1, "", "", "no header row")
	}
	if err != nil {
		return nil, traceCSVErr(name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range []string{"job_id", "num_gpu", "submit_time", "duration"} {
		if _, ok := col[c]; !ok {
			return nil, traceErr(name, 1, "", c, "missing column in header %q", strings.Join(header, ","))
		}
	}
	jobs := []policy.Job{}
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return jobs, nil
		}
		if err != nil {
			return nil, traceCSVErr(name, err)
		}
		n, _ := cr.FieldPos(0)
		id := strings.TrimSpace(rec[col["job_id"]])
		bad := func(field, format string, args ...any) error {
			return traceErr(name, n, id, field, format, args...)
		}
		if id == "" {
			return nil, bad("job_id", "empty")
		}
		if prev, dup := seen[id]; dup {
			return nil, bad("job_id", "duplicate of line %d", prev)
		}
		seen[id] = n
		gpus, err := strconv.Atoi(strings.TrimSpace(rec[col["num_gpu"]]))
		if err != nil || gpus < 1 {
			return nil, bad("num_gpu", "%q is not a positive integer", rec[col["num_gpu"]])
		}
		submit, err := strconv.ParseFloat(strings.TrimSpace(rec[col["submit_time"]]), 64)
		if err != nil {
			return nil, bad("submit_time", "%q is not a number", rec[col["submit_time"]])
		}
		at, err := traceSeconds(submit)
		if err != nil {
			return nil, bad("submit_time", "%v", err)
		}
		dur, err := strconv.ParseFloat(strings.TrimSpace(rec[col["duration"]]), 64)
		if err != nil || math.IsNaN(dur) || dur <= 0 || dur > traceMaxSeconds {
			return nil, bad("duration", "%q is not a number in (0, %g]", rec[col["duration"]], float64(traceMaxSeconds))
		}
		tp := make(map[allocation.Accelerator]float64, len(accs))
		for _, a := range accs {
			tp[a] = 1
		}
		var skew float64
		if c, ok := col["model_name"]; ok {
			skew = TiresiasSkew[strings.ToLower(strings.TrimSpace(rec[c]))]
		}
		jobs = append(jobs, policy.Job{
			ID:         id,
			GPUs:       gpus,
			Arrival:    at,
			Throughput: tp,
			StepsTotal: dur,
			Skew:       skew,
		})
	}
}

// TiresiasSkew is the model skew, the share of a model's parameters in its
// largest tensor, of the models in Tiresias' traces, from the tensor sizes
// its simulator lists (TensorFlow's benchmark CNNs). VGG and AlexNet are
// dominated by one fully connected layer; ResNet and Inception are not.
var TiresiasSkew = map[string]float64{
	"vgg19": 0.717, "vgg16": 0.744, "vgg11": 0.774, "alexnet": 0.611,
	"resnet152": 0.060, "resnet101": 0.075, "resnet50": 0.112,
	"inception4": 0.044, "inception3": 0.138,
}

// traceCSVErr turns an encoding/csv error into a TraceError.
func traceCSVErr(name string, err error) error {
	if pe, ok := errors.AsType[*csv.ParseError](err); ok {
		return &TraceError{File: name, Line: pe.Line, Err: pe.Err}
	}
	return fmt.Errorf("sim: tiresias trace %s: %w", name, err)
}

// PairKey names one co-located throughput measurement: Template on GPUs
// accelerators of type Accelerator sharing them with Partner on
// PartnerGPUs.
type PairKey struct {
	Template    string
	Partner     string
	Accelerator allocation.Accelerator
	GPUs        int
	PartnerGPUs int
}

// Pairs holds co-located (space-sharing) throughputs in steps per second:
// for each PairKey, the template's throughput and the partner's, in that
// order. A pair measured as [0, 0] means the two cannot share.
type Pairs map[PairKey][2]float64

// LoadGavelThroughputs reads Gavel's throughput file
// (simulation_throughputs.json or physical_cluster_throughputs.json):
//
//	{"<worker type>": {"('<job type>', <scale factor>)": {
//	    "null": <isolated steps/s>,
//	    "('<other job type>', <scale factor>)": [<own steps/s>, <other's steps/s>], ...}}}
//
// It returns the isolated ("null") throughputs as a Profile, and the
// co-located ones as Pairs. Worker types whose name ends in
// "_unconsolidated" (multi-GPU jobs spread over servers, unused by Gavel's
// scheduler) are skipped, so that a profile read from Gavel's file measures
// "v100", "p100" and "k80" as DefaultProfile does.
//
// The profile's templates are the job types found: those of Templates()
// first, in its order and with its model and batch size, then the others
// sorted by name, their model and batch size parsed from a name of the form
// "<model> (batch size <n>)". A template is distributed if some entry has a
// scale factor above 1. Every job type must have a "null" entry; numbers
// must be finite and non-negative. The profile is checked with
// Profile.Validate. Errors wrap ErrTrace and name the worker type and keys.
func LoadGavelThroughputs(r io.Reader) (Profile, Pairs, error) {
	const file = "gavel throughputs"
	var raw map[string]map[string]map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return Profile{}, nil, &TraceError{File: file, Err: err}
	}
	p := Profile{Throughputs: map[ProfileKey]float64{}}
	pairs := Pairs{}
	multi := map[string]bool{}
	for _, worker := range slices.Sorted(maps.Keys(raw)) {
		if strings.HasSuffix(worker, "_unconsolidated") {
			continue
		}
		if worker == "" {
			return Profile{}, nil, traceErr(file, 0, "", "", "empty worker type")
		}
		acc := allocation.Accelerator(worker)
		for _, key := range slices.Sorted(maps.Keys(raw[worker])) {
			field := fmt.Sprintf("%s[%s]", worker, key)
			tmpl, s, err := traceParseJobType(key)
			if err != nil {
				return Profile{}, nil, traceErr(file, 0, "", field, "%v", err)
			}
			multi[tmpl] = multi[tmpl] || s > 1
			entries := raw[worker][key]
			null, ok := entries["null"]
			if !ok {
				return Profile{}, nil, traceErr(file, 0, "", field, `no "null" (isolated) entry`)
			}
			var v float64
			if err := json.Unmarshal(null, &v); err != nil {
				return Profile{}, nil, traceErr(file, 0, "", field+"[null]", "not a number")
			}
			if err := traceNonNeg(v); err != nil {
				return Profile{}, nil, traceErr(file, 0, "", field+"[null]", "%v", err)
			}
			p.Throughputs[ProfileKey{Template: tmpl, Accelerator: acc, GPUs: s}] = v
			for _, other := range slices.Sorted(maps.Keys(entries)) {
				if other == "null" {
					continue
				}
				ofield := fmt.Sprintf("%s[%s]", field, other)
				partner, ps, err := traceParseJobType(other)
				if err != nil {
					return Profile{}, nil, traceErr(file, 0, "", ofield, "%v", err)
				}
				var pair [2]float64
				var vals []float64
				if err := json.Unmarshal(entries[other], &vals); err != nil || len(vals) != 2 {
					return Profile{}, nil, traceErr(file, 0, "", ofield, "not a pair of numbers")
				}
				for i, x := range vals {
					if err := traceNonNeg(x); err != nil {
						return Profile{}, nil, traceErr(file, 0, "", ofield, "%v", err)
					}
					pair[i] = x
				}
				pairs[PairKey{Template: tmpl, Partner: partner, Accelerator: acc, GPUs: s, PartnerGPUs: ps}] = pair
			}
		}
	}
	known := Templates()
	for _, t := range known {
		if d, ok := multi[t.Name]; ok {
			t.Distributed = d
			p.Templates = append(p.Templates, t)
			delete(multi, t.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(multi)) {
		t := Template{Name: name, Model: name, Distributed: multi[name]}
		if m, b, ok := strings.Cut(name, " (batch size "); ok && strings.HasSuffix(b, ")") {
			if n, err := strconv.Atoi(strings.TrimSuffix(b, ")")); err == nil && n > 0 {
				t.Model, t.BatchSize = m, n
			}
		}
		p.Templates = append(p.Templates, t)
	}
	if err := p.Validate(); err != nil {
		return Profile{}, nil, &TraceError{File: file, Err: err}
	}
	return p, pairs, nil
}

// traceParseJobType parses Gavel's job-type key "('<name>', <scale>)".
func traceParseJobType(key string) (string, int, error) {
	rest, ok := strings.CutPrefix(key, "('")
	if ok {
		rest, ok = strings.CutSuffix(rest, ")")
	}
	i := strings.LastIndex(rest, "', ")
	if !ok || i < 0 {
		return "", 0, fmt.Errorf("job type %q is not of the form ('<name>', <scale factor>)", key)
	}
	name := rest[:i]
	s, err := strconv.Atoi(rest[i+3:])
	if err != nil || s < 1 || name == "" {
		return "", 0, fmt.Errorf("job type %q is not of the form ('<name>', <scale factor>)", key)
	}
	return name, s, nil
}
