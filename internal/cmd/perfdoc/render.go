package main

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// module is the prefix trimmed from package paths.
const module = "github.com/dlsched/dlsched/"

// target is one row of the performance targets.
type target struct {
	What  string
	Bench string // "package Name", the package relative to the module
	// Metric is the benchmark's unit read; Scale divides it into Unit.
	Metric string
	Scale  float64
	Unit   string
	// Goal bounds the value (or, with Versus, the value over Versus's).
	Goal float64
	More bool // the value must be at least Goal, not at most
	// Versus, if set, is the benchmark of the same run the value is
	// compared with: the goal is a ratio.
	Versus string
	Anchor string // the published or measured figure it is set against
	Unrun  string // why the benchmark may be missing
}

const ms, sec = 1e6, 1e9 // ns/op scales

var targets = []target{
	{What: "gavel.las, 2048 jobs × 3 types: LP solve (both stages)", Bench: "policy/gavel LAS/clp/jobs=2048",
		Metric: "solve-ms", Scale: 1, Unit: "ms", Goal: 10,
		Anchor: "Gavel (cvxpy, ECOS; its Figure 12, other hardware): 83 ms"},
	{What: "gavel.las, 2048 jobs: LP re-solve (both stages) after one arrival, warm-started", Bench: "policy/gavel Warm/jobs=2048/warm=true/parts",
		Metric: "solve-ms", Scale: 1, Unit: "ms", Goal: 1,
		Anchor: "the same solve cold, and the whole decision warm and cold: see BenchmarkWarm below"},
	{What: "gavel.las, 20,000 jobs from Gavel's generator: whole decision", Bench: "policy/gavel Generated/gavel.las/jobs=20000/rows=classes",
		Metric: "ns/op", Scale: ms, Unit: "ms", Goal: 1000,
		Anchor: "29 s for the whole CLI when the issue was filed; the same decision over one row per job: BenchmarkGenerated's rows=jobs, below"},
	{What: "gavel.makespan, 2048 jobs: decision", Bench: "policy/gavel Policy/gavel.makespan/jobs=2048",
		Metric: "ns/op", Scale: ms, Unit: "ms", Goal: 70,
		Anchor: "⅓ of HiGHS' 210 ms (scipy, the same LP, measured when the issue was filed; not rerun here)"},
	{What: "gavel.max-throughput, 2048 jobs: decision", Bench: "policy/gavel Policy/gavel.max-throughput/jobs=2048",
		Metric: "ns/op", Scale: ms, Unit: "ms", Goal: 41,
		Anchor: "⅓ of HiGHS' 122 ms (as above)"},
	{What: "gavel.ftf, 1024 jobs: decision", Bench: "policy/gavel Policy/gavel.ftf/jobs=1024",
		Metric: "ns/op", Scale: ms, Unit: "ms", Goal: 50},
	{What: "gavel.water-filling, 1024 jobs: decision", Bench: "policy/gavel Policy/gavel.water-filling/jobs=1024",
		Metric: "ns/op", Scale: ms, Unit: "ms", Goal: 100},
	{What: "gavel.hierarchical, 1024 jobs: decision", Bench: "policy/gavel Scaling/gavel.hierarchical/jobs=1024",
		Metric: "ns/op", Scale: sec, Unit: "s", Goal: 1,
		Anchor: "Gavel (Figure 12): 27 s"},
	{What: "gavel.las-ss, 1024 jobs: decision", Bench: "policy/gavel Scaling/gavel.las-ss/jobs=1024",
		Metric: "ns/op", Scale: sec, Unit: "s", Goal: 5,
		Anchor: "Gavel (Figure 12): 296 s", Unrun: "not run: 278,443 pairs; BenchmarkScaling stops at 256 jobs"},
	{What: "pollux, 64 GPUs, 32 jobs: decision from a cold start", Bench: "policy/pollux Pollux/64gpus-32jobs",
		Metric: "ns/op", Scale: ms, Unit: "ms", Goal: 50,
		Anchor: "AdaptDL's optimizer (pymoo in pure Python, 2 vCPUs; the dossier's measurement): 3.6 s"},
	{What: "pollux, 256 GPUs, 128 jobs: decision from a cold start", Bench: "policy/pollux Pollux/256gpus-128jobs",
		Metric: "ns/op", Scale: ms, Unit: "ms", Goal: 300,
		Anchor: "AdaptDL's optimizer (as above): 23.6 s"},
	{What: "simulation (1000 jobs, gavel.las, warm as `dlsched simulate` runs it): rounds per second over the code the issue was filed at", Bench: "sim Simulation/warm=true",
		Metric: "rounds/s", Scale: 1, Unit: "rounds/s", Goal: 3, More: true, Versus: "sim Simulation",
		Anchor: "commit 3cd94f5's BenchmarkSimulation (2,611 rounds/s when the issue was filed), run by scripts/bench.sh just before",
		Unrun:  "not measured: scripts/bench.sh runs commit 3cd94f5's BenchmarkSimulation, which needs the repository's history"},
	{What: "the main job (every system, mixed workload) at 2000 jobs", Bench: "cmd/dlsched MainJob/jobs=2000",
		Metric: "ns/op", Scale: sec, Unit: "s", Goal: 180,
		Unrun: "not measured: scripts/bench.sh runs it (DLSCHED_MAIN_JOBS); see the README"},
	{What: "pure-Go engine, gavel.las 2048 jobs: solve over CLP's", Bench: "policy/gavel LAS/purego/jobs=2048",
		Metric: "solve-ms", Scale: 1, Unit: "ms", Goal: 5, Versus: "policy/gavel LAS/clp/jobs=2048",
		Unrun: "not run: scripts/bench.sh runs it with the CLP build, which holds both engines"},
}

