#!/usr/bin/env bash
# The main job: decides the built-in example workload with every registered
# policy and prints each decision.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
go build -o bin/dlsched ./cmd/dlsched
./bin/dlsched policies
for p in $(./bin/dlsched policies | awk '{print $1}'); do
  echo
  echo "== $p"
  ./bin/dlsched allocate --example --policy "$p"
done
