#!/usr/bin/env bash
# The main job: compares Gavel's policies with their heterogeneity-agnostic
# twin and FIFO on the built-in simulated workload, prints the table and
# writes the summaries and plots to out/. Built with CLP (-tags clp): the
# default pure-Go LP engine would limit the built-in workload to 60 jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
go build -tags clp -o bin/dlsched ./cmd/dlsched
./bin/dlsched compare --out out "$@"