// index finds results by "package Name".
type index map[string]result

func newIndex(rs []result) index {
	ix := make(index, len(rs))
	for _, r := range rs {
		ix[strings.TrimPrefix(r.Pkg, module)+" "+r.Name] = r
	}
	return ix
}

// value returns a target's value of a benchmark, in its unit.
func (ix index) value(bench string, t target) (float64, bool) {
	r, ok := ix[bench]
	if !ok {
		return 0, false
	}
	v, ok := r.Metrics[t.Metric]
	return v / t.Scale, ok
}

// num formats x with three significant digits.
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case x != 0 && (math.Abs(x) >= 1e5 || math.Abs(x) < 1e-3):
		return fmt.Sprintf("%.3g", x)
	}
	digits := 0
	if x != 0 {
		digits = max(0, 2-int(math.Floor(math.Log10(math.Abs(x)))))
	}
	s := fmt.Sprintf("%.*f", digits, x)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// row renders one target: measured, goal and whether it is met.
func (ix index) row(t target) string {
	v, ok := ix.value(t.Bench, t)
	measured, goal, met := cmp.Or(t.Unrun, "not run"), "", "no"
	cmpSign := "≤"
	if t.More {
		cmpSign = "≥"
	}
	if t.Versus == "" {
		goal = fmt.Sprintf("%s %s %s", cmpSign, num(t.Goal), t.Unit)
		if ok {
			measured = num(v) + " " + t.Unit
			if t.More && v >= t.Goal || !t.More && v <= t.Goal {
				met = "**yes**"
			}
		}
	} else {
		goal = fmt.Sprintf("%s %s×", cmpSign, num(t.Goal))
		ref, rok := ix.value(t.Versus, t)
		if ok && rok && ref > 0 {
			r := v / ref
			measured = fmt.Sprintf("%s %s (%s×)", num(v), t.Unit, num(r))
			if t.More && r >= t.Goal || !t.More && r <= t.Goal {
				met = "**yes**"
			}
		}
	}
	bench := strings.Replace(t.Bench, " ", " Benchmark", 1)
	return fmt.Sprintf("| %s | %s | %s | `%s` | %s | %s |\n", t.What, goal, measured, bench, cmp.Or(t.Anchor, "—"), met)
}

