package workload

import (
	"errors"
	"fmt"
	"slices"
)

// Mode is how a job adapts its batch size during training.
type Mode string

// The adaptation modes of Shockwave's traces.
const (
	// Static jobs keep their initial batch size.
	Static Mode = "static"
	// GNS jobs double their batch size at fixed epochs, following the
	// gradient noise scale, and never shrink it.
	GNS Mode = "gns"
	// Accordion jobs use their initial batch size in critical regimes and
	// the model's largest batch size elsewhere.
	Accordion Mode = "accordion"
)

// ErrAdaptation is wrapped by the errors of Schedule and Regimes, and by
// Adaptive.Prepare's, about an unknown model or mode or bad numbers; the
// message names the argument concerned (model, mode, bs0, gpus, epochs).
var ErrAdaptation = errors.New("sim: invalid adaptation")

// adaptModel holds the facts of one of Shockwave's models.
type adaptModel struct {
	// samples is the number of samples per epoch of the model's dataset.
	samples int
	// maxBS is the largest batch size, the adaptation cap.
	maxBS int
	// critical reports whether epoch e is in an Accordion critical regime
	// for a job starting at batch size bs0; nil means Accordion does not
	// apply and the job stays static.
	critical func(e, bs0 int) bool
}

// adaptModels are Shockwave's models (scheduler/utils.py, job_table.py),
// keyed as in its traces.
var adaptModels = map[string]adaptModel{
	"ResNet-18": {samples: 50000, maxBS: 256, critical: func(e, bs0 int) bool {
		r := 10
		if bs0 > 128 {
			r = 20
		}
		return e < r || (e >= 150 && e < 160) || (e >= 250 && e < 260)
	}},
	"ResNet-50": {samples: 100000, maxBS: 128, critical: func(e, _ int) bool {
		return e%30 < 10
	}},
	"Transformer": {samples: 10000, maxBS: 128},
	"LM": {samples: 59675, maxBS: 80, critical: func(e, _ int) bool {
		return e < 10
	}},
	"Recommendation": {samples: 117907, maxBS: 8192, critical: func(e, bs0 int) bool {
		r := 10
		switch {
		case bs0 <= 1024:
			r = 30
		case bs0 <= 2048:
			r = 40
		}
		return e < r || (e >= 60 && e < 70) || (e >= 80 && e < 90)
	}},
}

// gnsKey names one entry of the GNS stage table.
type gnsKey struct {
	model   string
	bs0, sf int
}

// gnsStages is Shockwave's GNS table (get_gns_bs_pattern in
// scheduler/utils.py, as probed into model_metadata.json): for each model,
// initial batch size and scale factor, the epochs at which the batch size
// changes and the batch size from then on. The first stage, bs0 from epoch
// 0, is implicit. Combinations not listed stay static.
var gnsStages = map[gnsKey][][2]int{
	{"ResNet-18", 16, 1}:        {{31, 32}, {41, 64}, {51, 128}, {71, 256}},
	{"ResNet-18", 16, 2}:        {{21, 32}, {31, 64}, {91, 128}, {111, 256}},
	{"ResNet-18", 16, 4}:        {{11, 32}, {21, 64}, {81, 128}, {91, 256}},
	{"ResNet-18", 32, 1}:        {{21, 64}, {31, 128}, {51, 256}},
	{"ResNet-18", 32, 2}:        {{11, 64}, {21, 128}, {41, 256}},
	{"ResNet-18", 32, 4}:        {{21, 64}, {31, 128}, {61, 256}},
	{"ResNet-18", 64, 1}:        {{11, 128}, {31, 256}},
	{"ResNet-18", 64, 2}:        {{21, 128}, {41, 256}},
	{"ResNet-18", 64, 4}:        {{11, 128}, {61, 256}},
	{"ResNet-18", 128, 1}:       {{11, 256}},
	{"ResNet-18", 128, 2}:       {{41, 256}},
	{"ResNet-18", 128, 4}:       {{11, 256}},
	{"ResNet-50", 32, 2}:        {{101, 64}, {111, 128}},
	{"ResNet-50", 32, 4}:        {{131, 64}, {221, 128}},
	{"ResNet-50", 64, 1}:        {{101, 128}},
	{"ResNet-50", 64, 2}:        {{81, 128}},
	{"ResNet-50", 64, 4}:        {{191, 128}},
	{"LM", 5, 1}:                {{31, 10}, {41, 20}, {61, 40}, {71, 80}},
	{"LM", 5, 2}:                {{31, 10}, {51, 20}, {61, 40}, {71, 80}},
	{"LM", 5, 4}:                {{11, 10}, {31, 20}, {71, 40}, {91, 80}},
	{"LM", 10, 1}:               {{11, 20}, {21, 40}, {41, 80}},
	{"LM", 10, 2}:               {{11, 20}, {31, 40}, {41, 80}},
	{"LM", 10, 4}:               {{11, 20}, {31, 40}, {61, 80}},
	{"LM", 20, 1}:               {{11, 40}, {41, 80}},
	{"LM", 20, 2}:               {{31, 40}, {41, 80}},
	{"LM", 20, 4}:               {{11, 40}, {61, 80}},
	{"LM", 40, 1}:               {{11, 80}},
	{"LM", 40, 2}:               {{11, 80}},
	{"LM", 40, 4}:               {{61, 80}},
	{"Recommendation", 512, 1}:  {{21, 1024}, {41, 2048}, {71, 4096}, {91, 8192}},
	{"Recommendation", 1024, 1}: {{21, 2048}, {51, 4096}, {91, 8192}},
	{"Recommendation", 2048, 1}: {{21, 4096}, {41, 8192}},
	{"Recommendation", 4096, 1}: {{41, 8192}},
}

