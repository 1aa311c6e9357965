package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// result is one benchmark line of go test -bench output.
type result struct {
	Pkg  string // import path, from the "pkg:" line before it
	Name string // without the Benchmark prefix and the -GOMAXPROCS suffix
	N    int    // iterations
	// Metrics maps a unit ("ns/op", "B/op", "solve-ms", "rounds/s") to its
	// value.
	Metrics map[string]float64
}

// procs is the -GOMAXPROCS suffix go test adds to a benchmark's name.
var procs = regexp.MustCompile(`-\d+$`)

// parse reads go test -bench output, the format benchstat reads: the
// "goos:", "goarch:" and "cpu:" lines into meta, "pkg:" lines, and
// benchmark lines; anything else (PASS, ok, logs) is skipped. A benchmark
// line that does not parse is an error naming its line. A benchmark run
// again (scripts/bench.sh reruns the fastest ones for more iterations)
// takes its first run's place.
func parse(r io.Reader) (out []result, meta map[string]string, err error) {
	meta = make(map[string]string)
	pkg := ""
	at := make(map[string]int) // "pkg name" → its index in out
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if p, ok := strings.CutPrefix(text, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		for _, k := range []string{"goos", "goarch", "cpu"} {
			if v, ok := strings.CutPrefix(text, k+": "); ok {
				meta[k] = strings.TrimSpace(v)
			}
		}
		if !strings.HasPrefix(text, "Benchmark") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 2 {
			continue // a benchmark's name printed alone, before its result
		}
		if len(f)%2 != 0 {
			return nil, nil, fmt.Errorf("line %d: %q: want a name, a count and value-unit pairs", line, text)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 {
			return nil, nil, fmt.Errorf("line %d: iterations %q: not a positive count", line, f[1])
		}
		res := result{Pkg: pkg, Name: procs.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), ""), N: n,
			Metrics: make(map[string]float64)}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("line %d: value %q of %s: not a finite number", line, f[i], f[i+1])
			}
			res.Metrics[f[i+1]] = v
		}
		key := res.Pkg + " " + res.Name
		if i, ok := at[key]; ok {
			out[i] = res
			continue
		}
		at[key] = len(out)
		out = append(out, res)
	}
	return out, meta, sc.Err()
}

// size returns the number a sized benchmark's name carries in a "jobs=N"
// or "n=N" part, and its family: the name with that number as "*"
// ("LAS/clp/jobs=*"). ok is false for a name without one.
var sizePart = regexp.MustCompile(`(^|/)(jobs|n)=(\d+)(/|$)`)

func size(name string) (family string, n int, ok bool) {
	m := sizePart.FindStringSubmatch(name)
	if m == nil {
		return name, 0, false
	}
	n, err := strconv.Atoi(m[3])
	if err != nil {
		return name, 0, false
	}
	return sizePart.ReplaceAllString(name, "${1}${2}=*${4}"), n, true
}

// exponent fits t = c·nᵏ to the points by least squares on their logarithms
// and returns k; NaN with fewer than two distinct sizes.
func exponent(ns, ts []float64) float64 {
	var sx, sy, sxx, sxy, m float64
	for i := range ns {
		if ns[i] <= 0 || ts[i] <= 0 {
			continue
		}
		x, y := math.Log(ns[i]), math.Log(ts[i])
		sx, sy, sxx, sxy, m = sx+x, sy+y, sxx+x*x, sxy+x*y, m+1
	}
	d := m*sxx - sx*sx
	if m < 2 || d <= 1e-12 {
		return math.NaN()
	}
	return (m*sxy - sx*sy) / d
}