// render writes the whole document.
func render(rs []result, meta map[string]string) string {
	var b strings.Builder
	ix := newIndex(rs)
	b.WriteString("# Performance\n\n")
	b.WriteString("Written by `bash scripts/bench.sh`, which runs every benchmark of the\n")
	b.WriteString("module (`go test -tags clp -bench . -benchmem`, 5 iterations, or 1 where an\n")
	b.WriteString("iteration takes seconds; gavel's BenchmarkLAS and BenchmarkWarm, which take\n")
	b.WriteString("milliseconds, run again for 100) and keeps the raw output in\n")
	b.WriteString("`docs/performance.txt`, for benchstat. ")
	fmt.Fprintf(&b, "Machine: %s, %s/%s.\nEvery figure is one run on a small, noisy machine: compare ratios within\none run, not figures across runs.\n\n",
		cmp.Or(meta["cpu"], "unknown CPU"), meta["goos"], meta["goarch"])
	b.WriteString("## Targets\n\n")
	b.WriteString("| workload | target | measured | benchmark | anchor | met |\n|---|---|---|---|---|---|\n")
	for _, t := range targets {
		b.WriteString(ix.row(t))
	}
	b.WriteString("\n## Sized benchmarks\n\n")
	b.WriteString("Time per operation at each size, memory per operation, and the growth\n")
	b.WriteString("exponent k of a least-squares fit time ∝ sizeᵏ over the sizes run.\n")
	series(&b, rs)
	b.WriteString("\n## Every other benchmark\n\n")
	b.WriteString("| benchmark | time/op | memory/op | other metrics |\n|---|---|---|---|\n")
	for _, r := range rs {
		if _, _, sized := size(r.Name); !sized {
			b.WriteString(single(r))
		}
	}
	return b.String()
}

// single renders an unsized benchmark's row: its time, memory and the
// metrics it reports itself.
func single(r result) string {
	mem := "—"
	if v, ok := r.Metrics["B/op"]; ok {
		mem = bytes(v)
	}
	var other []string
	for _, unit := range slices.Sorted(maps.Keys(r.Metrics)) {
		switch unit {
		case "ns/op", "B/op", "allocs/op":
		default:
			other = append(other, num(r.Metrics[unit])+" "+unit)
		}
	}
	return fmt.Sprintf("| `%s Benchmark%s` | %s | %s | %s |\n", strings.TrimPrefix(r.Pkg, module), r.Name,
		duration(r.Metrics["ns/op"]), mem, cmp.Or(strings.Join(other, ", "), "—"))
}

// series writes one table per family of sized benchmarks, by package.
func series(b *strings.Builder, rs []result) {
	type point struct {
		n int
		r result
	}
	fams := make(map[string][]point)
	for _, r := range rs {
		if fam, n, ok := size(r.Name); ok {
			key := strings.TrimPrefix(r.Pkg, module) + " " + fam
			fams[key] = append(fams[key], point{n, r})
		}
	}
	for _, key := range slices.Sorted(maps.Keys(fams)) {
		ps := fams[key]
		slices.SortFunc(ps, func(a, b point) int { return cmp.Compare(a.n, b.n) })
		var ns, ts []float64
		fmt.Fprintf(b, "\n### `%s`\n\n| size | time/op | memory/op | allocs/op |\n|---|---|---|---|\n",
			strings.Replace(key, " ", " Benchmark", 1))
		for _, p := range ps {
			t := p.r.Metrics["ns/op"]
			ns, ts = append(ns, float64(p.n)), append(ts, t)
			mem, allocs := "—", "—"
			if v, ok := p.r.Metrics["B/op"]; ok {
				mem = bytes(v)
			}
			if v, ok := p.r.Metrics["allocs/op"]; ok {
				allocs = num(v)
			}
			fmt.Fprintf(b, "| %d | %s | %s | %s |\n", p.n, duration(t), mem, allocs)
		}
		if k := exponent(ns, ts); !math.IsNaN(k) {
			fmt.Fprintf(b, "\nGrowth exponent: %.2f.\n", k)
		}
	}
}

// duration formats nanoseconds.
func duration(ns float64) string {
	switch {
	case ns >= 1e9:
		return num(ns/1e9) + " s"
	case ns >= 1e6:
		return num(ns/1e6) + " ms"
	case ns >= 1e3:
		return num(ns/1e3) + " µs"
	}
	return num(ns) + " ns"
}

// bytes formats a byte count.
func bytes(x float64) string {
	switch {
	case x >= 1<<30:
		return num(x/(1<<30)) + " GiB"
	case x >= 1<<20:
		return num(x/(1<<20)) + " MiB"
	case x >= 1<<10:
		return num(x/(1<<10)) + " KiB"
	}
	return num(x) + " B"
}
