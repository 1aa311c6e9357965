package kubernetes

import (
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
)

var types2 = []allocation.Accelerator{"k80", "v100"}

func TestFacts(t *testing.T) {
	j, err := facts(map[string]string{
		AnnotationWeight: "2.5", AnnotationTenant: "vision", AnnotationSteps: "1e4",
		AnnotationThroughput: `{"v100": 10}`, AnnotationFacts: `{"deadline": 3600, "skew": 0.5}`,
	}, types2)
	if err != nil {
		t.Fatal(err)
	}
	if j.Weight != 2.5 || j.Tenant != "vision" || j.StepsTotal != 1e4 || j.Throughput["v100"] != 10 ||
		len(j.Throughput) != 1 || j.Deadline.Seconds() != 3600 || j.Skew != 0.5 {
		t.Errorf("got %+v", j)
	}
	if j, err = facts(nil, types2); err != nil || j.Throughput["k80"] != 1 || j.Throughput["v100"] != 1 {
		t.Errorf("no annotations: %+v, %v; want throughput 1 on every type", j, err)
	}
	for ann, says := range map[[2]string]string{
		{AnnotationWeight, "-1"}:           "dlsched.io/weight",
		{AnnotationWeight, "heavy"}:        "dlsched.io/weight",
		{AnnotationSteps, "0"}:             "dlsched.io/steps",
		{AnnotationThroughput, "[1]"}:      "dlsched.io/throughput",
		{AnnotationFacts, `{"gpus": 3}`}:   `"gpus" comes from the pods`,
		{AnnotationFacts, `{"Skew": 1}`}:   "Skew",
		{AnnotationFacts, `{"skew": "x"}`}: "skew",
		{AnnotationFacts, `nope`}:          "dlsched.io/facts",
	} {
		if _, err := facts(map[string]string{ann[0]: ann[1]}, types2); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s=%s: %v, want an error saying %q", ann[0], ann[1], err, says)
		}
	}
}

// Whatever the annotations, facts decodes them or says why, without panic.
func FuzzFacts(f *testing.F) {
	f.Add("2", "t", `{"v100": 1}`, "100", `{"elastic": {"batch_size": 32}}`)
	f.Add("", "", "", "", `{"adaptive": {"regimes": [1], "epoch_seconds": [1], "epochs": 1}}`)
	f.Fuzz(func(t *testing.T, weight, tenant, tp, steps, extra string) {
		ann := map[string]string{}
		for k, v := range map[string]string{AnnotationWeight: weight, AnnotationTenant: tenant, AnnotationThroughput: tp, AnnotationSteps: steps, AnnotationFacts: extra} {
			if v != "" {
				ann[k] = v
			}
		}
		j, err := facts(ann, types2)
		if err == nil && j == nil {
			t.Fatal("no job and no error")
		}
	})
}
