package main

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The report writers turn a table into files a reader can open without
// dlsched: CSV for spreadsheets, JSON for scripts and one HTML page with
// the ranking and plots for people.

// writeCSV writes one line per policy and metric, so that the file is tidy
// (one observation per line) and filters or pivots without reshaping. A
// failed policy gets a single line carrying its error, and every line of a
// policy repeats its notes so that a filtered line is still self-explaining.
func (t *table) writeCSV(w io.Writer) error {
	if err := t.checkShape(); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"policy", "metric", "unit", "mean", "ci95", "n", "error", "notes"}); err != nil {
		return err
	}
	for _, r := range t.Rows {
		notes := strings.Join(r.Notes, "; ")
		if r.Error != "" || len(t.Columns) == 0 {
			if err := cw.Write([]string{r.Policy, "", "", "", "", "", r.Error, notes}); err != nil {
				return err
			}
			continue
		}
		for j, c := range t.Columns {
			v := r.Values[j]
			rec := []string{r.Policy, c.Key, c.Unit, formatFloat(v.Mean), formatFloat(v.CI), strconv.Itoa(v.N), "", notes}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeSweepCSV writes the load sweep, one line per policy and rate; a run
// that failed keeps its line, with the error instead of numbers, so that a
// missing point is explained rather than silently absent.
func (t *table) writeSweepCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"policy", "rate", "avg_jct_h", "ci95", "n", "error"}); err != nil {
		return err
	}
	for _, s := range t.Sweep {
		rec := []string{s.Policy, formatFloat(s.Rate), "", "", "", s.Error}
		if s.Error == "" {
			rec[2], rec[3], rec[4] = formatFloat(s.AvgJCT.Mean), formatFloat(s.AvgJCT.CI), strconv.Itoa(s.AvgJCT.N)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// formatFloat is the shortest text that parses back to x exactly.
func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// checkShape reports a successful row without exactly one value per column:
// writing it would misalign values and headings.
func (t *table) checkShape() error {
	for _, r := range t.Rows {
		if r.Error == "" && len(r.Values) != len(t.Columns) {
			return fmt.Errorf("report: policy %q has %d values for %d columns", r.Policy, len(r.Values), len(t.Columns))
		}
	}
	return nil
}

// writeJSON writes the table as indented JSON. JSON has no NaN or infinity,
// and encoding/json's own error does not say where the value is, so the
// numbers are checked first and the error names the policy and column.
func (t *table) writeJSON(w io.Writer) error {
	if err := t.checkFinite(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// checkFinite returns an error for the first NaN or infinite number that
// the JSON would hold.
func (t *table) checkFinite() error {
	for _, r := range t.Rows {
		for j, v := range r.Values {
			key := "#" + strconv.Itoa(j+1)
			if j < len(t.Columns) {
				key = t.Columns[j].Key
			}
			if err := checkStat(v); err != nil {
				return fmt.Errorf("report: policy %q, column %s: %w", r.Policy, key, err)
			}
		}
	}
	for _, s := range t.Sweep {
		if !finite(s.Rate) {
			return fmt.Errorf("report: policy %q, sweep: rate is %v, which JSON cannot represent", s.Policy, s.Rate)
		}
		if err := checkStat(s.AvgJCT); err != nil {
			return fmt.Errorf("report: policy %q, sweep at rate %v: %w", s.Policy, s.Rate, err)
		}
	}
	return nil
}

func checkStat(v stat) error {
	if !finite(v.Mean) {
		return fmt.Errorf("mean is %v, which JSON cannot represent", v.Mean)
	}
	if !finite(v.CI) {
		return fmt.Errorf("ci95 is %v, which JSON cannot represent", v.CI)
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// writeFiles writes results.csv, results.json, report.html and, after a
// sweep, sweep.csv into dir. One file's failure (a NaN for the JSON, say)
// does not stop the others: the errors are joined.
func (t *table) writeFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{{"results.csv", t.writeCSV}, {"results.json", t.writeJSON}, {"report.html", t.writeHTML}}
	if len(t.Sweep) > 0 {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{"sweep.csv", t.writeSweepCSV})
	}
	var errs []error
	for _, f := range files {
		errs = append(errs, writeReportFile(filepath.Join(dir, f.name), f.write))
	}
	return errors.Join(errs...)
}

// writeReportFile writes a temporary file next to path and renames it into
// place, so that a reader, or a failed write, never leaves a truncated
// file under the final name.
func writeReportFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("%s: %w", path, err)
		}
	}()
	bw := bufio.NewWriter(f)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeHTML writes one self-contained HTML5 page: the ranking and SVG plots
// with inline CSS and no scripts or external resources, so that it opens
// offline and can be mailed or archived as a single file. html/template
// escapes policy names, errors and notes, which come from user input.
func (t *table) writeHTML(w io.Writer) error {
	if err := t.checkShape(); err != nil {
		return err
	}
	return reportTemplate.Execute(w, t.page())
}

// htmlPage is what the template shows; all layout decisions are made here,
// in Go, so that the template only prints.
type htmlPage struct {
	Title, Setup, Seeds string
	Heads               []htmlHead
	Rows                []htmlRow
	Span                int // value cells a failure spans
	Plots               []*svgPlot
}

type htmlHead struct{ Name, Hint string }

type htmlRow struct {
	Rank   int
	Policy string
	Error  string
	Notes  []string
	Cells  []htmlCell
}

type htmlCell struct {
	Text string
	Best bool
}

func (t *table) page() htmlPage {
	p := htmlPage{Title: t.Title, Setup: t.Setup, Span: max(1, len(t.Columns)),
		Heads: t.heads(), Rows: t.htmlRows()}
	if p.Title == "" {
		p.Title = "dlsched compare"
	}
	switch {
	case t.Seeds == 1:
		p.Seeds = "One seed: values without confidence intervals."
	case t.Seeds > 1:
		p.Seeds = fmt.Sprintf("Each value is the mean ± 95 %% confidence interval over %d seeds.", t.Seeds)
	}
	names := t.policies()
	c := policyColors(names)
	p.Plots = []*svgPlot{t.barsPlot(c), t.cdfPlot(names, c)}
	if len(t.Sweep) > 0 {
		p.Plots = append(p.Plots, t.sweepPlot(names, c))
	}
	return p
}

// heads are the column headings with unit and an arrow for the better
// direction, so that the highlighting can be read without a legend.
func (t *table) heads() []htmlHead {
	var hs []htmlHead
	for _, c := range t.Columns {
		h := htmlHead{Name: c.Name + unitSuffix(c.Unit) + " ↑", Hint: "higher is better"}
		if c.Lower {
			h = htmlHead{Name: c.Name + unitSuffix(c.Unit) + " ↓", Hint: "lower is better"}
		}
		hs = append(hs, h)
	}
	return hs
}

func (t *table) htmlRows() []htmlRow {
	best := t.best()
	var rs []htmlRow
	for i, r := range t.Rows {
		hr := htmlRow{Rank: i + 1, Policy: r.Policy, Error: r.Error, Notes: r.Notes}
		if r.Error == "" {
			for j, v := range r.Values {
				hr.Cells = append(hr.Cells, htmlCell{Text: statText(v), Best: best[i][j]})
			}
		}
		rs = append(rs, hr)
	}
	return rs
}

// best marks, per column, the successful rows whose finite mean is the best
// (the lowest when column.Lower), ties included.
func (t *table) best() [][]bool {
	marks := make([][]bool, len(t.Rows))
	for i := range marks {
		marks[i] = make([]bool, len(t.Columns))
	}
	for j, c := range t.Columns {
		b := math.NaN()
		for _, r := range t.Rows {
			if v := r.Values; r.Error == "" && finite(v[j].Mean) && (math.IsNaN(b) || beats(c.Lower, v[j].Mean, b)) {
				b = v[j].Mean
			}
		}
		for i, r := range t.Rows {
			marks[i][j] = r.Error == "" && r.Values[j].Mean == b
		}
	}
	return marks
}

// beats reports whether a is better than b.
func beats(lower bool, a, b float64) bool {
	if lower {
		return a < b
	}
	return a > b
}

// statText is "mean ± ci", or the mean alone when one seed gives no interval.
func statText(v stat) string {
	if v.N <= 1 {
		return shortFloat(v.Mean)
	}
	return shortFloat(v.Mean) + " ± " + shortFloat(v.CI)
}

// shortFloat formats for reading, not for parsing back: three significant
// digits, whole numbers from 100 on.
func shortFloat(x float64) string {
	switch {
	case !finite(x):
		return "n/a"
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	default:
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
}

// palette is Tableau's ten categorical colours, distinguishable from one
// another and on white; policies beyond ten cycle.
var palette = [...]string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// policies lists every policy once: rows in rank order first, then those
// with only CDF or sweep data, so legends read like the ranking.
func (t *table) policies() []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, r := range t.Rows {
		add(r.Policy)
	}
	for _, n := range slices.Sorted(maps.Keys(t.CDF)) {
		add(n)
	}
	for _, s := range t.Sweep {
		add(s.Policy)
	}
	return names
}

// policyColors gives each policy one colour across all plots.
func policyColors(names []string) map[string]string {
	c := make(map[string]string, len(names))
	for i, n := range names {
		c[n] = palette[i%len(palette)]
	}
	return c
}

const reportHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; background: #fff; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
p.setup { color: #444; margin-top: 0; }
table.results { border-collapse: collapse; margin: 1em 0 2em; }
table.results th, table.results td { padding: 0.35em 0.8em; border-bottom: 1px solid #ddd; text-align: right; vertical-align: top; }
table.results th { background: #f4f4f4; }
table.results td.policy, table.results th.policy { text-align: left; }
table.results td.best { background: #dff0d8; font-weight: bold; }
table.results td.error { text-align: left; color: #a00; }
tr.failed td.policy { color: #777; }
div.note { font-size: 0.8em; color: #666; max-width: 28em; }
figure { margin: 2em 0; }
figcaption { font-weight: bold; margin-bottom: 0.5em; }
svg text { font-family: system-ui, sans-serif; font-size: 12px; fill: #222; }
svg text.tick { font-size: 11px; fill: #555; }
svg text.empty { font-size: 14px; fill: #777; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="setup">{{.Setup}}</p>
<p class="seeds">{{.Seeds}} Best values per column are highlighted.</p>
<table class="results">
<thead><tr><th>#</th><th class="policy">policy</th>{{range .Heads}}<th title="{{.Hint}}">{{.Name}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr class="row{{if .Error}} failed{{end}}" data-policy="{{.Policy}}"><td>{{.Rank}}</td><td class="policy">{{.Policy}}{{range .Notes}}<div class="note">{{.}}</div>{{end}}</td>{{if .Error}}<td class="error" colspan="{{$.Span}}">failed: {{.Error}}</td>{{else}}{{range .Cells}}<td{{if .Best}} class="best" title="best"{{end}}>{{.Text}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
{{range .Plots}}<figure>
<figcaption>{{.Title}}</figcaption>
<svg id="{{.ID}}" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img">
<title>{{.Title}}</title>
{{range .Grid}}<line x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}" stroke="{{.Stroke}}" stroke-width="{{.Width}}"/>
{{end}}{{range .Rects}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}"/>
{{end}}{{range .Lines}}<line x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}" stroke="{{.Stroke}}" stroke-width="{{.Width}}"/>
{{end}}{{range .Polylines}}<polyline points="{{.Points}}" fill="none" stroke="{{.Stroke}}" stroke-width="2" stroke-linejoin="round"/>
{{end}}{{range .Circles}}<circle cx="{{.X}}" cy="{{.Y}}" r="{{.R}}" fill="{{.Fill}}"/>
{{end}}{{range .Texts}}<text x="{{.X}}" y="{{.Y}}" text-anchor="{{.Anchor}}"{{with .Class}} class="{{.}}"{{end}}{{with .Transform}} transform="{{.}}"{{end}}>{{.Text}}</text>
{{end}}</svg>
</figure>
{{end}}</body>
</html>
`

var reportTemplate = template.Must(template.New("report").Parse(reportHTML))

// The plots are hand-written SVG: a plotting library would pull in fonts
// and produce files with their own styles, while these few primitives stay
// small, inherit the page's CSS and need nothing at view time.

// svgPlot is one chart as primitives in drawing order: grid first, then
// data, then lines and labels on top. Coordinates are pixels.
type svgPlot struct {
	ID, Title string
	W, H      float64
	Grid      []svgLine
	Rects     []svgRect
	Lines     []svgLine
	Polylines []svgPolyline
	Circles   []svgCircle
	Texts     []svgText
}

type svgLine struct {
	X1, Y1, X2, Y2, Width float64
	Stroke                string
}

type svgRect struct {
	X, Y, W, H float64
	Fill       string
}

type svgPolyline struct{ Points, Stroke string }

type svgCircle struct {
	X, Y, R float64
	Fill    string
}

type svgText struct {
	X, Y                           float64
	Anchor, Class, Transform, Text string
}

// Layout, in pixels.
const (
	plotW      = 760.0
	plotMinH   = 380.0
	barBand    = 26.0 // height per bar, gaps included
	legendStep = 18.0
	axisColor  = "#333"
	gridColor  = "#e4e4e4"
)

// px rounds to a tenth of a pixel: finer is invisible and only bloats the file.
func px(x float64) float64 { return math.Round(x*10) / 10 }

func (p *svgPlot) line(x1, y1, x2, y2 float64, stroke string, width float64) {
	p.Lines = append(p.Lines, svgLine{px(x1), px(y1), px(x2), px(y2), width, stroke})
}

func (p *svgPlot) text(x, y float64, anchor, class, s string) {
	p.Texts = append(p.Texts, svgText{X: px(x), Y: px(y), Anchor: anchor, Class: class, Text: s})
}

// empty writes a message in the middle of the plot area, so that a plot
// without data says so instead of showing bare axes.
func (p *svgPlot) empty(f frame, msg string) {
	p.text((f.left+f.right)/2, (f.top+f.bottom)/2, "middle", "empty", msg)
}

// scale maps data values [d0, d1] linearly onto pixels [r0, r1]; niceDomain
// guarantees d1 > d0.
type scale struct{ d0, d1, r0, r1 float64 }

// at clamps to well beyond the plot: a value that overflows the domain
// (a huge interval around a huge mean) must still give a finite coordinate.
func (s scale) at(v float64) float64 {
	const far = 1e5
	x := s.r0 + (v-s.d0)/(s.d1-s.d0)*(s.r1-s.r0)
	return max(min(s.r0, s.r1)-far, min(x, max(s.r0, s.r1)+far))
}

// niceDomain widens [lo, hi] to multiples of a 1, 2 or 5 × 10^k step giving
// about five ticks. An empty or non-finite range becomes a unit one, so the
// scale never divides by zero.
func niceDomain(lo, hi float64) (a, b float64, ticks []float64) {
	if !finite(lo) || !finite(hi) || !finite(hi-lo) {
		lo, hi = 0, 1
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		pad := math.Abs(lo) / 2
		if pad == 0 {
			pad = 1
		}
		lo, hi = lo-pad, hi+pad
	}
	step := niceStep((hi - lo) / 5)
	a, b = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	n := math.Round((b - a) / step)
	if !(step > 0) || !finite(a) || !finite(b) || !(b > a) || n > 100 {
		return lo, hi, []float64{lo, hi}
	}
	for i := 0.0; i <= n; i++ {
		v := a + i*step
		if math.Abs(v) < step*1e-9 {
			v = 0 // not -0 or 1e-17 from rounding
		}
		ticks = append(ticks, v)
	}
	return a, b, ticks
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	switch f := x / p; {
	case f <= 1:
		return p
	case f <= 2:
		return 2 * p
	case f <= 5:
		return 5 * p
	}
	return 10 * p
}

// frame is a plot area, in pixels, with the scales and ticks of its axes;
// yTicks is nil when the y axis is categorical.
type frame struct {
	x, y                     scale
	xTicks, yTicks           []float64
	left, top, right, bottom float64
}

func newFrame(left, top, right, bottom, xlo, xhi, ylo, yhi float64) frame {
	x0, x1, xt := niceDomain(xlo, xhi)
	y0, y1, yt := niceDomain(ylo, yhi)
	return frame{x: scale{x0, x1, left, right}, y: scale{y0, y1, bottom, top},
		xTicks: xt, yTicks: yt, left: left, top: top, right: right, bottom: bottom}
}

// axes draws grid lines and tick labels, the two axis lines and their labels.
func (p *svgPlot) axes(f frame, xLabel, yLabel string) {
	for _, v := range f.xTicks {
		x := px(f.x.at(v))
		p.Grid = append(p.Grid, svgLine{x, px(f.top), x, px(f.bottom), 1, gridColor})
		p.text(x, f.bottom+16, "middle", "tick", tickText(v))
	}
	for _, v := range f.yTicks {
		y := px(f.y.at(v))
		p.Grid = append(p.Grid, svgLine{px(f.left), y, px(f.right), y, 1, gridColor})
		p.text(f.left-6, y+4, "end", "tick", tickText(v))
	}
	p.line(f.left, f.top, f.left, f.bottom, axisColor, 1)
	p.line(f.left, f.bottom, f.right, f.bottom, axisColor, 1)
	p.text((f.left+f.right)/2, f.bottom+36, "middle", "", xLabel)
	if yLabel != "" {
		x, y := 16.0, px((f.top+f.bottom)/2)
		p.Texts = append(p.Texts, svgText{X: x, Y: y, Anchor: "middle", Text: yLabel,
			Transform: fmt.Sprintf("rotate(-90 %v %v)", x, y)})
	}
}

func tickText(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// polyline draws the points (data coordinates) through f. Points on the
// same pixel, and the middle of three points along one horizontal or
// vertical run, are dropped: a CDF of thousands of jobs stays small.
func (p *svgPlot) polyline(f frame, xs, ys []float64, stroke string) {
	var pts [][2]float64
	for i := range xs {
		q := [2]float64{px(f.x.at(xs[i])), px(f.y.at(ys[i]))}
		n := len(pts)
		switch {
		case n > 0 && pts[n-1] == q:
			continue
		case n > 1 && straight(pts[n-2], pts[n-1], q):
			pts[n-1] = q
			continue
		}
		pts = append(pts, q)
	}
	var b strings.Builder
	for i, q := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(formatFloat(q[0]) + "," + formatFloat(q[1]))
	}
	p.Polylines = append(p.Polylines, svgPolyline{b.String(), stroke})
}

// straight reports whether b lies on an axis-parallel segment from a to c
// that does not turn back, so that dropping b changes nothing visible.
func straight(a, b, c [2]float64) bool {
	for k := range 2 {
		o := 1 - k
		if a[k] == b[k] && b[k] == c[k] && (b[o]-a[o])*(c[o]-b[o]) >= 0 {
			return true
		}
	}
	return false
}

// legend lists names with their colours from (x, y) downwards.
func (p *svgPlot) legend(x, y float64, names []string, colors map[string]string) {
	for i, n := range names {
		yy := y + float64(i)*legendStep
		p.line(x, yy, x+18, yy, colors[n], 3)
		p.text(x+24, yy+4, "start", "", clip(n, 24))
	}
}

// whisker draws a confidence interval from (x1, y1) to (x2, y2) with caps
// across it.
func (p *svgPlot) whisker(x1, y1, x2, y2 float64) {
	const c = 4
	p.line(x1, y1, x2, y2, axisColor, 1)
	if y1 == y2 {
		p.line(x1, y1-c, x1, y1+c, axisColor, 1)
		p.line(x2, y2-c, x2, y2+c, axisColor, 1)
		return
	}
	p.line(x1-c, y1, x1+c, y1, axisColor, 1)
	p.line(x2-c, y2, x2+c, y2, axisColor, 1)
}

// clip shortens s to n runes so a long name cannot push labels off the plot.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func hasCI(v stat) bool { return v.N > 1 && v.CI > 0 && finite(v.CI) }

// legendHeight is a plot's height with room for n legend entries.
func legendHeight(n int) float64 { return max(plotMinH, 40+legendStep*float64(n)+60) }

// barsPlot draws the first column's mean per successful policy as
// horizontal bars, in rank order, with confidence-interval whiskers.
func (t *table) barsPlot(colors map[string]string) *svgPlot {
	p := &svgPlot{ID: "bars", Title: "No metrics", W: plotW}
	var bars []row
	lo, hi := 0.0, 0.0
	for _, r := range t.Rows {
		if r.Error != "" || len(r.Values) == 0 || !finite(r.Values[0].Mean) {
			continue
		}
		bars = append(bars, r)
		v := r.Values[0]
		lo, hi = min(lo, v.Mean), max(hi, v.Mean)
		if hasCI(v) {
			lo, hi = min(lo, v.Mean-v.CI), max(hi, v.Mean+v.CI)
		}
	}
	const left, top = 200.0, 10.0
	p.H = top + barBand*float64(max(1, len(bars))) + 50
	f := newFrame(left, top, plotW-90, p.H-50, lo, hi, 0, 1)
	f.yTicks = nil
	label := ""
	if len(t.Columns) > 0 {
		c := t.Columns[0]
		label = c.Name + unitSuffix(c.Unit)
		p.Title = fmt.Sprintf("%s per policy: mean ± 95 %% CI, %s is better", label, betterWord(c.Lower))
	}
	p.axes(f, label, "")
	if len(bars) == 0 {
		p.empty(f, "no successful policy")
		return p
	}
	for i, r := range bars {
		p.bar(f, top+barBand*float64(i), r.Values[0], r.Policy, colors[r.Policy])
	}
	if f.x.d0 < 0 {
		p.line(f.x.at(0), f.top, f.x.at(0), f.bottom, axisColor, 1)
	}
	return p
}

// bar draws one bar from zero to v.Mean in the band starting at y, its
// whisker, the policy name on the left and the value on the right.
func (p *svgPlot) bar(f frame, y float64, v stat, name, color string) {
	a, b := f.x.at(0), f.x.at(v.Mean)
	if b < a {
		a, b = b, a
	}
	p.Rects = append(p.Rects, svgRect{px(a), px(y + 5), px(b - a), barBand - 10, color})
	mid, end := y+barBand/2, b
	if hasCI(v) {
		p.whisker(f.x.at(v.Mean-v.CI), mid, f.x.at(v.Mean+v.CI), mid)
		end = max(end, f.x.at(v.Mean+v.CI))
	}
	p.text(f.left-8, mid+4, "end", "", clip(name, 30))
	p.text(end+6, mid+4, "start", "tick", statText(v))
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " (" + unit + ")"
}

func betterWord(lower bool) string {
	if lower {
		return "lower"
	}
	return "higher"
}

// cdfPlot draws each policy's empirical JCT distribution as a staircase.
func (t *table) cdfPlot(names []string, colors map[string]string) *svgPlot {
	p := &svgPlot{ID: "cdf", Title: "Job completion time CDF, finished jobs of the first seed", W: plotW}
	var shown []string
	series := map[string][]float64{}
	lo, hi := 0.0, math.Inf(-1)
	for _, n := range names {
		var xs []float64
		for _, x := range t.CDF[n] {
			if finite(x) {
				xs = append(xs, x)
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		if len(xs) > 0 {
			slices.Sort(xs)
			series[n] = xs
			shown = append(shown, n)
		}
	}
	if len(shown) == 0 {
		lo, hi = 0, 1
	}
	p.H = legendHeight(len(shown))
	f := newFrame(60, 15, plotW-200, p.H-50, lo, hi, 0, 1)
	p.axes(f, "job completion time (h)", "fraction of finished jobs")
	if len(shown) == 0 {
		p.empty(f, "no finished jobs")
		return p
	}
	for _, n := range shown {
		xs, ys := staircase(series[n])
		p.polyline(f, xs, ys, colors[n])
	}
	p.legend(plotW-185, 25, shown, colors)
	return p
}

// staircase returns the corners of the empirical CDF of sorted xs: at each
// value the fraction jumps up by 1/len(xs).
func staircase(sorted []float64) (xs, ys []float64) {
	n := float64(len(sorted))
	for k, x := range sorted {
		xs = append(xs, x, x)
		ys = append(ys, float64(k)/n, float64(k+1)/n)
	}
	return xs, ys
}

// sweepPlot draws average JCT against arrival rate, one line per policy,
// leaving out failed runs and non-finite points.
func (t *table) sweepPlot(names []string, colors map[string]string) *svgPlot {
	p := &svgPlot{ID: "sweep", Title: "Average JCT against arrival rate: mean ± 95 % CI", W: plotW}
	series := map[string][]sweep{}
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), 0.0, 0.0
	for _, s := range t.Sweep {
		v := s.AvgJCT
		if s.Error != "" || !finite(s.Rate) || !finite(v.Mean) {
			continue
		}
		series[s.Policy] = append(series[s.Policy], s)
		xlo, xhi = min(xlo, s.Rate), max(xhi, s.Rate)
		ylo, yhi = min(ylo, v.Mean), max(yhi, v.Mean)
		if hasCI(v) {
			ylo, yhi = min(ylo, v.Mean-v.CI), max(yhi, v.Mean+v.CI)
		}
	}
	var shown []string
	for _, n := range names {
		if len(series[n]) > 0 {
			shown = append(shown, n)
		}
	}
	p.H = legendHeight(len(shown))
	f := newFrame(60, 15, plotW-200, p.H-50, xlo, xhi, ylo, yhi)
	p.axes(f, "arrival rate (jobs/h)", "average JCT (h)")
	if len(shown) == 0 {
		p.empty(f, "no successful runs")
		return p
	}
	for _, n := range shown {
		p.sweepLine(f, series[n], colors[n])
	}
	p.legend(plotW-185, 25, shown, colors)
	return p
}

// sweepLine draws one policy's points in rate order, with whiskers.
func (p *svgPlot) sweepLine(f frame, ss []sweep, color string) {
	slices.SortStableFunc(ss, func(a, b sweep) int { return cmp.Compare(a.Rate, b.Rate) })
	var xs, ys []float64
	for _, s := range ss {
		v := s.AvgJCT
		x, y := f.x.at(s.Rate), f.y.at(v.Mean)
		xs, ys = append(xs, s.Rate), append(ys, v.Mean)
		if hasCI(v) {
			p.whisker(x, f.y.at(v.Mean-v.CI), x, f.y.at(v.Mean+v.CI))
		}
		p.Circles = append(p.Circles, svgCircle{px(x), px(y), 3.5, color})
	}
	p.polyline(f, xs, ys, color)
}
