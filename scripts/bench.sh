#!/usr/bin/env bash
# The performance suite: runs the benchmarks behind docs/performance.md
# with CLP (whose build also holds the pure-Go engine), keeps their raw
# output in docs/performance.txt (go test -bench format, for benchstat) and
# rewrites docs/performance.md from it, the issue's targets first. Every
# benchmark of the module runs; DLSCHED_MAIN_JOBS= (empty) leaves out the
# main job at 2000 jobs, the longest of them.
#
# The simulation's target is a speed-up over the code the performance issue
# was filed at (commit 3cd94f5, whose BenchmarkSimulation it quotes), so
# that code's BenchmarkSimulation runs first, in the same run, from a
# temporary worktree (it needs the repository's history and, through the
# CLP binding it used then, a C++ compiler).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh c++
export DLSCHED_MAIN_JOBS="${DLSCHED_MAIN_JOBS-2000}"
raw=docs/performance.txt
# One package at a time (-p 1): two packages' benchmarks running at once
# on two cores would slow each other.
light=$(go list ./... | grep -v -e '/cmd/dlsched$' -e '/policy/all$' -e '/internal/cmd/' -e '/sim$')
base=3cd94f5
basedir=$(mktemp -d)
trap 'git worktree remove --force "$basedir" 2>/dev/null || rm -rf "$basedir"' EXIT
{
  go test -p 1 -tags clp -run '^$' -bench . -benchmem -benchtime 5x -timeout 60m $light
  # Five iterations of a few milliseconds fall within one garbage
  # collection's noise: the LP solves' targets run again, for 100, and
  # perfdoc keeps the later run.
  go test -tags clp -run '^$' -bench '^(BenchmarkLAS|BenchmarkWarm)$' -benchmem -benchtime 100x ./policy/gavel
  # The simulation right after the issue's code, on the same machine state.
  if git worktree add -q --detach "$basedir" "$base" 2>/dev/null; then
    (cd "$basedir" && go test -tags clp -run '^$' -bench '^BenchmarkSimulation$' -benchmem -benchtime 5x ./sim)
  else
    echo "bench: commit $base is not in this clone's history; the simulation's target is not measured" >&2
  fi
  go test -tags clp -run '^$' -bench . -benchmem -benchtime 5x ./sim
  # Seconds to minutes per operation: once each. BenchmarkMainJob at the
  # DLSCHED_MAIN_JOBS sizes, BenchmarkScale and BenchmarkLPScale.
  go test -p 1 -tags clp -run '^$' -bench . -benchmem -benchtime 1x -timeout 120m ./cmd/dlsched ./policy/all
} | tee "$raw"
go run ./internal/cmd/perfdoc < "$raw" > docs/performance.md
echo "wrote docs/performance.md and $raw"
