package workload

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/efficiency"
	"github.com/dlsched/dlsched/policy"
	"github.com/dlsched/dlsched/throughput"
)

// PolluxGPU is the accelerator type of the Pollux testbed (16 AWS
// g4dn.12xlarge nodes with 4 NVIDIA T4 GPUs each), on which every step time
// of the Pollux traces was measured. ReadPolluxWorkload gives its jobs a
// throughput on this type only.
const PolluxGPU allocation.Accelerator = "t4"

// polluxEpochs is max_epochs of the Pollux simulator (applications.py):
// a job completes after this many epochs.
var polluxEpochs = map[string]int{
	"bert":        2,
	"cifar10":     100,
	"deepspeech2": 80,
	"imagenet":    90,
	"ncf":         10,
	"yolov3":      50,
}

// polluxLocalMax overrides the largest local batch found in placements.csv,
// as the Pollux simulator does for yolov3.
var polluxLocalMax = map[string]int{"yolov3": 8}

// polluxNCFBatch is the batch size the paper's Pollux runs pin NCF to.
const polluxNCFBatch = 32768

// ValidationEpoch is one row of a validation-<B>.csv file: one epoch of a
// full training run at a fixed total batch size B.
type ValidationEpoch struct {
	// Progress is the cumulative scale-invariant progress at the end of
	// the epoch, in iterations at the application's initial batch size.
	Progress float64
	// Iteration is the cumulative number of optimizer steps at batch B.
	Iteration float64
	// Metric is the validation metric after the epoch.
	Metric float64
	// GradSqr and GradVar are the gradient statistics measured during the
	// epoch (efficiency.Grad's Sqr and Var). Some measured values are
	// negative (deepspeech2); they are kept as measured.
	GradSqr float64
	GradVar float64
}

// stepPoint is one step-time measurement at local batch local.
type stepPoint struct {
	local, step, sync float64
}

// stepSeries is the measurements of one placement, sorted by local batch.
type stepSeries struct {
	nodes, replicas int
	points          []stepPoint
}

// App is one application (model) of the Pollux simulator
// (OSDI'21 artifact, simulator/applications.py): its measured step times,
// its gradient statistics over training at several batch sizes and the
// settings the simulator derives from them. Apps are built by LoadApps or
// SyntheticApps; their fields must not be modified afterwards, and their
// methods are safe for concurrent use.
type App struct {
	Name string
	// BatchSize is the initial global batch size (the smallest validated
	// batch size), the unit of progress; MaxBatchSize is the largest
	// validated batch size.
	BatchSize    int
	MaxBatchSize int
	// LocalBatchMin and LocalBatchMax bound the per-GPU batch: the smallest
	// and largest local batch measured in placements.csv (yolov3's maximum
	// is overridden to 8, as in the simulator).
	LocalBatchMin int
	LocalBatchMax int
	// Epochs is the number of epochs after which a job completes.
	Epochs int
	// Validation holds the validation curves, one row per epoch, by total
	// batch size.
	Validation map[int][]ValidationEpoch
	// Perf are the iteration-time parameters fitted by throughput.Fit to
	// every step-time measurement (placements and scalability), with
	// accumulation time = step_time − sync_time and optimizer-step time =
	// step_time. The zero value means the fit failed (or there were no
	// measurements); StepTime then interpolates the measurements.
	Perf throughput.Params

	// placements maps a placement's sorted key (see placementKey) to the
	// measurements of its distinct arrangements (placements.csv measures
	// e.g. 1123 and 1132 separately); scalability maps {nodes, replicas}
	// to the measurements of scalability.csv. series lists all of them in
	// file order, for the fallback of StepTime.
	placements  map[string][]*stepSeries
	scalability map[[2]int]*stepSeries
	series      []*stepSeries
}

