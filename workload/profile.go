package workload

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/dlsched/dlsched/allocation"
)

// Template is one of the job templates a workload generator draws from: a
// model trained with a fixed batch size, as in Gavel's job table.
type Template struct {
	// Name identifies the template and keys its throughputs in a Profile,
	// e.g. "ResNet-50 (batch size 64)"; it follows Gavel's job-type names.
	Name string `json:"name"`
	// Model is the model the template trains, e.g. "ResNet-50".
	Model string `json:"model"`
	// BatchSize is the batch size; zero for templates without one (A3C,
	// CycleGAN).
	BatchSize int `json:"batch_size,omitempty"`
	// Distributed reports whether the template may run on more than one
	// GPU, i.e. with a scale factor above 1.
	Distributed bool `json:"distributed,omitempty"`
}

// Templates returns Gavel's 26 job templates in the order of its job table:
// ResNet-18 (CIFAR-10; batch sizes 16–256), ResNet-50 (ImageNet; 16–128),
// Transformer (Multi30k; 16–256), LM (WikiText-2 LSTM; 5–80), all
// distributed, then Recommendation (ML-20M autoencoder; 512–8192), A3C (Pong)
// and CycleGAN (monet2photo), which run on one GPU only. The slice is a fresh
// copy.
func Templates() []Template {
	var ts []Template
	add := func(model string, distributed bool, batches ...int) {
		for _, b := range batches {
			ts = append(ts, Template{
				Name:        fmt.Sprintf("%s (batch size %d)", model, b),
				Model:       model,
				BatchSize:   b,
				Distributed: distributed,
			})
		}
	}
	add("ResNet-18", true, 16, 32, 64, 128, 256)
	add("ResNet-50", true, 16, 32, 64, 128)
	add("Transformer", true, 16, 32, 64, 128, 256)
	add("LM", true, 5, 10, 20, 40, 80)
	add("Recommendation", false, 512, 1024, 2048, 4096, 8192)
	ts = append(ts,
		Template{Name: "A3C", Model: "A3C"},
		Template{Name: "CycleGAN", Model: "CycleGAN"})
	return ts
}

// ProfileKey names one measured throughput: a template running alone on
// GPUs accelerators of one type.
type ProfileKey struct {
	// Template is a Template's Name.
	Template string
	// Accelerator is the GPU type.
	Accelerator allocation.Accelerator
	// GPUs is the scale factor: the number of GPUs the job uses at once.
	GPUs int
}

// Profile is a table of isolated training throughputs, in steps per second
// using all of the job's GPUs, of job templates on accelerator types at
// several scale factors. The zero value is an empty profile; a Generator
// given one uses DefaultProfile instead.
type Profile struct {
	// Templates are the templates a generator draws from, uniformly, in
	// this order. Names must be unique and non-empty.
	Templates []Template
	// Throughputs holds the measured throughputs; a missing entry counts
	// as zero, meaning the template cannot run that way.
	Throughputs map[ProfileKey]float64
}

// Throughput returns the steps per second of template on gpus accelerators
// of type acc, or zero if the profile has no such measurement.
func (p Profile) Throughput(template string, acc allocation.Accelerator, gpus int) float64 {
	return p.Throughputs[ProfileKey{Template: template, Accelerator: acc, GPUs: gpus}]
}

