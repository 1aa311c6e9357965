// Command adaptive shows a job that changes its batch size mid-training,
// and what Shockwave's forecast and plan do with it.
//
// A language model trained with gradient-noise-scale (GNS) scaling starts
// at batch size 10 and doubles it at fixed epochs (workload.Schedule), and each
// larger batch makes an epoch faster. A scheduler sees only the batch size
// in force and how many epochs the job has spent at each; package bayes
// forecasts the runtime left from those counts (a Dirichlet posterior over
// the fraction of epochs in each regime), and the forecast tightens as the
// job trains. Policy "shockwave" plans rounds of GPUs over a window from
// such forecasts, under finish-time-fairness constraints.
//
// Epoch times are typed in, so that the program is self-contained and its
// output reproducible.
package main

import (
	"context"
	"fmt"
	"github.com/dlsched/dlsched/workload"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/bayes"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/policy/shockwave"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "adaptive:", err)
		os.Exit(1)
	}
}

// Seconds per epoch on V100s, from the throughputs Shockwave measured on
// TACC (tacc_throughputs.json: samples per epoch / batch size / steps per
// second). LM at 80 is slower than at 40 there; the 23-epoch job below
// never reaches it, but the forecast must allow for it.
var (
	lmSeconds = map[int]float64{10: 62.87, 20: 43.84, 40: 31.86, 80: 34.35} // 1 GPU
	// ResNet-18 on 2 GPUs, at its initial batch size 32 and at 256.
	resnet18Seconds = map[int]float64{32: 23.42, 256: 16.12}
)

// job is one training job of the example: its schedule of batch sizes and
// the epoch time at each.
type job struct {
	id      string
	gpus    int
	batch   []int
	regimes []int
	seconds map[int]float64
}

// adaptiveJob builds a job's schedule and regimes with sim's rules.
func adaptiveJob(id, model string, mode workload.Mode, bs0, gpus, epochs int, seconds map[int]float64) (job, error) {
	batch, err := workload.Schedule(model, mode, bs0, gpus, epochs)
	if err != nil {
		return job{}, err
	}
	regimes, err := workload.Regimes(model, mode, bs0, gpus)
	if err != nil {
		return job{}, err
	}
	return job{id: id, gpus: gpus, batch: batch, regimes: regimes, seconds: seconds}, nil
}

// staticJob is a job that keeps its batch size for all its epochs.
func staticJob(id string, bs, gpus, epochs int, seconds float64) job {
	return job{id: id, gpus: gpus, batch: slices.Repeat([]int{bs}, epochs), regimes: []int{bs}, seconds: map[int]float64{bs: seconds}}
}

// runs is the schedule in run-length form: "10×11 20×10 40×2".
func (j job) runs() string {
	var parts []string
	for i := 0; i < len(j.batch); {
		k := i
		for k < len(j.batch) && j.batch[k] == j.batch[i] {
			k++
		}
		parts = append(parts, fmt.Sprintf("%d×%d", j.batch[i], k-i))
		i = k
	}
	return strings.Join(parts, " ")
}

// observed counts the epochs seen in each regime after done epochs: the
// completed ones and the one under way.
func (j job) observed(done int) []int {
	n := make([]int, len(j.regimes))
	for _, b := range j.batch[:min(done+1, len(j.batch))] {
		n[slices.Index(j.regimes, b)]++
	}
	return n
}

// epochSeconds lists the epoch time of each regime, aligned with regimes.
func (j job) epochSeconds() []float64 {
	s := make([]float64, len(j.regimes))
	for i, b := range j.regimes {
		s[i] = j.seconds[b]
	}
	return s
}

// truth is the time the epochs from done on take.
func (j job) truth(done int) float64 {
	t := 0.0
	for _, b := range j.batch[done:] {
		t += j.seconds[b]
	}
	return t
}