// placementKey returns the order-insensitive key of a placement given as
// GPU counts per node: the non-zero counts sorted in ascending order, one
// decimal digit each (so "1344" is 4 nodes with 1, 3, 4 and 4 GPUs). ok is
// false if a count exceeds 9, which no digit string can hold. Negative
// counts are treated as zero.
func placementKey(gpusPerNode []int) (key string, nodes, replicas int, ok bool) {
	counts := make([]int, 0, len(gpusPerNode))
	for _, g := range gpusPerNode {
		if g > 0 {
			counts = append(counts, g)
			replicas += g
		}
	}
	slices.Sort(counts)
	var b strings.Builder
	ok = true
	for _, g := range counts {
		if g > 9 {
			ok = false
		}
		b.WriteString(strconv.Itoa(g))
	}
	return b.String(), len(counts), replicas, ok
}

// at interpolates the series linearly in the local batch, clamping outside
// the measured range.
func (s *stepSeries) at(m float64) (step, sync float64) {
	p := s.points
	if len(p) == 0 {
		return 0, 0
	}
	if m <= p[0].local {
		return p[0].step, p[0].sync
	}
	if m >= p[len(p)-1].local {
		return p[len(p)-1].step, p[len(p)-1].sync
	}
	i, _ := slices.BinarySearchFunc(p, m, func(q stepPoint, m float64) int { return cmp.Compare(q.local, m) })
	if p[i].local == m {
		return p[i].step, p[i].sync
	}
	lo, hi := p[i-1], p[i]
	w := (m - lo.local) / (hi.local - lo.local)
	return lo.step + w*(hi.step-lo.step), lo.sync + w*(hi.sync-lo.sync)
}

// StepTime returns the time of one synchronising optimizer step (step) and
// the all-reduce wait within it (sync), in seconds, with localBatch
// examples per GPU on a placement given as the number of GPUs on each node
// (order and zero entries do not matter). A step of s extra accumulation
// micro-steps then takes step + s·(step − sync), as in the simulator.
//
// placements.csv writes a placement as its lexicographically smallest
// rotation, so it measures different arrangements of the same GPU counts
// separately (1123 and 1132; they differ by measurement noise), and the
// simulator looks up the smallest rotation of its node order. StepTime
// instead ignores the order: it averages the values of every measured
// arrangement of the same GPU counts.
//
// The sources are tried in order:
//
//  1. the placement was measured (placements.csv): interpolate each
//     measured arrangement linearly in the local batch between the two
//     bracketing measured local batches, clamping outside the measured
//     range, and average them;
//  2. scalability.csv has the (nodes, replicas) point: the same;
//  3. Perf is fitted: step = Perf.OptimTime(nodes, replicas, localBatch)
//     and sync = step − Perf.AccumTime(localBatch), floored at 0;
//  4. otherwise (the fit failed): the measured series (from either file)
//     with the same replica count and the node count nearest to the
//     placement's, interpolated in the local batch as above; without one,
//     the same nearest-node series at the two bracketing measured replica
//     counts, interpolated linearly in the replica count (clamping to the
//     nearest one outside the measured range).
//
// Unlike the simulator, which interpolates over (nodes, replicas, local
// batch) for unmeasured placements, this keeps to measurements and the
// fitted model. It returns zeros when the placement has no GPU, localBatch
// is not positive, or nothing applies.
func (a *App) StepTime(gpusPerNode []int, localBatch float64) (step, sync float64) {
	key, nodes, replicas, ok := placementKey(gpusPerNode)
	if replicas == 0 || !(localBatch > 0) {
		return 0, 0
	}
	if ss := a.placements[key]; ok && len(ss) > 0 {
		for _, s := range ss {
			st, sy := s.at(localBatch)
			step += st
			sync += sy
		}
		return step / float64(len(ss)), sync / float64(len(ss))
	}
	if s := a.scalability[[2]int{nodes, replicas}]; s != nil {
		return s.at(localBatch)
	}
	if a.Perf != (throughput.Params{}) {
		step = a.Perf.OptimTime(nodes, replicas, localBatch)
		return step, math.Max(0, step-a.Perf.AccumTime(localBatch))
	}
	return a.nearestStepTime(nodes, replicas, localBatch)
}