// Accelerators returns the accelerator types the profile measures, sorted
// by name.
func (p Profile) Accelerators() []allocation.Accelerator {
	seen := make(map[allocation.Accelerator]bool)
	for k := range p.Throughputs {
		seen[k.Accelerator] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// IsZero reports whether the profile has neither templates nor throughputs.
func (p Profile) IsZero() bool {
	return len(p.Templates) == 0 && len(p.Throughputs) == 0
}

// Validate reports whether the profile has at least one template, unique
// non-empty template names, and throughputs that are finite and
// non-negative, keyed by known templates, named accelerator types and
// positive scale factors (above 1 only for distributed templates).
func (p Profile) Validate() error {
	if len(p.Templates) == 0 {
		return fmt.Errorf("sim: profile: no templates")
	}
	distributed := make(map[string]bool, len(p.Templates))
	for i, t := range p.Templates {
		if t.Name == "" {
			return fmt.Errorf("sim: profile: template %d: empty name", i)
		}
		if _, dup := distributed[t.Name]; dup {
			return fmt.Errorf("sim: profile: template %q: duplicate name", t.Name)
		}
		distributed[t.Name] = t.Distributed
	}
	keys := slices.SortedFunc(maps.Keys(p.Throughputs), compareProfileKeys)
	for _, k := range keys {
		v := p.Throughputs[k]
		d, known := distributed[k.Template]
		switch {
		case !known:
			return fmt.Errorf("sim: profile: throughput of unknown template %q", k.Template)
		case k.Accelerator == "":
			return fmt.Errorf("sim: profile: %q: empty accelerator", k.Template)
		case k.GPUs < 1:
			return fmt.Errorf("sim: profile: %q on %s: scale factor %d is not positive", k.Template, k.Accelerator, k.GPUs)
		case k.GPUs > 1 && !d && v > 0:
			return fmt.Errorf("sim: profile: %q on %s: scale factor %d for a template that is not distributed", k.Template, k.Accelerator, k.GPUs)
		case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
			return fmt.Errorf("sim: profile: %q on %d %s: throughput %v is not a finite non-negative number", k.Template, k.GPUs, k.Accelerator, v)
		}
	}
	return nil
}

func compareProfileKeys(a, b ProfileKey) int {
	switch {
	case a.Template != b.Template:
		if a.Template < b.Template {
			return -1
		}
		return 1
	case a.Accelerator != b.Accelerator:
		if a.Accelerator < b.Accelerator {
			return -1
		}
		return 1
	}
	return a.GPUs - b.GPUs
}

// DefaultProfile returns Gavel's simulation profile: the isolated
// throughputs of the 26 Templates on one, two, four and eight GPUs (the
// latter for the 19 distributed templates only) of types "v100", "p100" and
// "k80". ResNet-50 with batch size 128 cannot run on more than one K80; its
// throughput there is zero. The profile is a fresh copy.
func DefaultProfile() Profile {
	p := Profile{
		Templates:   Templates(),
		Throughputs: make(map[ProfileKey]float64, 3*len(gavelIsolated)),
	}
	for _, r := range gavelIsolated {
		p.Throughputs[ProfileKey{r.template, "v100", r.gpus}] = r.v100
		p.Throughputs[ProfileKey{r.template, "p100", r.gpus}] = r.p100
		p.Throughputs[ProfileKey{r.template, "k80", r.gpus}] = r.k80
	}
	return p
}

// gavelIsolated holds the isolated throughputs, in steps per second on all
// of the job's GPUs, that Gavel (Narayanan et al., OSDI'20) measured for its
// job templates: the "null" (no co-located partner) entries of the
// consolidated types "v100", "p100" and "k80" in
// scheduler/simulation_throughputs.json of the repository
// stanford-futuredata/gavel (commit c4fa40097339e9608ab71fd64c8bdea96a5e4a4c),
// Copyright (c) 2020 Stanford Future Data Systems, MIT License. The figures
// are rounded to 4 significant digits; co-located pair throughputs and the
// "*_unconsolidated" types are left out.
var gavelIsolated = [...]struct {
	template        string
	gpus            int
	v100, p100, k80 float64
}{
	{"ResNet-18 (batch size 16)", 1, 32.35, 35.87, 4.795},
	{"ResNet-18 (batch size 16)", 2, 100.1, 60.91, 8.758},
	{"ResNet-18 (batch size 16)", 4, 123.9, 94.32, 16.12},
	{"ResNet-18 (batch size 16)", 8, 382.6, 130.1, 26.92},
	{"ResNet-18 (batch size 32)", 1, 29.95, 35.83, 7.176},
	{"ResNet-18 (batch size 32)", 2, 94.25, 57.52, 13.18},
	{"ResNet-18 (batch size 32)", 4, 114.7, 97.04, 22.53},
	{"ResNet-18 (batch size 32)", 8, 340.0, 142.0, 43.92},
	{"ResNet-18 (batch size 64)", 1, 24.09, 22.30, 7.052},
	{"ResNet-18 (batch size 64)", 2, 74.14, 41.48, 12.50},
	{"ResNet-18 (batch size 64)", 4, 95.59, 74.99, 21.63},
	{"ResNet-18 (batch size 64)", 8, 255.8, 120.0, 42.64},
	{"ResNet-18 (batch size 128)", 1, 17.99, 11.68, 1.807},
	{"ResNet-18 (batch size 128)", 2, 23.99, 24.23, 3.631},
	{"ResNet-18 (batch size 128)", 4, 69.95, 45.35, 6.982},
	{"ResNet-18 (batch size 128)", 8, 162.1, 85.08, 13.66},
	{"ResNet-18 (batch size 256)", 1, 10.30, 7.723, 0.8856},
	{"ResNet-18 (batch size 256)", 2, 15.88, 14.23, 1.674},
	{"ResNet-18 (batch size 256)", 4, 27.78, 27.73, 3.405},
	{"ResNet-18 (batch size 256)", 8, 81.51, 53.96, 6.975},
	{"ResNet-50 (batch size 16)", 1, 11.40, 9.053, 2.301},
	{"ResNet-50 (batch size 16)", 2, 13.86, 16.19, 4.301},
	{"ResNet-50 (batch size 16)", 4, 23.20, 30.80, 7.704},
	{"ResNet-50 (batch size 16)", 8, 27.80, 44.76, 15.06},
	{"ResNet-50 (batch size 32)", 1, 7.787, 4.888, 1.237},
	{"ResNet-50 (batch size 32)", 2, 10.83, 9.749, 2.353},
	{"ResNet-50 (batch size 32)", 4, 13.76, 18.55, 4.379},
	{"ResNet-50 (batch size 32)", 8, 24.07, 33.57, 8.792},
	{"ResNet-50 (batch size 64)", 1, 4.395, 2.619, 0.6190},
	{"ResNet-50 (batch size 64)", 2, 7.922, 5.516, 1.264},
	{"ResNet-50 (batch size 64)", 4, 9.452, 10.36, 2.412},
	{"ResNet-50 (batch size 64)", 8, 17.30, 18.22, 4.569},
	{"ResNet-50 (batch size 128)", 1, 2.497, 1.584, 0.3472},
	{"ResNet-50 (batch size 128)", 2, 4.223, 2.881, 0},
	{"ResNet-50 (batch size 128)", 4, 7.029, 5.191, 0},
	{"ResNet-50 (batch size 128)", 8, 10.29, 9.935, 0},
	{"Transformer (batch size 16)", 1, 11.06, 9.537, 5.467},
	{"Transformer (batch size 16)", 2, 14.15, 14.31, 7.047},
	{"Transformer (batch size 16)", 4, 20.08, 21.23, 10.27},
	{"Transformer (batch size 16)", 8, 71.65, 29.02, 18.62},
	{"Transformer (batch size 32)", 1, 10.62, 7.869, 3.507},
	{"Transformer (batch size 32)", 2, 13.33, 11.22, 5.097},
	{"Transformer (batch size 32)", 4, 22.82, 18.16, 7.985},
	{"Transformer (batch size 32)", 8, 63.98, 26.22, 13.91},
	{"Transformer (batch size 64)", 1, 8.618, 5.092, 1.752},
	{"Transformer (batch size 64)", 2, 15.88, 7.887, 3.063},
	{"Transformer (batch size 64)", 4, 19.66, 13.31, 5.031},
	{"Transformer (batch size 64)", 8, 49.65, 19.94, 8.976},
	{"Transformer (batch size 128)", 1, 5.446, 3.074, 0.9816},
	{"Transformer (batch size 128)", 2, 10.07, 5.087, 1.657},
	{"Transformer (batch size 128)", 4, 14.17, 8.774, 2.865},
	{"Transformer (batch size 128)", 8, 30.88, 13.68, 5.257},
	{"Transformer (batch size 256)", 1, 1.595, 1.678, 0.4583},
	{"Transformer (batch size 256)", 2, 2.885, 2.941, 0.8492},
	{"Transformer (batch size 256)", 4, 4.763, 5.243, 1.513},
	{"Transformer (batch size 256)", 8, 9.717, 9.253, 2.923},
	{"LM (batch size 5)", 1, 109.2, 90.78, 25.49},
	{"LM (batch size 5)", 2, 185.7, 76.92, 32.39},
	{"LM (batch size 5)", 4, 126.7, 110.2, 44.09},
	{"LM (batch size 5)", 8, 698.8, 133.5, 76.86},
	{"LM (batch size 10)", 1, 81.65, 77.08, 23.79},
	{"LM (batch size 10)", 2, 163.1, 72.53, 29.98},
	{"LM (batch size 10)", 4, 121.5, 105.2, 42.96},
	{"LM (batch size 10)", 8, 615.1, 127.8, 75.57},
	{"LM (batch size 20)", 1, 64.74, 58.17, 17.14},
	{"LM (batch size 20)", 2, 132.2, 62.33, 23.77},
	{"LM (batch size 20)", 4, 111.0, 93.81, 35.70},
	{"LM (batch size 20)", 8, 497.3, 116.6, 61.45},
	{"LM (batch size 40)", 1, 45.24, 35.77, 11.50},
	{"LM (batch size 40)", 2, 91.59, 48.04, 16.07},
	{"LM (batch size 40)", 4, 96.03, 76.05, 22.99},
	{"LM (batch size 40)", 8, 359.3, 102.2, 43.15},
	{"LM (batch size 80)", 1, 28.24, 21.16, 6.054},
	{"LM (batch size 80)", 2, 58.09, 31.84, 10.01},
	{"LM (batch size 80)", 4, 74.81, 55.00, 16.39},
	{"LM (batch size 80)", 8, 231.2, 82.93, 28.29},
	{"Recommendation (batch size 512)", 1, 23.32, 48.88, 32.86},
	{"Recommendation (batch size 1024)", 1, 13.28, 30.74, 20.05},
	{"Recommendation (batch size 2048)", 1, 7.470, 16.60, 10.44},
	{"Recommendation (batch size 4096)", 1, 3.906, 8.897, 5.300},
	{"Recommendation (batch size 8192)", 1, 2.842, 5.548, 2.699},
	{"A3C", 1, 7.176, 5.681, 3.439},
	{"CycleGAN", 1, 4.426, 2.403, 0.5048},
}
