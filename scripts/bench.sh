#!/usr/bin/env bash
# The performance suite: runs the benchmarks behind docs/performance.md
# with CLP (whose build also holds the pure-Go engine), keeps their raw
# output in docs/performance.txt (go test -bench format, for benchstat) and
# rewrites docs/performance.md from it, the issue's targets first. Every
# benchmark of the module runs; DLSCHED_MAIN_JOBS= (empty) leaves out the
# main job at 2000 jobs, the longest of them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DLSCHED_MAIN_JOBS="${DLSCHED_MAIN_JOBS-2000}"
raw=docs/performance.txt
# One package at a time (-p 1): two packages' benchmarks running at once
# on two cores would slow each other.
light=$(go list ./... | grep -v -e '/cmd/dlsched$' -e '/policy/all$' -e '/internal/cmd/')
{
  go test -p 1 -tags clp -run '^$' -bench . -benchmem -benchtime 5x -timeout 60m $light
  # Seconds to minutes per operation: once each. BenchmarkMainJob at the
  # DLSCHED_MAIN_JOBS sizes, BenchmarkScale and BenchmarkLPScale.
  go test -p 1 -tags clp -run '^$' -bench . -benchmem -benchtime 1x -timeout 120m ./cmd/dlsched ./policy/all
} | tee "$raw"
go run ./internal/cmd/perfdoc < "$raw" > docs/performance.md
echo "wrote docs/performance.md and $raw"