// nearestStepTime is case 4 of StepTime.
func (a *App) nearestStepTime(nodes, replicas int, m float64) (step, sync float64) {
	// For each measured replica count, the series with the nearest node
	// count (the first in a.series on ties).
	best := map[int]*stepSeries{}
	for _, s := range a.series {
		b := best[s.replicas]
		if b == nil || absInt(s.nodes-nodes) < absInt(b.nodes-nodes) {
			best[s.replicas] = s
		}
	}
	if s := best[replicas]; s != nil {
		return s.at(m)
	}
	var lo, hi *stepSeries
	for k, s := range best {
		if k < replicas && (lo == nil || k > lo.replicas) {
			lo = s
		}
		if k > replicas && (hi == nil || k < hi.replicas) {
			hi = s
		}
	}
	switch {
	case lo == nil && hi == nil:
		return 0, 0
	case lo == nil:
		return hi.at(m)
	case hi == nil:
		return lo.at(m)
	}
	s0, y0 := lo.at(m)
	s1, y1 := hi.at(m)
	w := float64(replicas-lo.replicas) / float64(hi.replicas-lo.replicas)
	return s0 + w*(s1-s0), y0 + w*(y1-y0)
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// SingleGPURate returns the progress per second, in iterations at the
// initial batch size, of the application on one GPU at its initial batch
// size: 1/(step + s·(step − sync)), with s the fewest extra accumulation
// micro-steps that keep the local batch within LocalBatchMax. It is zero if
// the step time is not positive.
func (a *App) SingleGPURate() float64 {
	s := 0
	if a.LocalBatchMax > 0 && a.BatchSize > a.LocalBatchMax {
		s = (a.BatchSize+a.LocalBatchMax-1)/a.LocalBatchMax - 1
	}
	step, sync := a.StepTime([]int{1}, float64(a.BatchSize)/float64(s+1))
	t := step + float64(s)*(step-sync)
	if !(t > 0) || math.IsInf(t, 1) {
		return 0
	}
	return 1 / t
}

// batchSizes returns the validated batch sizes in ascending order.
func (a *App) batchSizes() []int {
	bs := make([]int, 0, len(a.Validation))
	for b := range a.Validation {
		bs = append(bs, b)
	}
	slices.Sort(bs)
	return bs
}

// EpochEnds returns the progress at which each epoch ends, for epochs 1 to
// Epochs: epoch e ends when progress reaches the minimum over the validated
// batch sizes B of Validation[B][e−1].Progress, as in the simulator.
func (a *App) EpochEnds() []float64 {
	ends := make([]float64, a.Epochs)
	for e := range ends {
		ends[e] = math.Inf(1)
		for _, rows := range a.Validation {
			if e < len(rows) {
				ends[e] = math.Min(ends[e], rows[e].Progress)
			}
		}
	}
	return ends
}

// TotalProgress returns the length of a job of this application in
// scale-invariant iterations at the initial batch size: the end of epoch
// Epochs. It is zero if Epochs is zero.
func (a *App) TotalProgress() float64 {
	ends := a.EpochEnds()
	if len(ends) == 0 {
		return 0
	}
	return ends[len(ends)-1]
}

// Epoch returns the 0-based epoch a job is in at the given progress: the
// number of epochs that have ended (see EpochEnds), at most Epochs − 1.
func (a *App) Epoch(progress float64) int {
	e := 0
	for _, end := range a.EpochEnds() {
		if progress < end {
			break
		}
		e++
	}
	return max(0, min(e, a.Epochs-1))
}

// Grad returns the true gradient statistics of a job at the given progress
// training at total batch size batch: the validation rows of the current
// epoch (see Epoch), interpolated linearly in the batch size between the
// two bracketing validated batch sizes, clamping outside the validated
// range. It returns the zero Grad if there is no validation data.
func (a *App) Grad(progress float64, batch float64) efficiency.Grad {
	bs := a.batchSizes()
	if len(bs) == 0 {
		return efficiency.Grad{}
	}
	e := a.Epoch(progress)
	row := func(b int) efficiency.Grad {
		rows := a.Validation[b]
		r := rows[min(e, len(rows)-1)]
		return efficiency.Grad{Sqr: r.GradSqr, Var: r.GradVar}
	}
	if !(batch > float64(bs[0])) { // also NaN
		return row(bs[0])
	}
	if batch >= float64(bs[len(bs)-1]) {
		return row(bs[len(bs)-1])
	}
	i, found := slices.BinarySearch(bs, int(math.Ceil(batch)))
	if found && float64(bs[i]) == batch {
		return row(bs[i])
	}
	lo, hi := bs[i-1], bs[i]
	g0, g1 := row(lo), row(hi)
	w := (batch - float64(lo)) / float64(hi-lo)
	return efficiency.Grad{Sqr: g0.Sqr + w*(g1.Sqr-g0.Sqr), Var: g0.Var + w*(g1.Var-g0.Var)}
}

// LoadApps reads every application of the Pollux traces directory dir
// (…/pollux/traces): each subdirectory of dir is one application, read by
// LoadApp; other files (philly.csv) are ignored. Errors wrap ErrTrace as a
// *TraceError naming the file, line and field.
func LoadApps(dir string) (map[string]*App, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sim: pollux apps: %w", err)
	}
	apps := map[string]*App{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		a, err := LoadApp(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		apps[a.Name] = a
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("sim: pollux apps: no application directory in %s", dir)
	}
	return apps, nil
}

// LoadApp reads one application from its directory, whose base name is the
// application's name: placements.csv (required), scalability.csv
// (optional) and validation-<B>.csv (at least one). Epochs is max_epochs of
// the Pollux simulator for its six applications (bert 2, cifar10 100,
// deepspeech2 80, imagenet 90, ncf 10, yolov3 50) and, for any other name,
// the number of rows of the shortest validation file; every validation
// file must have at least Epochs rows with positive, non-decreasing
// progress. Perf is fitted with throughput.Fit; if the fit fails, Perf
// stays zero (see StepTime).
func LoadApp(dir string) (*App, error) {
	a := &App{
		Name:        filepath.Base(dir),
		Validation:  map[int][]ValidationEpoch{},
		placements:  map[string][]*stepSeries{},
		scalability: map[[2]int]*stepSeries{},
	}
	if err := a.readSteps(filepath.Join(dir, "placements.csv"), false); err != nil {
		return nil, err
	}
	scal := filepath.Join(dir, "scalability.csv")
	if _, err := os.Stat(scal); err == nil {
		if err := a.readSteps(scal, true); err != nil {
			return nil, err
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "validation-*.csv"))
	if err != nil {
		return nil, fmt.Errorf("sim: pollux app %s: %w", a.Name, err)
	}
	minRows := math.MaxInt
	for _, f := range files {
		s := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "validation-"), ".csv")
		b, err := strconv.Atoi(s)
		if err != nil || b < 1 {
			return nil, traceErr(f, 0, "", "", "batch size %q in the file name is not a positive integer", s)
		}
		rows, err := readValidation(f)
		if err != nil {
			return nil, err
		}
		a.Validation[b] = rows
		minRows = min(minRows, len(rows))
	}
	if len(a.Validation) == 0 {
		return nil, fmt.Errorf("sim: pollux app %s: no validation-<B>.csv file in %s: %w", a.Name, dir, ErrTrace)
	}
	bs := a.batchSizes()
	a.BatchSize, a.MaxBatchSize = bs[0], bs[len(bs)-1]
	if e, ok := polluxEpochs[a.Name]; ok {
		a.Epochs = e
	} else {
		a.Epochs = minRows
	}
	for _, b := range bs {
		if n := len(a.Validation[b]); n < a.Epochs {
			return nil, traceErr(filepath.Join(dir, fmt.Sprintf("validation-%d.csv", b)), 0, "", "", "%d epochs, want at least %d", n, a.Epochs)
		}
	}
	if m, ok := polluxLocalMax[a.Name]; ok {
		a.LocalBatchMax = m
	}
	a.fit()
	return a, nil
}

