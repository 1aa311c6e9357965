package main

import "math"

// table is a comparison's results, one row per policy in rank order, as the
// terminal, CSV, JSON and HTML report show them.
type table struct {
	Title string `json:"title"`
	// Setup is the one-line description of workload, cluster and engine.
	Setup string `json:"setup"`
	// Seeds is the number of workload seeds each value is the mean over.
	Seeds   int      `json:"seeds"`
	Columns []column `json:"columns"`
	Rows    []row    `json:"rows"`
	// CDF holds, per policy, the completion times in hours of the finished
	// jobs of the first seed, for the CDF plot.
	CDF map[string][]float64 `json:"-"`
	// Sweep is the average JCT against load, when compare sweeps rates.
	Sweep []sweep `json:"sweep,omitempty"`
}

// column is one metric.
type column struct {
	Key  string `json:"key"`  // CSV and JSON name, such as avg_jct_h
	Name string `json:"name"` // heading, such as "avg JCT"
	Unit string `json:"unit"` // such as "h", "%" or "" for a count
	// Lower reports whether a lower value is better.
	Lower bool `json:"lower_is_better"`
}

// row is one policy's results: either values, one per column, or an error.
type row struct {
	Policy string `json:"policy"`
	Error  string `json:"error,omitempty"`
	// Notes say what the policy ignores of the workload or lacks.
	Notes  []string `json:"notes,omitempty"`
	Values []stat   `json:"values,omitempty"`
}

// sweep is one policy's average JCT at one arrival rate.
type sweep struct {
	Policy string  `json:"policy"`
	Rate   float64 `json:"rate"` // jobs per hour
	AvgJCT stat    `json:"avg_jct_h"`
	Error  string  `json:"error,omitempty"`
}

// stat is a metric's mean over N seeds and the half-width of its 95 %
// confidence interval (Student's t; zero for one seed).
type stat struct {
	Mean float64 `json:"mean"`
	CI   float64 `json:"ci95"`
	N    int     `json:"n"`
}

// meanCI returns the mean of xs and the half-width of its 95 % confidence
// interval, t_{0.975, n−1} · s / √n with s the sample standard deviation.
func meanCI(xs []float64) stat {
	n := len(xs)
	if n == 0 {
		return stat{}
	}
	var Σ float64
	for _, x := range xs {
		Σ += x
	}
	mean := Σ / float64(n)
	if n == 1 {
		return stat{Mean: mean, N: 1}
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return stat{Mean: mean, CI: tQuantile975(n-1) * sd / math.Sqrt(float64(n)), N: n}
}

// tQuantile975 is Student's t distribution's 0.975 quantile with df
// degrees of freedom: exact to three decimals up to 30, then the normal
// approximation with Cornish–Fisher's first correction.
func tQuantile975(df int) float64 {
	table := [...]float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df < len(table) {
		return table[df]
	}
	const z = 1.959964
	return z + (z*z*z+z)/(4*float64(df))
}
