package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image"
	"image/png"
	"io"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const fifoNote = `ignores priorities, "weights" too`

// reportTable is a small comparison: two successful policies (one with
// notes), one failed, a CDF and a sweep with one failed run.
func reportTable() *table {
	return &table{
		Title: "dlsched compare",
		Setup: "workload: 20 generated jobs at 8 jobs/h; cluster v100=4,p100=4",
		Seeds: 5,
		Columns: []column{
			{Key: "avg_jct_h", Name: "avg JCT", Unit: "h", Lower: true},
			{Key: "util_pct", Name: "utilization", Unit: "%"},
			{Key: "preempt", Name: "preempt/job", Lower: true},
		},
		Rows: []row{
			{Policy: "gavel.las", Values: []stat{{2.5, 0.3, 5}, {80, 2, 5}, {1.0 / 3, 0.1, 5}}},
			{Policy: "gavel.fifo", Notes: []string{fifoNote, "no migration"},
				Values: []stat{{3.75, 0.5, 5}, {85, 1.5, 5}, {0, 0, 5}}},
			{Policy: "test.failing", Error: "allocate: boom <b>&</b>"},
		},
		CDF: map[string][]float64{
			"gavel.las":  {0.5, 1, 1.5, 2, 4},
			"gavel.fifo": {1, 2, 3, 6, 9},
		},
		Sweep: []sweep{
			{Policy: "gavel.las", Rate: 4, AvgJCT: stat{1, 0.1, 5}},
			{Policy: "gavel.las", Rate: 8, AvgJCT: stat{2.5, 0.3, 5}},
			{Policy: "gavel.las", Rate: 12, AvgJCT: stat{5, 0.8, 5}},
			{Policy: "gavel.fifo", Rate: 4, AvgJCT: stat{1.5, 0.2, 5}},
			{Policy: "gavel.fifo", Rate: 8, AvgJCT: stat{3.75, 0.5, 5}},
			{Policy: "gavel.fifo", Rate: 12, Error: "timed out"},
		},
	}
}

func TestReportCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := reportTable().writeCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	// A header, three columns for each of two policies and one failure.
	if len(recs) != 1+3*2+1 {
		t.Fatalf("%d records, want 8:\n%s", len(recs), buf.String())
	}
	want := map[int][]string{
		0: {"policy", "metric", "unit", "mean", "ci95", "n", "error", "notes"},
		1: {"gavel.las", "avg_jct_h", "h", "2.5", "0.3", "5", "", ""},
		3: {"gavel.las", "preempt", "", "0.3333333333333333", "0.1", "5", "", ""},
		5: {"gavel.fifo", "util_pct", "%", "85", "1.5", "5", "", fifoNote + "; no migration"},
		7: {"test.failing", "", "", "", "", "", "allocate: boom <b>&</b>", ""},
	}
	for i, w := range want {
		if diff := cmp.Diff(w, recs[i]); diff != "" {
			t.Errorf("record %d (-want +got):\n%s", i, diff)
		}
	}
	if !strings.Contains(buf.String(), `"ignores priorities, ""weights"" too; no migration"`) {
		t.Errorf("the note is not quoted as CSV:\n%s", buf.String())
	}
}

func TestReportCSVRejectsMisalignedRow(t *testing.T) {
	tab := reportTable()
	tab.Rows[0].Values = tab.Rows[0].Values[:1]
	for name, write := range map[string]func(io.Writer) error{"csv": tab.writeCSV, "html": tab.writeHTML} {
		if err := write(io.Discard); err == nil || !strings.Contains(err.Error(), `"gavel.las" has 1 values for 3 columns`) {
			t.Errorf("%s: err = %v, want the misaligned row named", name, err)
		}
	}
}

func TestReportSweepCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := reportTable().writeSweepCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 {
		t.Fatalf("%d records, want a header and 6 lines: %q", len(recs), recs)
	}
	if diff := cmp.Diff([]string{"policy", "rate", "avg_jct_h", "ci95", "n", "error"}, recs[0]); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gavel.las", "8", "2.5", "0.3", "5", ""}, recs[2]); diff != "" {
		t.Errorf("line 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gavel.fifo", "12", "", "", "", "timed out"}, recs[6]); diff != "" {
		t.Errorf("failed run (-want +got):\n%s", diff)
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	want := reportTable()
	var buf bytes.Buffer
	if err := want.writeJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"title\": ") || !strings.HasSuffix(buf.String(), "}\n") {
		t.Errorf("not indented JSON:\n%s", buf.String())
	}
	var got table
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want.CDF = nil // not part of the JSON
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestReportJSONRejectsNonFinite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*table)
		wants []string
	}{
		{"mean NaN", func(t *table) { t.Rows[1].Values[1].Mean = math.NaN() }, []string{`"gavel.fifo"`, "util_pct", "NaN"}},
		{"ci Inf", func(t *table) { t.Rows[0].Values[2].CI = math.Inf(1) }, []string{`"gavel.las"`, "preempt", "ci95", "+Inf"}},
		{"sweep NaN", func(t *table) { t.Sweep[4].AvgJCT.Mean = math.NaN() }, []string{`"gavel.fifo"`, "sweep", "rate 8", "NaN"}},
		{"sweep rate Inf", func(t *table) { t.Sweep[0].Rate = math.Inf(-1) }, []string{`"gavel.las"`, "rate", "-Inf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := reportTable()
			tc.edit(tab)
			var buf bytes.Buffer
			err := tab.writeJSON(&buf)
			if err == nil {
				t.Fatalf("no error; wrote %s", buf.String())
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes despite the error", buf.Len())
			}
		})
	}
}

// element is an element of a parsed page: its attributes, its whole text
// content and its parent's index (-1 for the root).
type element struct {
	Name   string
	Attr   map[string]string
	Text   string
	Parent int
}

// renderHTML writes tab's report and parses it. The page is also
// well-formed XML, which makes encoding/xml a strict check of balanced,
// escaped markup; every number an SVG element carries must be finite.
func renderHTML(t *testing.T, tab *table) (string, []element) {
	t.Helper()
	var buf bytes.Buffer
	if err := tab.writeHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.HasPrefix(page, "<!DOCTYPE html>\n") {
		t.Errorf("no HTML5 doctype: %.40q", page)
	}
	els := parsePage(t, page)
	for _, e := range els {
		if inSVG(els, e) {
			checkNumbers(t, e)
		}
	}
	return page, els
}

func parsePage(t *testing.T, page string) []element {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = true
	var els []element
	var open []int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, page)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := element{Name: tok.Name.Local, Attr: map[string]string{}, Parent: -1}
			if len(open) > 0 {
				e.Parent = open[len(open)-1]
			}
			for _, a := range tok.Attr {
				e.Attr[a.Name.Local] = a.Value
			}
			open = append(open, len(els))
			els = append(els, e)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			for _, i := range open {
				els[i].Text += string(tok)
			}
		}
	}
	if len(open) != 0 {
		t.Fatalf("%d unclosed elements", len(open))
	}
	return els
}

func inSVG(els []element, e element) bool {
	for p := e.Parent; p >= 0; p = els[p].Parent {
		if els[p].Name == "svg" {
			return true
		}
	}
	return e.Name == "svg"
}

// checkNumbers fails for a numeric SVG attribute that does not parse as a
// finite number: a NaN that slipped into a coordinate.
func checkNumbers(t *testing.T, e element) {
	t.Helper()
	for k, v := range e.Attr {
		var fields []string
		switch k {
		case "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height", "stroke-width":
			fields = []string{v}
		case "points", "viewBox":
			fields = strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' })
		}
		for _, f := range fields {
			if x, err := strconv.ParseFloat(f, 64); err != nil || !finite(x) {
				t.Errorf("<%s %s=%q>: %q is not a finite number", e.Name, k, v, f)
			}
		}
	}
}

// find returns the elements named name whose attribute key is val ("" for
// any element named name).
func find(els []element, name, key, val string) []int {
	var is []int
	for i, e := range els {
		if e.Name == name && (key == "" || e.Attr[key] == val) {
			is = append(is, i)
		}
	}
	return is
}

func children(els []element, parent int, name string) []int {
	var is []int
	for i, e := range els {
		if e.Parent == parent && e.Name == name {
			is = append(is, i)
		}
	}
	return is
}

// descendants counts the elements named name below the element at i.
func descendants(els []element, i int, name string) int {
	n := 0
	for _, e := range els {
		for p := e.Parent; p >= 0; p = els[p].Parent {
			if p == i {
				if e.Name == name {
					n++
				}
				break
			}
		}
	}
	return n
}