// fit sets Perf from every measurement, or leaves it zero if
// throughput.Fit fails.
func (a *App) fit() {
	var samples []throughput.Sample
	for _, s := range a.series {
		for _, p := range s.points {
			samples = append(samples, throughput.Sample{
				Nodes: s.nodes, Replicas: s.replicas, LocalBatch: p.local,
				AccumTime: p.step - p.sync, OptimTime: p.step,
			})
		}
	}
	if len(samples) == 0 {
		return
	}
	if p, err := throughput.Fit(samples); err == nil {
		a.Perf = p
	}
}

// csvTable reads a CSV file with a header row, finding the required
// columns by name, and calls row with each record's numbers in the order of
// cols (all parsed as finite floats) and its line number.
func csvTable(path string, cols []string, row func(v []float64, rec []string, line int) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sim: pollux: %w", err)
	}
	defer f.Close()
	return csvRows(f, path, cols, func(rec []string, idx []int, line int) error {
		v := make([]float64, len(cols))
		for i, c := range cols {
			s := strings.TrimSpace(rec[idx[i]])
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return traceErr(path, line, "", c, "%q is not a finite number", s)
			}
			v[i] = x
		}
		return row(v, rec, line)
	})
}

// csvRows reads a CSV stream with a header row naming at least cols and
// calls row with each record, the column index of each of cols and the
// record's line number. Errors are *TraceError values naming name.
func csvRows(r io.Reader, name string, cols []string, row func(rec []string, idx []int, line int) error) error {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return traceErr(name, 1, "", "", "no header row")
	}
	if err != nil {
		return csvErr(name, err)
	}
	at := map[string]int{}
	for i, h := range header {
		at[strings.TrimSpace(h)] = i
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		j, ok := at[c]
		if !ok {
			return traceErr(name, 1, "", c, "missing column in header %q", strings.Join(header, ","))
		}
		idx[i] = j
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvErr(name, err)
		}
		line, _ := cr.FieldPos(0)
		if err := row(rec, idx, line); err != nil {
			return err
		}
	}
}

