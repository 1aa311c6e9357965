package all_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all"
)

// cliPolicies are the policies the dlsched command offered when it imported
// the policy packages one by one, before it imported this package.
var cliPolicies = []string{
	"allox",
	"baseline.fifo",
	"baseline.srsf",
	"baseline.srtf",
	"baseline.yarn-cs",
	"gandiva",
	"gavel.fifo",
	"gavel.fifo-agnostic",
	"gavel.ftf",
	"gavel.ftf-agnostic",
	"gavel.ftf-ss",
	"gavel.hierarchical",
	"gavel.las",
	"gavel.las-agnostic",
	"gavel.las-ss",
	"gavel.makespan",
	"gavel.makespan-agnostic",
	"gavel.makespan-ss",
	"gavel.max-throughput",
	"gavel.min-cost",
	"gavel.min-cost-slo",
	"gavel.water-filling",
	"gavel.water-filling-agnostic",
	"pollux",
	"pollux.fixed",
	"pollux.optimus",
	"shockwave",
	"synergy.greedy",
	"synergy.opt",
	"synergy.proportional",
	"synergy.tune",
	"themis",
	"tiresias.gittins",
	"tiresias.las",
}

// Importing the package registers every policy the dlsched command knew.
func TestRegisteredAll(t *testing.T) {
	var got []string
	for _, info := range policy.Registered() {
		got = append(got, info.Name)
		if info.Description == "" {
			t.Errorf("%s has no description", info.Name)
		}
	}
	for _, name := range cliPolicies {
		if !slices.Contains(got, name) {
			t.Errorf("%s is not registered; registered: %v", name, got)
		}
	}
}

// Importing the package registers every policy of dlsched.
func Example() {
	for _, info := range policy.Registered() {
		fmt.Println(info.Name)
	}
	// Output:
	// allox
	// baseline.fifo
	// baseline.srsf
	// baseline.srtf
	// baseline.yarn-cs
	// gandiva
	// gavel.fifo
	// gavel.fifo-agnostic
	// gavel.ftf
	// gavel.ftf-agnostic
	// gavel.ftf-ss
	// gavel.hierarchical
	// gavel.las
	// gavel.las-agnostic
	// gavel.las-ss
	// gavel.makespan
	// gavel.makespan-agnostic
	// gavel.makespan-ss
	// gavel.max-throughput
	// gavel.min-cost
	// gavel.min-cost-slo
	// gavel.water-filling
	// gavel.water-filling-agnostic
	// pollux
	// pollux.fixed
	// pollux.optimus
	// shockwave
	// synergy.greedy
	// synergy.opt
	// synergy.proportional
	// synergy.tune
	// themis
	// tiresias.gittins
	// tiresias.las
}
