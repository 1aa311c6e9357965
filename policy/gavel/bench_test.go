package gavel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/workload"
)

// BenchmarkLAS follows Gavel's policy-runtime experiment: n jobs on a cluster
// with n/4 GPUs of each of 3 types, jobs needing 1, 2, 4 or 8 GPUs with
// probability 70/10/15/5 %. Besides ns/op it reports the time spent building
// the snapshot's program (build-ms), solving both LP stages (solve-ms) and
// turning X into an Allocation (extract-ms).
func BenchmarkLAS(b *testing.B) {
	for _, solver := range allocation.Solvers() {
		for _, n := range []int{32, 128, 512, 2048} {
			s := randomSnapshot(rand.New(rand.NewPCG(uint64(n), 7)), n, 3, n/4)
			b.Run(fmt.Sprintf("%s/jobs=%d", solver, n), func(b *testing.B) {
				benchLAS(b, &MaxMinFairness{Solver: solver}, s)
			})
		}
	}
}

// BenchmarkLASEqualWeights is BenchmarkLAS with the default engine and
// every weight equal, where BenchmarkLAS gives one job in five a weight of
// 2 to 4. Nearly every job is then held at t*, a degenerate LP that takes
// the simplex far longer to solve.
func BenchmarkLASEqualWeights(b *testing.B) {
	for _, n := range []int{128, 512, 2048} {
		s := randomSnapshot(rand.New(rand.NewPCG(uint64(n), 7)), n, 3, n/4)
		for j := range s.Jobs {
			s.Jobs[j].Weight = 0
		}
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			benchLAS(b, &MaxMinFairness{}, s)
		})
	}
}