// csvErr turns an encoding/csv error into a TraceError.
func csvErr(name string, err error) error {
	if pe, ok := errors.AsType[*csv.ParseError](err); ok {
		return &TraceError{File: name, Line: pe.Line, Err: pe.Err}
	}
	return fmt.Errorf("sim: %s: %w", name, err)
}

// readSteps reads placements.csv (placement,local_bsz,step_time,sync_time)
// or, if scal, scalability.csv
// (num_nodes,num_replicas,local_bsz,step_time,sync_time). A placement digit
// string is taken to its smallest rotation, as the simulator does; the
// arrangements are filed under their sorted key.
func (a *App) readSteps(path string, scal bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sim: pollux app %s: %w", a.Name, err)
	}
	defer f.Close()
	cols := []string{"placement", "local_bsz", "step_time", "sync_time"}
	if scal {
		cols = []string{"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"}
	}
	var added []*stepSeries
	byRot := map[string]*stepSeries{}
	lines := map[*stepSeries]map[float64]int{}
	err = csvRows(f, path, cols, func(rec []string, idx []int, line int) error {
		field := func(i int) string { return strings.TrimSpace(rec[idx[i]]) }
		bad := func(i int, format string, args ...any) error {
			return traceErr(path, line, "", cols[i], format, args...)
		}
		var s *stepSeries
		k := 1
		if scal {
			k = 2
			nodes, err := strconv.Atoi(field(0))
			if err != nil || nodes < 1 {
				return bad(0, "%q is not a positive integer", field(0))
			}
			reps, err := strconv.Atoi(field(1))
			if err != nil || reps < nodes {
				return bad(1, "%q is not an integer of at least num_nodes %d", field(1), nodes)
			}
			key := [2]int{nodes, reps}
			if s = a.scalability[key]; s == nil {
				s = &stepSeries{nodes: nodes, replicas: reps}
				a.scalability[key] = s
				added = append(added, s)
			}
		} else {
			p := field(0)
			counts := make([]int, len(p))
			for i, c := range p {
				if c < '1' || c > '9' {
					return bad(0, "%q is not a string of digits 1 to 9", p)
				}
				counts[i] = int(c - '0')
			}
			if len(p) == 0 {
				return bad(0, "empty")
			}
			rot := smallestRotation(p)
			if s = byRot[rot]; s == nil {
				key, nodes, reps, _ := placementKey(counts)
				s = &stepSeries{nodes: nodes, replicas: reps}
				byRot[rot] = s
				a.placements[key] = append(a.placements[key], s)
				added = append(added, s)
			}
		}
		var v [3]float64
		for i := range v {
			x, err := strconv.ParseFloat(field(k+i), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return bad(k+i, "%q is not a finite non-negative number", field(k+i))
			}
			v[i] = x
		}
		if v[0] <= 0 {
			return bad(k, "%v is not positive", v[0])
		}
		if lines[s] == nil {
			lines[s] = map[float64]int{}
		}
		if prev, dup := lines[s][v[0]]; dup {
			return bad(k, "%v measured again (first on line %d)", v[0], prev)
		}
		lines[s][v[0]] = line
		s.points = append(s.points, stepPoint{local: v[0], step: v[1], sync: v[2]})
		if !scal {
			lb := int(math.Round(v[0]))
			if a.LocalBatchMin == 0 || lb < a.LocalBatchMin {
				a.LocalBatchMin = lb
			}
			a.LocalBatchMax = max(a.LocalBatchMax, lb)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !scal && len(added) == 0 {
		return traceErr(path, 0, "", "", "no measurement")
	}
	for _, s := range added {
		slices.SortFunc(s.points, func(p, q stepPoint) int { return cmp.Compare(p.local, q.local) })
	}
	a.series = append(a.series, added...)
	return nil
}

// smallestRotation returns the lexicographically smallest rotation of s.
func smallestRotation(s string) string {
	best := s
	for i := 1; i < len(s); i++ {
		if r := s[i:] + s[:i]; r < best {
			best = r
		}
	}
	return best
}

// readValidation reads a validation-<B>.csv file
// (progress,iteration,metric,grad_sqr,grad_var).
func readValidation(path string) ([]ValidationEpoch, error) {
	var rows []ValidationEpoch
	err := csvTable(path, []string{"progress", "iteration", "metric", "grad_sqr", "grad_var"}, func(v []float64, _ []string, line int) error {
		if v[0] <= 0 {
			return traceErr(path, line, "", "progress", "%v is not positive", v[0])
		}
		if n := len(rows); n > 0 && v[0] < rows[n-1].Progress {
			return traceErr(path, line, "", "progress", "%v is below the previous epoch's %v", v[0], rows[n-1].Progress)
		}
		rows = append(rows, ValidationEpoch{Progress: v[0], Iteration: v[1], Metric: v[2], GradSqr: v[3], GradVar: v[4]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, traceErr(path, 0, "", "", "no epoch")
	}
	return rows, nil
}

// syntheticApp holds the hand-chosen settings of one synthetic application.
type syntheticApp struct {
	name               string
	batch, maxBatch    int
	localMin, localMax int
	epochs             int
	progressPerEpoch   float64
	perf               throughput.Params
}

// syntheticApps are SyntheticApps' settings. The batch sizes, local batch
// bounds and epochs are those of the Pollux simulator; progressPerEpoch is
// about the length of the first epoch of the traces (examples per epoch /
// initial batch); perf are round numbers of the order of the traces' T4
// step times, chosen by hand, not fitted.
var syntheticApps = []syntheticApp{
	{"bert", 12, 384, 4, 12, 2, 7387,
		throughput.Params{AlphaC: 0.2, BetaC: 0.06, AlphaN: 1, BetaN: 0.05, AlphaR: 0.08, BetaR: 0.005, Gamma: 1.5}},
	{"cifar10", 128, 4096, 32, 1024, 100, 391,
		throughput.Params{AlphaC: 0.025, BetaC: 0.00065, AlphaN: 0.08, BetaN: 0.002, AlphaR: 0.01, BetaR: 0.005, Gamma: 1.5}},
	{"deepspeech2", 20, 640, 10, 80, 80, 357,
		throughput.Params{AlphaC: 0.25, BetaC: 0.022, AlphaN: 0.4, BetaN: 0.01, AlphaR: 0.1, BetaR: 0.01, Gamma: 1.5}},
	{"imagenet", 200, 12800, 20, 200, 90, 6406,
		throughput.Params{AlphaC: 0.055, BetaC: 0.0045, AlphaN: 0.3, BetaN: 0.005, AlphaR: 0.005, BetaR: 0.002, Gamma: 2}},
	{"ncf", 256, 32768, 32, 32768, 10, 19418,
		throughput.Params{AlphaC: 0.0073, BetaC: 4.3e-7, AlphaN: 0.02, BetaN: 0.0005, AlphaR: 0.005, BetaR: 0.0005, Gamma: 1.5}},
	{"yolov3", 8, 512, 4, 8, 50, 2069,
		throughput.Params{AlphaC: 0.17, BetaC: 0.025, AlphaN: 0.8, BetaN: 0.02, AlphaR: 0.04, BetaR: 0.005, Gamma: 1.5}},
}

// SyntheticApps returns a built-in, deterministic stand-in for the six
// Pollux applications, for use when the traces are absent. Names, batch
// sizes, local batch bounds and epochs are the simulator's; everything else
// is synthetic, not measured:
//
//   - Perf are hand-chosen parameters of the order of the measured T4 step
//     times, and StepTime uses them for every placement (there are no
//     measurements);
//   - every validated batch size B (BatchSize·2^i up to MaxBatchSize) has
//     the same curve: each epoch adds a fixed progress (about the traces'
//     first epoch), and the gradient statistics are Sqr = 1 and
//     Var = φ/BatchSize, with the gradient noise scale φ growing
//     geometrically from BatchSize in the first epoch to MaxBatchSize in
//     the last, so larger batches become efficient as training goes on.
//
// Each call returns new Apps.
func SyntheticApps() map[string]*App {
	apps := make(map[string]*App, len(syntheticApps))
	for _, s := range syntheticApps {
		rows := make([]ValidationEpoch, s.epochs)
		for e := range rows {
			frac := 0.0
			if s.epochs > 1 {
				frac = float64(e) / float64(s.epochs-1)
			}
			phi := float64(s.batch) * math.Pow(float64(s.maxBatch)/float64(s.batch), frac)
			rows[e] = ValidationEpoch{
				Progress:  float64(e+1) * s.progressPerEpoch,
				Iteration: float64(e+1) * s.progressPerEpoch,
				GradSqr:   1,
				GradVar:   phi / float64(s.batch),
			}
		}
		a := &App{
			Name:          s.name,
			BatchSize:     s.batch,
			MaxBatchSize:  s.maxBatch,
			LocalBatchMin: s.localMin,
			LocalBatchMax: s.localMax,
			Epochs:        s.epochs,
			Validation:    map[int][]ValidationEpoch{},
			Perf:          s.perf,
		}
		for b := s.batch; b <= s.maxBatch; b *= 2 {
			a.Validation[b] = rows
		}
		apps[s.name] = a
	}
	return apps
}

// WorkloadOptions configures ReadPolluxWorkload.
type WorkloadOptions struct {
	// Tuned gives every job the workload's "TunedJobs" configuration, for
	// the baselines: GPUs = num_replicas (the count pollux.fixed runs it
	// on) and a fixed global batch of batch_size (pollux.optimus keeps the
	// batch and chooses the GPUs). Otherwise the jobs are elastic, for
	// Pollux, which ignores those two columns.
	Tuned bool
	// Name names the input in errors; empty means "workload".
	Name string
}

// ReadPolluxWorkload reads a workload of the Pollux simulator
// (workloads/workload-N.csv and its variants): CSV with a header row naming
// the columns name,time,application,num_replicas,batch_size (in any order;
// others are ignored). Each row becomes one policy.Job, in file order:
//
//   - ID is name (unique, non-empty); Arrival is time, in seconds;
//   - StepsTotal is the application's TotalProgress, so steps are
//     scale-invariant iterations at the application's initial batch size;
//   - Throughput is {PolluxGPU: app.SingleGPURate()}, the progress per
//     second on one GPU at the initial batch size. It is a reference rate:
//     the job's real rate depends on its placement, batch size and training
//     progress, which the simulator's model of the App computes;
//   - Elastic carries the application's BatchSize, MaxBatchSize and local
//     batch bounds, with Perf, GradSqr and GradVar left zero (the model
//     fills them in as the job is observed), and GPUs is 0: the policy
//     picks. NCF jobs are pinned as in the paper's Pollux runs: BatchSize
//     and MaxBatchSize 32768, and MaxGPUs 1.
//
// With opt.Tuned, each job instead has GPUs = num_replicas and BatchSize =
// MaxBatchSize = batch_size (for every application, NCF included). Throughput stays the one-GPU reference rate.
//
// num_replicas and batch_size must be positive integers, and application a
// key of apps. Errors wrap ErrTrace as a *TraceError naming the line, job
// and column.
//
// It also returns the model that simulates the jobs, which knows the App
// each one trains.
func ReadPolluxWorkload(r io.Reader, apps map[string]*App, opt WorkloadOptions) ([]policy.Job, *Elastic, error) {
	name := opt.Name
	if name == "" {
		name = "workload"
	}
	cols := []string{"name", "time", "application", "num_replicas", "batch_size"}
	jobs := []policy.Job{}
	byID := map[string]*App{}
	seen := map[string]int{}
	rates := map[string]float64{}
	err := csvRows(r, name, cols, func(rec []string, idx []int, line int) error {
		field := func(i int) string { return strings.TrimSpace(rec[idx[i]]) }
		id := field(0)
		bad := func(i int, format string, args ...any) error {
			return traceErr(name, line, id, cols[i], format, args...)
		}
		if id == "" {
			return bad(0, "empty")
		}
		if prev, dup := seen[id]; dup {
			return bad(0, "duplicate of line %d", prev)
		}
		t, err := strconv.ParseFloat(field(1), 64)
		if err != nil {
			return bad(1, "%q is not a number", field(1))
		}
		at, err := traceSeconds(t)
		if err != nil {
			return bad(1, "%v", err)
		}
		app := apps[field(2)]
		if app == nil {
			return bad(2, "unknown application %q", field(2))
		}
		reps, err := strconv.Atoi(field(3))
		if err != nil || reps < 1 {
			return bad(3, "%q is not a positive integer", field(3))
		}
		batch, err := strconv.Atoi(field(4))
		if err != nil || batch < 1 {
			return bad(4, "%q is not a positive integer", field(4))
		}
		total := app.TotalProgress()
		if !(total > 0) || math.IsInf(total, 0) {
			return bad(2, "application %q has no positive length", app.Name)
		}
		rate, ok := rates[app.Name]
		if !ok {
			rate = app.SingleGPURate()
			rates[app.Name] = rate
		}
		if !(rate > 0) {
			return bad(2, "application %q has no positive step time on one GPU", app.Name)
		}
		el := &policy.Elastic{
			BatchSize:     app.BatchSize,
			MaxBatchSize:  app.MaxBatchSize,
			LocalBatchMin: app.LocalBatchMin,
			LocalBatchMax: app.LocalBatchMax,
		}
		j := policy.Job{
			ID:         id,
			Arrival:    at,
			Throughput: map[allocation.Accelerator]float64{PolluxGPU: rate},
			StepsTotal: total,
			Elastic:    el,
		}
		switch {
		case opt.Tuned:
			j.GPUs = reps
			el.BatchSize, el.MaxBatchSize = batch, batch
		case app.Name == "ncf":
			el.BatchSize, el.MaxBatchSize = polluxNCFBatch, polluxNCFBatch
			el.MaxGPUs = 1
		}
		seen[id] = line
		byID[id] = app
		jobs = append(jobs, j)
		return nil
	})
	if err != nil {
		if _, ok := errors.AsType[*TraceError](err); !ok {
			err = fmt.Errorf("sim: pollux workload %s: %w", name, err)
		}
		return nil, nil, err
	}
	return jobs, &Elastic{Apps: byID}, nil
}

// ReadPolluxWorkloadFile reads the workload file at path with
// ReadPolluxWorkload; errors name path unless opt.Name is set.
func ReadPolluxWorkloadFile(path string, apps map[string]*App, opt WorkloadOptions) ([]policy.Job, *Elastic, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("sim: pollux workload: %w", err)
	}
	defer f.Close()
	if opt.Name == "" {
		opt.Name = path
	}
	return ReadPolluxWorkload(f, apps, opt)
}
