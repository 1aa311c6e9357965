#!/usr/bin/env bash
# The main job: compares Gavel's policies with their heterogeneity-agnostic
# twin and FIFO on the built-in simulated workload, prints the table and
# writes plots to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
go build -o bin/dlsched ./cmd/dlsched
./bin/dlsched compare --out out "$@"
