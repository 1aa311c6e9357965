package main

import (
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot size; the format (SVG) follows from the file name's extension.
const (
	plotWidth  = 7 * vg.Inch
	plotHeight = 4.5 * vg.Inch
)

// plotJCTCDF writes the CDF of the measured jobs' completion times, in hours,
// one line per policy.
func plotJCTCDF(path string, outcomes []outcome) error {
	p := plot.New()
	p.Title.Text = "Job completion time CDF"
	p.X.Label.Text = "JCT (hours)"
	p.Y.Label.Text = "fraction of finished jobs"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	for i, o := range outcomes {
		var jct []float64
		for _, m := range o.perJob {
			if m.Finished {
				jct = append(jct, m.JCT/3600)
			}
		}
		slices.Sort(jct)
		xys := make(plotter.XYs, 0, len(jct)+1)
		if len(jct) > 0 {
			xys = append(xys, plotter.XY{X: jct[0], Y: 0})
		}
		for k, x := range jct {
			xys = append(xys, plotter.XY{X: x, Y: float64(k+1) / float64(len(jct))})
		}
		if err := addLine(p, i, o.name, xys); err != nil {
			return err
		}
	}
	p.Legend.Top = false
	p.Legend.Left = false
	return p.Save(plotWidth, plotHeight, path)
}

// plotUtilization writes BusyGPUs/GPUs of every round against the round's
// start in hours, one line per policy.
func plotUtilization(path string, outcomes []outcome) error {
	p := plot.New()
	p.Title.Text = "GPU utilization per round"
	p.X.Label.Text = "time (hours)"
	p.Y.Label.Text = "busy GPUs / GPUs"
	p.Y.Min, p.Y.Max = 0, 1.05
	p.Add(plotter.NewGrid())
	for i, o := range outcomes {
		xys := make(plotter.XYs, 0, len(o.result.Rounds))
		for _, r := range o.result.Rounds {
			if r.GPUs > 0 {
				xys = append(xys, plotter.XY{X: r.Start.Hours(), Y: float64(r.BusyGPUs) / float64(r.GPUs)})
			}
		}
		if err := addLine(p, i, o.name, xys); err != nil {
			return err
		}
	}
	p.Legend.Top = false
	p.Legend.Left = true
	return p.Save(plotWidth, plotHeight, path)
}

// addLine adds the i-th policy's line with its own colour and dashes and a
// legend entry; a policy without points is left out.
func addLine(p *plot.Plot, i int, name string, xys plotter.XYs) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i)
	l.Width = vg.Points(1.2)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}
