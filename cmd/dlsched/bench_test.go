package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dlsched/dlsched/allocation"
)

// BenchmarkMainJob times the README's main job, dlsched compare of every
// policy on the mixed workload, at its 160 jobs and at the sizes
// DLSCHED_MAIN_JOBS lists (comma-separated; scripts/bench.sh asks for
// 2000).
func BenchmarkMainJob(b *testing.B) {
	if !slices.Contains(allocation.Solvers(), allocation.CLP) {
		b.Skip("the main job is built with CLP (-tags clp)")
	}
	sizes := []int{160}
	for _, f := range strings.Split(os.Getenv("DLSCHED_MAIN_JOBS"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 && !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			for b.Loop() {
				args := []string{"--jobs", strconv.Itoa(n), "--out", b.TempDir()}
				if err := compare(b.Context(), args, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
