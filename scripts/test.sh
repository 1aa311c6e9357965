#!/usr/bin/env bash
# The test suite: formatting, vet, the tests with both LP engines compiled in
# (where random instances are compared across engines), the same under the
# race detector (with fewer random instances), and the pure-Go build
# (CGO_ENABLED=0) on the gonum engine alone.
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
echo "== go test ./... (CLP and pure-Go engines)"
go test ./... | tee -a "$log"
echo "== go test -race ./... (CLP and pure-Go engines)"
go test -race ./... | tee -a "$log"
echo "== CGO_ENABLED=0 go test ./... (pure-Go engine)"
CGO_ENABLED=0 go test ./... | tee -a "$log"
echo "packages: $(grep -c '^ok' "$log") passed, $(grep -c '^FAIL' "$log") failed"