// benchLAS times p's program on s, built, solved and extracted, and
// reports each part's time. Given more snapshots, it decides once for the
// last and then times them in turn, so that a warm p starts each from the
// one before.
func benchLAS(b *testing.B, p *MaxMinFairness, snaps ...*policy.Snapshot) {
	if len(snaps) > 1 {
		last := snaps[len(snaps)-1]
		m := p.program(last.Cluster, sortedJobs(last.Jobs))
		if _, err := m.prog.MaximizeMin(context.Background(), m.terms, m.total); err != nil {
			b.Fatal(err)
		}
	}
	var build, solve, extract time.Duration
	for i := 0; b.Loop(); i++ {
		s := snaps[i%len(snaps)]
		t0 := time.Now()
		m := p.program(s.Cluster, sortedJobs(s.Jobs))
		t1 := time.Now()
		res, err := m.prog.MaximizeMin(context.Background(), m.terms, m.total)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		_ = m.allocation(res, false)
		build, solve, extract = build+t1.Sub(t0), solve+t2.Sub(t1), extract+time.Since(t2)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(ms(build), "build-ms")
	b.ReportMetric(ms(solve), "solve-ms")
	b.ReportMetric(ms(extract), "extract-ms")
}

// BenchmarkPolicy times each Gavel policy's Allocate on BenchmarkLAS's
// setup at the sizes of Gavel's own scaling figure (and 2048 jobs for
// makespan and max-throughput), with CLP.
func BenchmarkPolicy(b *testing.B) {
	if !slices.Contains(allocation.Solvers(), allocation.CLP) {
		b.Skip("needs CLP")
	}
	for _, name := range []string{"gavel.water-filling", "gavel.ftf", "gavel.makespan", "gavel.max-throughput"} {
		for _, n := range []int{32, 128, 256, 1024, 2048} {
			if n > 1024 && (name == "gavel.water-filling" || name == "gavel.ftf") {
				continue
			}
			s := randomSnapshot(rand.New(rand.NewPCG(uint64(n), 7)), n, 3, n/4)
			for j := range s.Jobs {
				s.Jobs[j].StepsTotal = float64(1000 * (1 + j%7))
			}
			b.Run(fmt.Sprintf("%s/jobs=%d", name, n), func(b *testing.B) {
				for b.Loop() {
					// A fresh policy each time: the round mechanism would
					// otherwise keep the first decision for the same jobs.
					p, err := policy.New(name, nil)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := p.Allocate(context.Background(), s); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// hierarchicalLPs returns the LPs gavel.hierarchical's rounds solve on s,
// with settle and without.
func hierarchicalLPs(b *testing.B, s *policy.Snapshot, tenants map[string]Tenant) (with, without int) {
	var n [2]int
	for i, sequential := range []bool{false, true} {
		p := &Hierarchical{Tenants: tenants, sequential: sequential}
		_, jobs, _, err := prepare(context.Background(), p.Name(), s)
		if err != nil {
			b.Fatal(err)
		}
		prog, _, z, _ := normalized(s.Cluster, jobs, false, p.Solver, nil, false)
		if _, _, n[i], err = p.raise(context.Background(), prog, jobs, z); err != nil {
			b.Fatal(err)
		}
	}
	return n[0], n[1]
}

// BenchmarkScaling times gavel.las-ss with every pair of equal-GPU jobs
// listed as co-locatable (at 0.6 of each job's speed), as Gavel's
// formulation does, and gavel.hierarchical with four tenants (one FIFO), on
// BenchmarkLAS's setup: the two rows of Gavel's policy-runtime figure that
// are slowest there. gavel.ftf-ss and gavel.makespan-ss, which solve the
// same pair columns, run up to 256 jobs. gavel.hierarchical, which reads no
// co-location facts (nor does Gavel's figure give it any), gets the
// snapshot without them: validating 278,443 pairs' facts alone takes about
// 200 ms at 1024 jobs.
func BenchmarkScaling(b *testing.B) {
	if !slices.Contains(allocation.Solvers(), allocation.CLP) {
		b.Skip("needs CLP")
	}
	for _, n := range []int{32, 128, 256, 512, 1024} {
		s := randomSnapshot(rand.New(rand.NewPCG(uint64(n), 7)), n, 3, n/4)
		for a := range s.Jobs {
			s.Jobs[a].Tenant = fmt.Sprintf("t%d", a%4)
			s.Jobs[a].StepsTotal = float64(1000 * (1 + a%7))
			s.Jobs[a].Colocated = map[string]map[allocation.Accelerator]float64{}
		}
		pairs := 0
		for a := range s.Jobs {
			for c := range a {
				if s.Jobs[a].GPUs != s.Jobs[c].GPUs {
					continue
				}
				pairs++
				for _, e := range [][2]int{{a, c}, {c, a}} {
					m := map[allocation.Accelerator]float64{}
					for k, v := range s.Jobs[e[0]].Throughput {
						m[k] = 0.6 * v
					}
					s.Jobs[e[0]].Colocated[s.Jobs[e[1]].ID] = m
				}
			}
		}
		plain := &policy.Snapshot{Now: s.Now, Cluster: s.Cluster, Jobs: slices.Clone(s.Jobs)}
		for a := range plain.Jobs {
			plain.Jobs[a].Colocated = nil
		}
		tenants := map[string]Tenant{"t0": {Weight: 2}, "t1": {Weight: 1}, "t2": {Weight: 1, Policy: "fifo"}, "t3": {Weight: 0.5}}
		// Each decision gets a fresh policy: with warm, only the LPs within
		// a decision start from their predecessor's bases.
		for _, c := range []struct {
			name string
			mk   func() policy.Policy
		}{
			{"gavel.las-ss", func() policy.Policy { return &MaxMinFairness{SpaceSharing: true} }},
			{"gavel.ftf-ss", func() policy.Policy { return &FinishTimeFairness{SpaceSharing: true} }},
			{"gavel.makespan-ss", func() policy.Policy { return &Makespan{SpaceSharing: true} }},
			{"gavel.hierarchical", func() policy.Policy { return &Hierarchical{Tenants: tenants} }},
			{"gavel.hierarchical/warm", func() policy.Policy { return &Hierarchical{Tenants: tenants, Warm: true} }},
		} {
			ss := strings.HasSuffix(c.name, "-ss")
			if ss && c.name != "gavel.las-ss" && n > 256 || !ss && n == 512 {
				continue
			}
			b.Run(fmt.Sprintf("%s/jobs=%d", c.name, n), func(b *testing.B) {
				in := s
				if !ss {
					in = plain
				}
				for b.Loop() {
					if _, err := c.mk().Allocate(context.Background(), in); err != nil {
						b.Fatal(err)
					}
				}
				if ss {
					b.ReportMetric(float64(pairs), "pairs")
				}
				if c.name == "gavel.hierarchical" {
					with, without := hierarchicalLPs(b, in, tenants)
					b.ReportMetric(float64(with), "lps")
					b.ReportMetric(float64(without), "lps-unsettled")
				}
			})
		}
	}
}

// BenchmarkGenerated times a whole decision of gavel.las and
// gavel.las-agnostic (the program and the round mechanism, as registered)
// on jobs drawn by Gavel's own generator (workload.Generator: its job table
// and measured throughputs, multi-GPU jobs and priorities), on BenchmarkLAS's
// cluster of n/4 GPUs of each of 3 types. Jobs drawn from one template at
// one scale factor and priority are interchangeable: the "classes" metric
// counts them, and the programs have a row per class. At 2048 jobs,
// "rows=jobs" times the same decision over one row per job.
func BenchmarkGenerated(b *testing.B) {
	for _, agnostic := range []bool{false, true} {
		for _, n := range []int{2048, 20000} {
			s, classes := generatedSnapshot(b, n)
			for _, perJob := range []bool{false, true} {
				if perJob && n > 2048 {
					continue // 20 to 40 s an operation
				}
				p := &MaxMinFairness{Agnostic: agnostic}
				rows := "classes"
				if perJob {
					rows = "jobs"
				}
				b.Run(fmt.Sprintf("%s/jobs=%d/rows=%s", p.Name(), n, rows), func(b *testing.B) {
					for b.Loop() {
						pol := policy.InRounds(func([]byte) (policy.Policy, error) {
							return &MaxMinFairness{Agnostic: agnostic, perJob: perJob}, nil
						})
						d, err := mustPolicy(b, pol).Allocate(context.Background(), s)
						if err != nil || len(d.Allocation) != n {
							b.Fatalf("%v, %d of %d jobs allocated", err, len(d.Allocation), n)
						}
					}
					b.ReportMetric(float64(classes), "classes")
				})
			}
		}
	}
}

// mustPolicy makes a policy with f's default configuration.
func mustPolicy(b *testing.B, f policy.Factory) policy.Policy {
	p, err := f(nil)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// generatedSnapshot returns n jobs from workload.Generator (seed 1, multi-GPU,
// priorities) on n/4 GPUs of each of k80, p100 and v100 in servers of 4,
// and the number of distinct (GPUs, weight, throughputs) among them.
func generatedSnapshot(b *testing.B, n int) (*policy.Snapshot, int) {
	jobs, err := workload.Generator{Seed: 1, Jobs: n, MultiGPU: true, Priorities: true}.Generate()
	if err != nil {
		b.Fatal(err)
	}
	s := &policy.Snapshot{Jobs: jobs}
	for _, t := range []allocation.Accelerator{"k80", "p100", "v100"} {
		for i := range n / 16 {
			s.Cluster.Servers = append(s.Cluster.Servers, allocation.Server{ID: fmt.Sprintf("%s-%d", t, i), Accelerator: t, GPUs: 4})
		}
	}
	seen := make(map[string]bool)
	for _, j := range jobs {
		seen[fmt.Sprint(j.GPUs, j.Weight, j.Throughput)] = true
	}
	return s, len(seen)
}
