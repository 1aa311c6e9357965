package workload

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
)

// ShockwaveOptions tunes ReadShockwaveTrace; the zero value reads
// throughputs for "v100", as Shockwave does.
type ShockwaveOptions struct {
	// Accelerator is the GPU type whose throughputs give the epoch
	// durations, and on which the jobs can run; empty means "v100".
	Accelerator allocation.Accelerator
}

// shockwaveFields are the fields of a line of a Shockwave trace.
var shockwaveFields = [...]string{
	"job_type", "command", "working_directory", "num_steps_arg", "needs_data_dir", "total_steps",
	"scale_factor", "mode", "priority_weight", "SLO", "duration_s", "arrival_s",
}

// shockwaveJobType parses a job type "<model> (batch size <n>)".
func shockwaveJobType(s string) (string, int, bool) {
	m, rest, ok := strings.Cut(s, " (batch size ")
	if !ok {
		return "", 0, false
	}
	rest, ok = strings.CutSuffix(rest, ")")
	if !ok {
		return "", 0, false
	}
	bs, err := strconv.Atoi(rest)
	if err != nil || bs <= 0 || m == "" {
		return "", 0, false
	}
	return m, bs, true
}

// ReadShockwaveTrace reads a trace of Shockwave (NSDI'23): one job per
// line, 12 tab-separated fields
//
//	job_type, command, working_directory, num_steps_arg, needs_data_dir,
//	total_steps, scale_factor, mode, priority_weight, SLO, duration_s, arrival_s
//
// with job_type of the form "ResNet-18 (batch size 32)" (one of Shockwave's
// models, see Schedule) and mode "static", "gns" or "accordion". Blank
// lines are skipped; command, working_directory, num_steps_arg, SLO and
// duration_s are checked for form but otherwise ignored, as Shockwave does.
// p holds the throughputs in steps per second, from LoadGavelThroughputs on
// Shockwave's tacc_throughputs.json or wisr_throughputs.json.
//
// Job i (from 0, in line order) gets ID strconv.Itoa(i), Arrival
// arrival_s, GPUs scale_factor and Weight priority_weight. It trains for E =
// ⌈total_steps / ⌈samples/bs0⌉⌉ epochs, with samples the model's epochs
// samples and bs0 its initial batch size, and its StepsTotal is E: a step
// is an epoch (see Adaptive). An epoch at batch size b takes
// (samples/b)/thr seconds, thr the profile's throughput of "<model> (batch
// size b)" on scale_factor GPUs of o.Accelerator. The job's Adaptive facts
// are its Regimes (those of the rule, see Regimes), their EpochSeconds,
// Epochs E, zero History and BatchSize bs0; its Throughput is 1 epoch per
// EpochSeconds of bs0 on o.Accelerator. A regime the rule allows but the
// profile cannot run (throughput missing or zero) is dropped from Regimes
// if the job's schedule never reaches it, and is an error otherwise.
//
// It also returns the Adaptive model holding each job's Adaptation (its
// Schedule and epoch durations), with Round zero; set Round to the
// simulation's. Errors wrap ErrTrace as a *TraceError naming the line, job
// and field.
func ReadShockwaveTrace(r io.Reader, name string, p Profile, o ShockwaveOptions) ([]policy.Job, *Adaptive, error) {
	acc := cmp.Or(o.Accelerator, "v100")
	jobs := []policy.Job{}
	model := &Adaptive{Jobs: map[string]*Adaptation{}}
	err := traceLines(r, func(line []byte, n int) error {
		id := strconv.Itoa(len(jobs))
		bad := func(field, format string, args ...any) error {
			return traceErr(name, n, id, field, format, args...)
		}
		row, err := parseShockwaveRow(string(line), bad)
		if err != nil {
			return err
		}
		ad, x, err := row.adapt(p, acc, bad)
		if err != nil {
			return err
		}
		j := policy.Job{
			ID:         id,
			Weight:     row.weight,
			GPUs:       row.gpus,
			Arrival:    row.arrival,
			Throughput: map[allocation.Accelerator]float64{acc: 1 / ad.EpochSeconds[ad.Batch[0]]},
			StepsTotal: float64(len(ad.Batch)),
			Adaptive:   x,
		}
		model.Jobs[id] = ad
		jobs = append(jobs, j)
		return nil
	})
	if err != nil {
		if _, ok := errors.AsType[*TraceError](err); !ok {
			err = fmt.Errorf("sim: shockwave trace %s: %w", name, err)
		}
		return nil, nil, err
	}
	return jobs, model, nil
}

// shockwaveBad makes the error of a field of the line being read.
type shockwaveBad func(field, format string, args ...any) error

// shockwaveRow is the part of a Shockwave trace line a job is made of.
type shockwaveRow struct {
	model         string
	bs0, gpus     int
	mode          Mode
	total, weight float64
	arrival       time.Duration
}