// rowsByPolicy returns the tr.row elements in page order.
func rows(els []element) []int {
	var is []int
	for _, i := range find(els, "tr", "", "") {
		if slices.Contains(strings.Fields(els[i].Attr["class"]), "row") {
			is = append(is, i)
		}
	}
	return is
}

func TestReportHTMLEscapes(t *testing.T) {
	const evil = "<script>alert(1)</script>"
	tab := reportTable()
	tab.Title = "<b>title</b>"
	tab.Rows[0].Policy = evil
	tab.Rows[1].Notes = []string{`<img src=x onerror="alert(2)">`}
	tab.Rows[2].Error = "</td><script>alert(3)</script>"
	tab.CDF[evil] = tab.CDF["gavel.las"]
	tab.Sweep[0].Policy = evil
	page, els := renderHTML(t, tab)
	low := strings.ToLower(page)
	for _, bad := range []string{"<script", "<img", "<b>"} {
		if strings.Contains(low, bad) {
			t.Errorf("page contains unescaped %q", bad)
		}
	}
	if rs := find(els, "tr", "data-policy", evil); len(rs) != 1 {
		t.Errorf("%d rows with data-policy %q, want 1", len(rs), evil)
	}
	if got := find(els, "td", "class", "error"); len(got) != 1 || els[got[0]].Text != "failed: </td><script>alert(3)</script>" {
		t.Errorf("failure cell not shown as text: %v", got)
	}
	if got := find(els, "div", "class", "note"); len(got) != 1 || els[got[0]].Text != `<img src=x onerror="alert(2)">` {
		t.Errorf("note not shown as text")
	}
}

func TestReportHTMLRows(t *testing.T) {
	tab := reportTable()
	_, els := renderHTML(t, tab)
	rs := rows(els)
	if len(rs) != len(tab.Rows) {
		t.Fatalf("%d rows, want %d", len(rs), len(tab.Rows))
	}
	for k, r := range tab.Rows {
		if n := len(find(els, "tr", "data-policy", r.Policy)); n != 1 {
			t.Errorf("policy %s has %d rows, want 1", r.Policy, n)
		}
		if got := els[rs[k]].Attr["data-policy"]; got != r.Policy {
			t.Errorf("row %d is %s, want %s: rank order lost", k, got, r.Policy)
		}
	}
	las := children(els, rs[0], "td")
	if len(las) != 2+3 || els[las[2]].Text != "2.5 ± 0.3" || els[las[4]].Text != "0.333 ± 0.1" {
		t.Errorf("gavel.las cells: %v", texts(els, las))
	}
	fifo := children(els, rs[1], "td")
	if notes := find(els, "div", "class", "note"); len(notes) != 2 || els[notes[0]].Parent != fifo[1] || els[notes[0]].Text != fifoNote {
		t.Errorf("notes are not under gavel.fifo's name: %v", notes)
	}
	failed := children(els, rs[2], "td")
	if len(failed) != 3 || els[failed[2]].Attr["colspan"] != "3" || els[failed[2]].Text != "failed: allocate: boom <b>&</b>" ||
		!strings.Contains(els[rs[2]].Attr["class"], "failed") {
		t.Errorf("failed row: cells %q, attributes %v", texts(els, failed), els[rs[2]].Attr)
	}

	// One seed: the mean alone.
	tab.Rows[0].Values[0] = stat{Mean: 2.5, N: 1}
	_, els = renderHTML(t, tab)
	if td := children(els, rows(els)[0], "td"); els[td[2]].Text != "2.5" {
		t.Errorf("one seed: cell %q, want the mean alone", els[td[2]].Text)
	}
}

func texts(els []element, is []int) []string {
	var s []string
	for _, i := range is {
		s = append(s, els[i].Text)
	}
	return s
}

// bestCells returns, per row, which value cells are marked best.
func bestCells(t *testing.T, tab *table) [][]bool {
	t.Helper()
	_, els := renderHTML(t, tab)
	var marks [][]bool
	for _, r := range rows(els) {
		var m []bool
		for _, td := range children(els, r, "td")[2:] {
			m = append(m, els[td].Attr["class"] == "best")
		}
		marks = append(marks, m)
	}
	return marks
}