// adaptCheck checks the arguments of Schedule and Regimes and returns the
// model's facts, or the offending argument and the problem.
func adaptCheck(model string, mode Mode, bs0, gpus int) (adaptModel, string, error) {
	m, ok := adaptModels[model]
	switch {
	case !ok:
		return m, "model", fmt.Errorf("unknown model %q (known: ResNet-18, ResNet-50, Transformer, LM, Recommendation)", model)
	case mode != Static && mode != GNS && mode != Accordion:
		return m, "mode", fmt.Errorf("unknown mode %q (known: static, gns, accordion)", mode)
	case bs0 <= 0 || bs0 > m.maxBS:
		return m, "bs0", fmt.Errorf("%d is not in [1, %d], the batch sizes of %s", bs0, m.maxBS, model)
	case gpus <= 0:
		return m, "gpus", fmt.Errorf("%d is not positive", gpus)
	}
	return m, "", nil
}

func adaptErr(field string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrAdaptation, field, err)
}

// adaptMaxEpochs bounds the epochs of a schedule.
const adaptMaxEpochs = 1_000_000

// Schedule returns the batch size of each of a job's epochs (len = epochs)
// for model (Shockwave's keys "ResNet-18", "ResNet-50", "Transformer", "LM"
// and "Recommendation"), mode, initial batch size bs0 and gang size gpus.
// Errors wrap ErrAdaptation and name the argument: an unknown model or
// mode, bs0 not in [1, the model's largest batch size], gpus below 1, or
// epochs not in [1, 10⁶].
//
// GNS follows Shockwave's stage table for (model, bs0, gpus): epoch e uses
// the batch size of the last stage that starts at or before e; a
// combination without an entry (every Transformer job, every 8-GPU job,
// ResNet-50 at 16, …) stays static. Shockwave's own code breaks out of its
// loop one epoch early for stages after the first, so that its last epoch
// keeps an earlier batch size; that quirk is fixed here, and a GNS
// schedule may therefore differ from Shockwave's profile in its final epoch.
//
// Accordion uses the model's largest batch size in epoch e if e is outside
// the model's critical regimes and e > 0.3·epochs, and bs0 otherwise: the
// rule with which Shockwave computes its profiles (the forecasts and the
// finish-time-fairness denominators). Shockwave's simulator moves jobs with
// a second rule without the 30 % clause; one rule is used here for both,
// so that the simulated job is the profiled one. Accordion does not apply
// to the Transformer, which stays static.
func Schedule(model string, mode Mode, bs0, gpus, epochs int) ([]int, error) {
	rule, err := scheduleRule(model, mode, bs0, gpus, epochs)
	if err != nil {
		return nil, err
	}
	bs := make([]int, epochs)
	for e := range bs {
		bs[e] = rule(e)
	}
	return bs, nil
}

// Stage is a run of epochs at one batch size: the epochs before End and
// from the previous stage's End.
type Stage struct {
	Batch, End int
}

// Stages returns the schedule of Schedule as its runs of equal batch
// sizes, in memory proportional to the runs rather than the epochs.
func Stages(model string, mode Mode, bs0, gpus, epochs int) ([]Stage, error) {
	rule, err := scheduleRule(model, mode, bs0, gpus, epochs)
	if err != nil {
		return nil, err
	}
	var st []Stage
	for e := range epochs {
		b := rule(e)
		if n := len(st); n > 0 && st[n-1].Batch == b {
			st[n-1].End = e + 1
		} else {
			st = append(st, Stage{Batch: b, End: e + 1})
		}
	}
	return st, nil
}

// scheduleRule checks Schedule's arguments and returns its rule: the batch
// size of epoch e.
func scheduleRule(model string, mode Mode, bs0, gpus, epochs int) (func(e int) int, error) {
	m, field, err := adaptCheck(model, mode, bs0, gpus)
	if err != nil {
		return nil, adaptErr(field, err)
	}
	if epochs < 1 || epochs > adaptMaxEpochs {
		return nil, adaptErr("epochs", fmt.Errorf("%d is not in [1, %d]", epochs, adaptMaxEpochs))
	}
	switch {
	case mode == GNS:
		stages := gnsStages[gnsKey{model, bs0, gpus}]
		return func(e int) int {
			b := bs0
			for _, st := range stages {
				if e >= st[0] {
					b = min(st[1], m.maxBS)
				}
			}
			return b
		}, nil
	case mode == Accordion && m.critical != nil:
		return func(e int) int {
			if !m.critical(e, bs0) && float64(e) > 0.3*float64(epochs) {
				return m.maxBS
			}
			return bs0
		}, nil
	}
	return func(int) int { return bs0 }, nil
}

// Regimes returns the batch sizes the rule of Schedule may give this job,
// ascending, whatever its length: for GNS, bs0 and the batch size of every
// stage of the (model, bs0, gpus) entry; for Accordion, bs0 and the
// model's largest batch size; otherwise bs0 alone. They are derived from
// the rule, not from a realised schedule, so a short job may never reach
// some of them. Errors are those of Schedule.
func Regimes(model string, mode Mode, bs0, gpus int) ([]int, error) {
	m, field, err := adaptCheck(model, mode, bs0, gpus)
	if err != nil {
		return nil, adaptErr(field, err)
	}
	rs := []int{bs0}
	switch mode {
	case GNS:
		for _, st := range gnsStages[gnsKey{model, bs0, gpus}] {
			rs = append(rs, min(st[1], m.maxBS))
		}
	case Accordion:
		if m.critical != nil {
			rs = append(rs, m.maxBS)
		}
	}
	slices.Sort(rs)
	return slices.Compact(rs), nil
}