// parseShockwaveRow splits a line into its fields and checks them all,
// also those only checked for form, returning the first bad one.
func parseShockwaveRow(line string, bad shockwaveBad) (shockwaveRow, error) {
	var row shockwaveRow
	f := strings.Split(line, "\t")
	if len(f) != len(shockwaveFields) {
		return row, bad("", "%d tab-separated fields, want %d", len(f), len(shockwaveFields))
	}
	var ok bool
	if row.model, row.bs0, ok = shockwaveJobType(f[0]); !ok {
		return row, bad("job_type", "%q is not of the form \"<model> (batch size <n>)\"", f[0])
	}
	if f[4] != "0" && f[4] != "1" {
		return row, bad("needs_data_dir", "%q is not 0 or 1", f[4])
	}
	var err error
	if row.total, err = strconv.ParseFloat(f[5], 64); err != nil || math.IsInf(row.total, 0) || math.IsNaN(row.total) || row.total <= 0 {
		return row, bad("total_steps", "%q is not a positive number", f[5])
	}
	if row.gpus, err = strconv.Atoi(f[6]); err != nil || row.gpus < 1 {
		return row, bad("scale_factor", "%q is not a positive integer", f[6])
	}
	row.mode = Mode(f[7])
	if row.weight, err = strconv.ParseFloat(f[8], 64); err != nil || math.IsInf(row.weight, 0) || math.IsNaN(row.weight) || row.weight <= 0 {
		return row, bad("priority_weight", "%q is not a positive number", f[8])
	}
	if x, err := strconv.ParseFloat(f[9], 64); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return row, bad("SLO", "%q is not a number", f[9])
	}
	if x, err := strconv.ParseFloat(f[10], 64); err != nil || traceNonNeg(x) != nil {
		return row, bad("duration_s", "%q is not a finite non-negative number", f[10])
	}
	a, err := strconv.ParseFloat(f[11], 64)
	if err != nil {
		return row, bad("arrival_s", "%q is not a number", f[11])
	}
	if row.arrival, err = traceSeconds(a); err != nil {
		return row, bad("arrival_s", "%v", err)
	}
	return row, nil
}

// adapt returns the row's Adaptation and Adaptive facts: its schedule over
// the epochs total_steps make, and the epoch durations of its regimes in
// the profile p on type acc.
func (row shockwaveRow) adapt(p Profile, acc allocation.Accelerator, bad shockwaveBad) (*Adaptation, *policy.Adaptive, error) {
	m, mode, bs0, sf := row.model, row.mode, row.bs0, row.gpus
	facts, field, err := adaptCheck(m, mode, bs0, sf)
	if err != nil {
		return nil, nil, bad(map[string]string{"model": "job_type", "bs0": "job_type", "mode": "mode", "gpus": "scale_factor"}[field], "%v", err)
	}
	perEpoch := math.Ceil(float64(facts.samples) / float64(bs0))
	epochs := math.Ceil(row.total / perEpoch)
	if epochs > adaptMaxEpochs {
		return nil, nil, bad("total_steps", "%v steps make %v epochs, above %d", row.total, epochs, adaptMaxEpochs)
	}
	sched, err := Schedule(m, mode, bs0, sf, int(epochs))
	if err != nil {
		return nil, nil, bad("total_steps", "%v", err)
	}
	rs, err := Regimes(m, mode, bs0, sf)
	if err != nil {
		return nil, nil, bad("mode", "%v", err)
	}
	return row.epochSeconds(p, acc, facts.samples, sched, rs, bad)
}

// epochSeconds times an epoch at each regime rs from the profile p on type
// acc. A regime the profile cannot run is dropped if the schedule sched
// never reaches it, and is an error otherwise.
func (row shockwaveRow) epochSeconds(p Profile, acc allocation.Accelerator, samples int, sched, rs []int, bad shockwaveBad) (*Adaptation, *policy.Adaptive, error) {
	m, sf := row.model, row.gpus
	ad := &Adaptation{Batch: sched, EpochSeconds: make(map[int]float64, len(rs))}
	x := &policy.Adaptive{Epochs: len(sched), BatchSize: row.bs0}
	for _, b := range rs {
		tmpl := fmt.Sprintf("%s (batch size %d)", m, b)
		thr := p.Throughput(tmpl, acc, sf)
		sec := float64(samples) / float64(b) / thr
		if !(thr > 0) || math.IsInf(sec, 0) || math.IsNaN(sec) {
			if slices.Contains(sched, b) {
				return nil, nil, bad("job_type", "batch size %d: the profile has no throughput for %q on %d GPU(s) of type %s", b, tmpl, sf, acc)
			}
			continue
		}
		ad.EpochSeconds[b] = sec
		x.Regimes = append(x.Regimes, b)
		x.EpochSeconds = append(x.EpochSeconds, sec)
	}
	x.History = make([]int, len(x.Regimes))
	return ad, x, nil
}

// ReadShockwaveTraceFile reads the Shockwave trace at path; see
// ReadShockwaveTrace.
func ReadShockwaveTraceFile(path string, p Profile, o ShockwaveOptions) ([]policy.Job, *Adaptive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return ReadShockwaveTrace(f, path, p, o)
}