func TestReportHTMLBest(t *testing.T) {
	tab := reportTable()
	// Lower JCT and preemptions, higher utilization are better; the failed
	// row has no value cell to mark.
	want := [][]bool{{true, false, false}, {false, true, true}, {false}}
	if diff := cmp.Diff(want, bestCells(t, tab)); diff != "" {
		t.Errorf("best (-want +got):\n%s", diff)
	}
	// A tie marks both; NaN and infinities are never best.
	tab.Rows[1].Values[0].Mean = 2.5
	tab.Rows[0].Values[1].Mean = math.NaN()
	tab.Rows[1].Values[1].Mean = 60
	tab.Rows[0].Values[2].Mean = math.Inf(-1)
	want = [][]bool{{true, false, false}, {true, true, true}, {false}}
	if diff := cmp.Diff(want, bestCells(t, tab)); diff != "" {
		t.Errorf("ties and non-finite values (-want +got):\n%s", diff)
	}
}

func TestReportHTMLPlots(t *testing.T) {
	tab := reportTable()
	_, els := renderHTML(t, tab)
	ids := map[string]int{}
	for _, i := range find(els, "svg", "", "") {
		ids[els[i].Attr["id"]] = i
		if ts := children(els, i, "title"); len(ts) != 1 || els[ts[0]].Text == "" {
			t.Errorf("svg %s has no title", els[i].Attr["id"])
		}
	}
	if len(ids) != 3 {
		t.Fatalf("svg ids %v, want bars, cdf and sweep", ids)
	}
	for id, want := range map[string]map[string]int{
		"bars":  {"rect": 2, "polyline": 0},
		"cdf":   {"polyline": 2},
		"sweep": {"polyline": 2, "circle": 5},
	} {
		i, ok := ids[id]
		if !ok {
			t.Errorf("no svg %s", id)
			continue
		}
		for name, n := range want {
			if got := descendants(els, i, name); got != n {
				t.Errorf("svg %s: %d %s, want %d", id, got, name, n)
			}
		}
	}
	// Bars are as long as the means: gavel.fifo's 3.75 h against 2.5 h.
	rects := find(els, "rect", "", "")
	w0, _ := strconv.ParseFloat(els[rects[0]].Attr["width"], 64)
	w1, _ := strconv.ParseFloat(els[rects[1]].Attr["width"], 64)
	if math.Abs(w1/w0-1.5) > 0.01 {
		t.Errorf("bar widths %v and %v, want a ratio of 1.5", w0, w1)
	}
	// The CDF staircase only goes right and up (to smaller y in pixels),
	// from the x axis to the top.
	line := els[find(els, "polyline", "", "")[0]].Attr["points"]
	pts := strings.Fields(line)
	for i := 1; i < len(pts); i++ {
		x0, y0 := xyOf(pts[i-1])
		x1, y1 := xyOf(pts[i])
		if x1 < x0 || y1 > y0 {
			t.Errorf("CDF points %q go back at %d", line, i)
		}
	}
	if len(pts) < 3 {
		t.Errorf("CDF points %q: want a staircase", line)
	}

	tab.Sweep = nil
	_, els = renderHTML(t, tab)
	if got := find(els, "svg", "id", "sweep"); len(got) != 0 {
		t.Errorf("sweep plot without a sweep")
	}
	if got := len(find(els, "svg", "", "")); got != 2 {
		t.Errorf("%d plots without a sweep, want 2", got)
	}
}

func xyOf(pt string) (x, y float64) {
	xs, ys, _ := strings.Cut(pt, ",")
	x, _ = strconv.ParseFloat(xs, 64)
	y, _ = strconv.ParseFloat(ys, 64)
	return x, y
}

