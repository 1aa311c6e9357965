#!/usr/bin/env bash
# The main job: ranks every registered policy on the mixed workload (jobs
# that carry every system's facts and physics at once, package workload),
# prints the table and writes results.csv, results.json and report.html to
# out/. Built with CLP (-tags clp): the default pure-Go LP engine takes up
# to about 2.5 times as long on large LPs (docs/performance.md). Extra
# arguments go to dlsched compare, e.g. --cluster v100=64/8:48c:500g or
# --workload my-trace.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
go build -tags clp -o bin/dlsched ./cmd/dlsched
./bin/dlsched compare --out out "$@"  # a progress bar on a terminal
