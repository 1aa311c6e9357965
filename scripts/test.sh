#!/usr/bin/env bash
# The test suite: formatting, vet, the race-checked tests on the CLP engine,
# and the tests of the pure-Go build (CGO_ENABLED=0) on the gonum engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
CGO_ENABLED=0 go vet ./...
go vet -tags noclp ./...

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== go test -race ./... (CLP engine)"
go test -race ./... | tee -a "$log"
echo "== CGO_ENABLED=0 go test ./... (pure-Go engine)"
CGO_ENABLED=0 go test ./... | tee -a "$log"
echo "packages: $(grep -c '^ok' "$log") passed, $(grep -c '^FAIL' "$log") failed"
