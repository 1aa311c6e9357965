// Command resources shows how Synergy's allocators divide one server's CPU
// cores and memory among four ResNet-18 jobs, which train up to 2.4× faster
// with more cores, and four GNMT jobs, which need one core each: what each
// job gets and the server's total throughput, relative to every job at its
// GPU-proportional share.
package main

import (
	"context"
	"fmt"
	"github.com/dlsched/dlsched/workload"
	"io"
	"os"
	"strings"
	"time"

	"github.com/dlsched/dlsched/allocation"
	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/synergy"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "resources:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	models := workload.SynergyModels()
	s := &policy.Snapshot{
		Now: time.Minute,
		Cluster: allocation.Cluster{Servers: []allocation.Server{
			{ID: "server", Accelerator: "v100", GPUs: 8, CPUs: 24, MemoryGB: 500},
		}},
	}
	// Four ResNet-18 jobs arrive first, then four GNMT jobs.
	for i, name := range []string{"res18", "res18", "res18", "res18", "gnmt", "gnmt", "gnmt", "gnmt"} {
		m := models[name]
		s.Jobs = append(s.Jobs, policy.Job{
			ID:          fmt.Sprintf("%d-%s", i+1, name),
			GPUs:        1,
			Arrival:     time.Duration(i) * time.Second,
			Throughput:  map[allocation.Accelerator]float64{"v100": 1 / m.IterSeconds},
			StepsTotal:  1e6,
			Sensitivity: &m.Sensitivity,
		})
	}
	fmt.Fprintf(w, "one server: 8 GPUs, 24 cores, 500 GB; proportional share 3 cores and 62.5 GB per GPU\n\n")
	names := []string{"synergy.proportional", "synergy.greedy", "synergy.tune", "synergy.opt"}
	row := []string{"job"}
	for _, n := range names {
		row = append(row, strings.TrimPrefix(n, "synergy."))
	}
	line(w, row)
	decisions := make([]*policy.Decision, len(names))
	for i, n := range names {
		p, err := policy.New(n, nil)
		if err != nil {
			return err
		}
		if decisions[i], err = p.Allocate(context.Background(), s); err != nil {
			return err
		}
	}
	totals := make([]float64, len(names))
	for _, j := range s.Jobs {
		row := []string{j.ID}
		for i, d := range decisions {
			g, ok := d.Allocation[j.ID]
			if !ok {
				row = append(row, "waits")
				continue
			}
			n := float64(g.GPUs)
			x := j.Sensitivity.At(g.CPUs/n, g.MemoryGB/n)
			totals[i] += x
			row = append(row, fmt.Sprintf("%4.1f cores %5.1f GB %.2f×", g.CPUs, g.MemoryGB, x))
		}
		line(w, row)
	}
	row = []string{"server throughput"}
	for _, t := range totals {
		row = append(row, fmt.Sprintf("%.2f", t))
	}
	line(w, row)
	return nil
}

// line writes a table row: the first cell in 18 columns, the others in 24.
func line(w io.Writer, cells []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s", cells[0])
	for _, c := range cells[1:] {
		fmt.Fprintf(&b, "  %-24s", c)
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
}
