#!/usr/bin/env bash
# The test suite: formatting, tidy modules, vet of both builds, the tests with both LP
# engines compiled in (-tags clp, where random instances are compared across
# engines), the same under the race detector (with fewer random instances),
# and the default pure-Go build, without cgo, on the gonum engine alone. The
# HTML report is rendered in headless Chromium (DLSCHED_BROWSER_TEST=1 makes
# its absence a failure rather than a skip), and the service's Python client
# is run against it (DLSCHED_PYTHON_TEST=1 likewise). Last, the Kubernetes
# adapter's module is tested against a real API server (envtest, with the
# binaries of scripts/k8s-assets.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh browser python
export DLSCHED_BROWSER_TEST=1 DLSCHED_PYTHON_TEST=1

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go mod tidy -diff
go vet -tags clp ./...
CGO_ENABLED=0 go vet ./...

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== go test -tags clp ./... (CLP and pure-Go engines)"
go test -timeout 30m -tags clp ./... | tee -a "$log"
echo "== go test -race -tags clp ./... (CLP and pure-Go engines)"
go test -timeout 30m -race -tags clp ./... | tee -a "$log"
echo "== CGO_ENABLED=0 go test ./... (pure-Go engine)"
CGO_ENABLED=0 go test -timeout 30m ./... | tee -a "$log"
echo "== the Kubernetes adapter (its own module) against a real kube-apiserver and etcd"
# Built once (about 10 minutes) and cached outside the repository.
KUBEBUILDER_ASSETS=$(bash scripts/k8s-assets.sh)
export KUBEBUILDER_ASSETS DLSCHED_K8S_TEST=1
(
  cd adapters/kubernetes
  go mod tidy -diff
  go vet -tags clp ./...
  CGO_ENABLED=0 go build ./...
  go test -timeout 20m -tags clp ./... | tee -a "$log"
  go test -timeout 20m -race -tags clp ./... | tee -a "$log"
)
echo "packages: $(grep -c '^ok' "$log") passed, $(grep -c '^FAIL' "$log") failed"