func TestReportHTMLEdgeCases(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name  string
		edit  func(*table)
		empty []string // plots that must say they have no data
	}{
		{"zero rows", func(t *table) { t.Rows, t.CDF, t.Sweep = nil, nil, nil }, []string{"bars", "cdf"}},
		{"no columns", func(t *table) {
			t.Columns = nil
			for i := range t.Rows {
				t.Rows[i].Values = nil
			}
		}, []string{"bars"}},
		{"all failed", func(t *table) {
			for i := range t.Rows {
				t.Rows[i].Error, t.Rows[i].Values = "failed "+strconv.Itoa(i), nil
			}
			t.CDF = map[string][]float64{"gavel.las": {}}
			for i := range t.Sweep {
				t.Sweep[i].Error = "x"
			}
		}, []string{"bars", "cdf", "sweep"}},
		{"one point", func(t *table) {
			t.Rows = t.Rows[:1]
			t.CDF = map[string][]float64{"gavel.las": {3}}
			t.Sweep = t.Sweep[:1]
		}, nil},
		{"all equal", func(t *table) {
			for i := range t.Rows[:2] {
				t.Rows[i].Values = []stat{{2, 0, 1}, {2, 0, 1}, {0, 0, 1}}
			}
			t.CDF = map[string][]float64{"gavel.las": {2, 2, 2}, "gavel.fifo": {2}}
			for i := range t.Sweep {
				t.Sweep[i] = sweep{Policy: t.Sweep[i].Policy, Rate: 8, AvgJCT: stat{2, 0, 1}}
			}
		}, nil},
		{"negative and tiny", func(t *table) {
			t.Rows[0].Values[0] = stat{-1e-300, 1e-301, 3}
			t.Rows[1].Values[0] = stat{-2e-300, 0, 3}
		}, nil},
		{"huge", func(t *table) {
			t.Rows[0].Values[0] = stat{-1e308, 1e308, 3}
			t.Rows[1].Values[0] = stat{1e308, 0, 3}
		}, nil},
		{"non-finite", func(t *table) {
			t.Rows[0].Values[0] = stat{nan, nan, 5}
			t.Rows[1].Values[0] = stat{3, inf, 5}
			t.CDF["gavel.las"] = []float64{nan, inf, -inf}
			t.CDF["gavel.fifo"] = append(t.CDF["gavel.fifo"], nan)
			t.Sweep[0].Rate, t.Sweep[1].AvgJCT.Mean, t.Sweep[2].AvgJCT.CI = nan, inf, nan
		}, nil},
		{"many policies", func(t *table) {
			for i := range 25 {
				name := "policy-with-a-rather-long-name-" + strconv.Itoa(i)
				t.Rows = append(t.Rows, row{Policy: name, Values: []stat{{float64(i), 1, 5}, {50, 0, 5}, {1, 0, 5}}})
				t.CDF[name] = []float64{float64(i)}
				t.Sweep = append(t.Sweep, sweep{Policy: name, Rate: 4, AvgJCT: stat{float64(i), 0, 5}})
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := reportTable()
			tc.edit(tab)
			_, els := renderHTML(t, tab)
			if got := len(rows(els)); got != len(tab.Rows) {
				t.Errorf("%d rows, want %d", got, len(tab.Rows))
			}
			for _, id := range []string{"bars", "cdf", "sweep"} {
				svgs := find(els, "svg", "id", id)
				if id == "sweep" && len(tab.Sweep) == 0 {
					continue
				}
				if len(svgs) != 1 {
					t.Errorf("%d svg %s, want 1", len(svgs), id)
					continue
				}
				empty := false
				for _, i := range find(els, "text", "class", "empty") {
					empty = empty || els[i].Parent == svgs[0]
				}
				if want := slices.Contains(tc.empty, id); empty != want {
					t.Errorf("svg %s says it is empty: %v, want %v", id, empty, want)
				}
			}
		})
	}
}

func TestReportNiceDomain(t *testing.T) {
	for _, tc := range []struct{ lo, hi, a, b float64 }{
		{0, 1, 0, 1},
		{0, 7.3, 0, 8},
		{-0.3, 0.3, -0.4, 0.4},
		{3, 3, 1, 5}, // widened by half the value
		{0, 0, -1, 1},
		{math.NaN(), 1, 0, 1},
		{1, math.Inf(1), 0, 1},
		{5, 2, 2, 5},
	} {
		a, b, ticks := niceDomain(tc.lo, tc.hi)
		if a != tc.a || b != tc.b {
			t.Errorf("niceDomain(%v, %v) = %v, %v, want %v, %v", tc.lo, tc.hi, a, b, tc.a, tc.b)
		}
		if len(ticks) < 2 || ticks[0] != a || ticks[len(ticks)-1] != b {
			t.Errorf("niceDomain(%v, %v) ticks %v do not span %v..%v", tc.lo, tc.hi, ticks, a, b)
		}
	}
	if a, b, _ := niceDomain(-1e308, 1e308); !(b > a) || !finite(a) || !finite(b) {
		t.Errorf("niceDomain(±1e308) = %v, %v", a, b)
	}
}

func TestReportWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	tab := reportTable()
	if err := tab.writeFiles(dir); err != nil {
		t.Fatal(err)
	}
	checkDir(t, dir, "report.html", "results.csv", "results.json", "sweep.csv")
	var got table
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &got); err != nil || len(got.Rows) != 3 {
		t.Errorf("results.json: %d rows, %v", len(got.Rows), err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(html), `data-policy="gavel.fifo"`) {
		t.Errorf("report.html: %v", err)
	}

	// Without a sweep no sweep.csv; a NaN fails the JSON alone and leaves
	// no temporary file behind.
	dir = t.TempDir()
	tab.Sweep = nil
	tab.Rows[0].Values[0].Mean = math.NaN()
	err = tab.writeFiles(dir)
	if err == nil || !strings.Contains(err.Error(), "results.json") || !strings.Contains(err.Error(), `"gavel.las"`) {
		t.Errorf("err = %v, want results.json's NaN error", err)
	}
	checkDir(t, dir, "report.html", "results.csv")
}

func checkDir(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		if info, err := e.Info(); err != nil || info.Size() == 0 || info.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v, %v", e.Name(), info, err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", dir, diff)
	}
}

const chromium = "/usr/bin/chromium"

// TestReportInBrowser opens a report in headless Chromium: the DOM it
// builds must hold the rows and plots, and a screenshot must show more
// than a blank page.
func TestReportInBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("DLSCHED_BROWSER_TEST") == "1" {
			t.Fatalf("DLSCHED_BROWSER_TEST=1 but no browser: %v", err)
		}
		t.Skipf("no browser: %v", err)
	}
	tab := reportTable()
	tab.Rows = append(tab.Rows[:2],
		row{Policy: "gavel.ftf", Values: []stat{{4, 0.4, 5}, {70, 3, 5}, {2, 0.5, 5}}},
		row{Policy: "gavel.las-agnostic", Values: []stat{{4.5, 0.2, 5}, {75, 1, 5}, {1.5, 0.2, 5}}},
		row{Policy: "test.failing", Error: "solver timed out"})
	tab.CDF["gavel.ftf"] = []float64{1, 2.5, 4, 7}
	dir := t.TempDir()
	if err := tab.writeFiles(dir); err != nil {
		t.Fatal(err)
	}
	page := (&url.URL{Scheme: "file", Path: filepath.Join(dir, "report.html")}).String()

	dom, stderr := runChromium(t, "--dump-dom", page)
	for _, r := range tab.Rows {
		if n := strings.Count(dom, `data-policy="`+r.Policy+`"`); n != 1 {
			t.Errorf("DOM has %d rows of %s, want 1", n, r.Policy)
		}
	}
	for _, want := range []string{`id="bars"`, `id="cdf"`, `id="sweep"`, "failed: solver timed out", fifoNote[:20]} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %s", want)
		}
	}
	if t.Failed() {
		t.Fatalf("chromium's stderr:\n%s\nDOM:\n%s", stderr, dom)
	}

	shot := filepath.Join(dir, "shot.png")
	_, stderr = runChromium(t, "--screenshot="+shot, "--window-size=1200,2000", page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v; stderr:\n%s", err, stderr)
	}
	if got := img.Bounds().Size(); got != image.Pt(1200, 2000) {
		t.Errorf("screenshot is %v, want 1200×2000; stderr:\n%s", got, stderr)
	}
	if n := distinctColors(img, 11); n <= 10 {
		t.Errorf("screenshot has %d colours, want more than 10: a blank page? stderr:\n%s", n, stderr)
	}
}

// runChromium runs headless Chromium on its own profile and returns its
// standard output and error; a failure or a minute's wait fails the test.
func runChromium(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, chromium, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// Chromium's helper processes inherit the pipes; do not wait for them
	// forever once the browser itself has exited.
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	t.Logf("chromium %s: %v", strings.Join(args[9:], " "), time.Since(start).Round(time.Millisecond))
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		t.Fatalf("chromium %q: %v (context: %v); stderr:\n%s", args, err, ctx.Err(), errOut.String())
	}
	return out.String(), errOut.String()
}

// distinctColors counts img's colours, stopping at limit.
func distinctColors(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}
