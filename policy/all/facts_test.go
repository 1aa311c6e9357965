package all_test

import (
	"testing"

	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all"
)

// Short names for the facts, for the tables below.
const (
	het      = policy.FactHeterogeneity
	length   = policy.FactLength
	weight   = policy.FactWeight
	tenant   = policy.FactTenant
	deadline = policy.FactDeadline
	coloc    = policy.FactColocation
	skew     = policy.FactSkew
	elastic  = policy.FactElastic
	adaptive = policy.FactAdaptive
	res      = policy.FactResources
	batch    = policy.FactBatch
)

// factsOf pins what each registered policy, at its defaults, reads.
var factsOf = map[string]struct{ uses, needs policy.Facts }{
	"allox":                        {het | length, length},
	"baseline.fifo":                {het, 0},
	"baseline.srsf":                {het | length, length},
	"baseline.srtf":                {het | length, length},
	"baseline.yarn-cs":             {het, 0},
	"gandiva":                      {coloc | elastic, coloc},
	"gavel.fifo":                   {het, 0},
	"gavel.fifo-agnostic":          {0, 0},
	"gavel.ftf":                    {het | length, length},
	"gavel.ftf-agnostic":           {length, length},
	"gavel.ftf-ss":                 {het | length | coloc, length},
	"gavel.hierarchical":           {het | weight | tenant, 0},
	"gavel.las":                    {het | weight, 0},
	"gavel.las-agnostic":           {weight, 0},
	"gavel.las-ss":                 {het | weight | coloc, 0},
	"gavel.makespan":               {het | length, length},
	"gavel.makespan-agnostic":      {length, length},
	"gavel.makespan-ss":            {het | length | coloc, length},
	"gavel.max-throughput":         {het, 0},
	"gavel.min-cost":               {het, 0},
	"gavel.min-cost-slo":           {het | length | deadline, 0},
	"gavel.water-filling":          {het | weight, 0},
	"gavel.water-filling-agnostic": {weight, 0},
	"pollux":                       {elastic | batch, elastic | batch},
	"pollux.fixed":                 {elastic, 0},
	"pollux.optimus":               {length | elastic, length | elastic},
	"shockwave":                    {length | adaptive, adaptive},
	"synergy.greedy":               {het | res, res},
	"synergy.opt":                  {het | res, res},
	"synergy.proportional":         {het | res, res},
	"synergy.tune":                 {het | res, res},
	"themis":                       {het | length, length},
	"tiresias.gittins":             {het | skew, 0},
	"tiresias.las":                 {het | skew, 0},
}

// Every registered policy says what it reads, needs only what it uses, and
// reads what the table pins; so does its Strict form.
func TestFactsRegistered(t *testing.T) {
	seen := 0
	for _, info := range policy.Registered() {
		p, err := policy.New(info.Name, nil)
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		if _, ok := p.(policy.Reader); !ok {
			t.Errorf("%s (%T) is not a policy.Reader", info.Name, p)
			continue
		}
		uses, needs := policy.FactsOf(p)
		if needs&^uses != 0 {
			t.Errorf("%s needs %q, which it does not use", info.Name, needs&^uses)
		}
		want, ok := factsOf[info.Name]
		if !ok {
			t.Errorf("%s: no expectation; add it to factsOf (uses %q, needs %q)", info.Name, uses, needs)
			continue
		}
		seen++
		if uses != want.uses || needs != want.needs {
			t.Errorf("%s: uses %q, needs %q; want uses %q, needs %q", info.Name, uses, needs, want.uses, want.needs)
		}
		if u, n := policy.FactsOf(policy.Strict(p)); u != uses || n != needs {
			t.Errorf("Strict(%s): uses %q, needs %q; want what it wraps, %q and %q", info.Name, u, n, uses, needs)
		}
	}
	if seen != len(factsOf) {
		t.Errorf("%d of the %d policies of factsOf are registered", seen, len(factsOf))
	}
}

// A configured policy reads what its configuration makes it read.
func TestFactsConfigured(t *testing.T) {
	for _, c := range []struct {
		name, config string
		uses, needs  policy.Facts
	}{
		{"gavel.hierarchical", `{"agnostic": true}`, weight | tenant, 0},
		{"gavel.las", `{"agnostic": true}`, weight, 0},
		{"gavel.las", `{"space_sharing": true}`, het | weight | coloc, 0},
		{"gavel.min-cost", `{"slo": true}`, het | length | deadline, 0},
		{"gavel.fifo", `{"agnostic": true, "backfill": true}`, 0, 0},
		{"gandiva", `{"no_packing": true}`, elastic, 0},
		{"tiresias.las", `{"skew_threshold": 1}`, het, 0},
		{"tiresias.gittins", `{"skew_threshold": 0.9}`, het | skew, 0},
		{"synergy.tune", `{"order": "srtf"}`, het | res | length, res | length},
		{"synergy.greedy", `{"order": "ftf"}`, het | res | length, res | length},
		{"synergy.proportional", `{"order": "las"}`, het | res, res},
		{"synergy.opt", `{"order": "srtf"}`, het | res | length, res | length},
	} {
		p, err := policy.New(c.name, []byte(c.config))
		if err != nil {
			t.Fatalf("%s %s: %v", c.name, c.config, err)
		}
		if uses, needs := policy.FactsOf(p); uses != c.uses || needs != c.needs {
			t.Errorf("%s %s: uses %q, needs %q; want uses %q, needs %q", c.name, c.config, uses, needs, c.uses, c.needs)
		}
	}
}

// Notes says what the comparison tool prints for a few pairings.
func TestFactsNotes(t *testing.T) {
	for _, c := range []struct {
		name           string
		present        policy.Facts
		lacks, ignores policy.Facts
	}{
		{"gavel.las", het | elastic | adaptive, 0, elastic | adaptive},
		{"gavel.las-agnostic", het | weight, 0, het},
		{"pollux", het | length, elastic | batch, het | length},
		{"pollux.optimus", length | elastic | batch, 0, batch},
		{"shockwave", length | adaptive | weight, 0, weight},
		{"shockwave", length, adaptive, 0},
		{"synergy.tune", het, res, 0},
		{"themis", weight, length, weight},
		{"tiresias.las", length | skew, 0, length},
		{"gavel.min-cost-slo", deadline, 0, 0},
		{"gandiva", elastic, coloc, 0},
	} {
		p, err := policy.New(c.name, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if lacks, ignores := policy.Notes(p, c.present); lacks != c.lacks || ignores != c.ignores {
			t.Errorf("%s on %q: lacks %q, ignores %q; want lacks %q, ignores %q", c.name, c.present, lacks, ignores, c.lacks, c.ignores)
		}
	}
}