// policyJob is what a scheduler reports for the job at submission.
func (j job) policyJob() policy.Job {
	bs := j.batch[0]
	return policy.Job{
		ID:         j.id,
		GPUs:       j.gpus,
		StepsTotal: float64(len(j.batch)),
		Throughput: map[allocation.Accelerator]float64{"v100": 1 / j.seconds[bs]},
		Adaptive: &policy.Adaptive{
			Regimes:      j.regimes,
			EpochSeconds: j.epochSeconds(),
			Epochs:       len(j.batch),
			History:      make([]int, len(j.regimes)),
			BatchSize:    bs,
		},
	}
}

func run(out io.Writer) error {
	lm, err := adaptiveJob("lm", "LM", workload.GNS, 10, 1, 23, lmSeconds)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "lm: %d epochs, batch sizes %s; regimes %v\n", len(lm.batch), lm.runs(), lm.regimes)
	fmt.Fprintln(out, "epoch  batch  forecast R̂  true left")
	for _, p := range []int{0, 6, 12, 18} {
		f := bayes.Job{Epochs: len(lm.batch), Done: p, Observed: lm.observed(p), EpochSeconds: lm.epochSeconds()}
		r, err := f.Remaining()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%5d  %5d  %8.0f s  %7.0f s\n", p, lm.batch[p], r, lm.truth(p))
	}

	// Four jobs on one server of 4 V100s, 6 GPUs wanted: the LM job, a
	// ResNet-18 job under Accordion (batch 32 through its critical first 10
	// epochs and the first 30 % of its epochs, then 256), and two static
	// jobs. All arrive now. The fair path asks every job to finish no
	// later than alone on a 1/J share (here the whole job alone, as J = G =
	// 4), which no job can while others share the GPUs: Shockwave plans on
	// the relaxed path, weighting jobs by their projected unfairness.
	resnet18, err := adaptiveJob("resnet18", "ResNet-18", workload.Accordion, 32, 2, 40, resnet18Seconds)
	if err != nil {
		return err
	}
	jobs := []job{
		lm,
		resnet18,
		staticJob("resnet50", 64, 1, 4, 502.73), // ResNet-50 at 64 on 1 GPU
		staticJob("transformer", 32, 2, 30, 38.79), // Transformer at 32 on 2 GPUs
	}
	snap := &policy.Snapshot{Cluster: allocation.Cluster{Servers: []allocation.Server{{ID: "s0", Accelerator: "v100", GPUs: 4}}}}
	fmt.Fprintln(out)
	for _, j := range jobs {
		snap.Jobs = append(snap.Jobs, j.policyJob())
		fmt.Fprintf(out, "%-11s %d GPU(s), %s, alone %.0f s\n", j.id, j.gpus, j.runs(), j.truth(0))
	}
	p, err := policy.New("shockwave", nil)
	if err != nil {
		return err
	}
	d, err := p.Allocate(context.Background(), snap)
	if err != nil {
		return err
	}
	st := p.(*shockwave.Shockwave).State
	path := "fair (every job keeps its finish-time fairness)"
	if st.Relaxed {
		path = "relaxed (λ priorities)"
	}
	// The objective is 0 when every job can finish within the window: its
	// progress reaches 1, whose log is 0, and no time is left after it.
	fmt.Fprintf(out, "shockwave: %s path, objective %.4g; ask again at %v\n", path, d.Objective, d.Wake)
	for t, r := range st.Plan[:min(4, len(st.Plan))] {
		fmt.Fprintf(out, "round %d: %s\n", t, strings.Join(r, " "))
	}
	// The round runs the planned jobs, then fills idle GPUs with the
	// others, longest forecast first.
	var now []string
	for _, j := range jobs {
		if _, ok := d.Allocation[j.id]; !ok {
			continue
		}
		where := j.id
		for _, a := range d.Placement[j.id] {
			where += fmt.Sprintf(" %s×%d", a.Server, a.GPUs)
		}
		now = append(now, where)
	}
	fmt.Fprintf(out, "running now: %s\n", strings.Join(now, ", "))
	return nil
}
