package all_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/policy"
)

// extremes are finite values that overflow a product, a reciprocal or a
// sum when taken at face value.
// The bounds themselves must decide with finite numbers.
var extremes = []float64{5e-324, 1e-300, 1e-13, policy.MinPositive, policy.MaxMagnitude, 1e16, 1e300, 1.7976931348623157e308}

// knob sets one number of a job, or of every job.
// A rate must be 0 or at least MinPositive; every number at most
// MaxMagnitude.
type knob struct {
	field string
	rate  bool
	set   func(j *policy.Job, v float64)
}

var knobs = []knob{
	{"throughput", true, func(j *policy.Job, v float64) {
		for t := range j.Throughput {
			j.Throughput[t] = v
		}
	}},
	{"weight", true, func(j *policy.Job, v float64) { j.Weight = v }},
	{"steps_total", true, func(j *policy.Job, v float64) { j.StepsTotal, j.StepsDone = v, 0 }},
	{"steps_done", false, func(j *policy.Job, v float64) { j.StepsTotal = max(j.StepsTotal, v); j.StepsDone = v }},
	{"attained_gpu_seconds", false, func(j *policy.Job, v float64) { j.AttainedGPUSeconds = v }},
}

// valid reports whether v is in the range of the knob's field.
func (k knob) valid(v float64) bool {
	return v <= policy.MaxMagnitude && (!k.rate || v >= policy.MinPositive)
}

// Every policy, given one job or every job with an extreme number, either
// refuses it by the field's name or decides with finite numbers only: the
// decision and the state it saves marshal to JSON, and the next round
// decides too. Nothing panics, and no round takes more than a few seconds.
func TestEveryPolicyExtremeNumbers(t *testing.T) {
	for _, st := range settings() {
		t.Run(st.label, func(t *testing.T) {
			for _, k := range knobs {
				for _, v := range extremes {
					for _, every := range []bool{false, true} {
						w := randomWorld(rand.New(rand.NewPCG(3, 4)))
						var set []string
						for i := range w.s.Jobs {
							if every || i == 0 {
								k.set(&w.s.Jobs[i], v)
								set = append(set, w.s.Jobs[i].ID)
							}
						}
						if k.valid(v) {
							set = nil
						}
						if err := extreme(st, w.s, k.field, set); err != nil {
							t.Errorf("%s = %g (every job %v): %v", k.field, v, every, err)
						}
					}
				}
			}
		})
	}
}

// extreme runs two rounds of the setting on s and reports what is wrong.
// The jobs out, which hold a number out of range, must be left out of the
// round with a reason that names the field.
func extreme(st setting, s *policy.Snapshot, field string, out []string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	p, err := policy.New(st.name, []byte(st.config))
	if err != nil {
		return err
	}
	for round := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		d, err := p.Allocate(ctx, s)
		cancel()
		if err != nil {
			if errors.Is(err, policy.ErrInvalidSnapshot) && strings.Contains(err.Error(), field) {
				return nil
			}
			return fmt.Errorf("round %d: %w", round, err)
		}
		for _, id := range out {
			if why, ok := d.Unscheduled[id]; !ok || !strings.Contains(why, field) {
				return fmt.Errorf("round %d: job %s: left out %v, reason %q; want one naming %s", round, id, ok, why, field)
			}
		}
		if _, err := json.Marshal(d); err != nil {
			return fmt.Errorf("round %d: decision: %w", round, err)
		}
		if err := d.Allocation.Validate(s.Cluster); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if sp, ok := p.(policy.Stateful); ok {
			if _, err := sp.SaveState(); err != nil {
				return fmt.Errorf("round %d: state: %w", round, err)
			}
		}
		s.Now += time.Minute
	}
	return nil
}
