#!/usr/bin/env bash
# Provide etcd + kube-apiserver for envtest without internet access:
#   export KUBEBUILDER_ASSETS=$(bash scripts/k8s-assets.sh)
# Only the asset directory goes to stdout; progress goes to stderr.
# etcd comes from Debian's etcd-server package; kube-apiserver is built from
# the k8s.io/kubernetes Go module (no release binaries are reachable here).
# The first run takes ~15 minutes on 2 cores with cold Go caches (seconds with a
# warm build cache); later runs are instant.
set -euo pipefail

K8S_VERSION=v1.37.2
STAGING_VERSION=v0.37.2 # staging modules are tagged v0.X.Y for Kubernetes v1.X.Y
dir=${DLSCHED_K8S_ASSETS:-${XDG_CACHE_HOME:-${HOME:-/var/cache}/.cache}/dlsched/k8s-assets/$K8S_VERSION}

log() { echo "k8s-assets: $*" >&2; }
die() { log "error: $*"; exit 1; }
ok() { [[ -x $dir/$1 ]] && "$dir/$1" --version >/dev/null 2>&1; }

mkdir -p "$dir"
# Serialise concurrent callers (e.g. parallel test jobs); later ones find the cache filled.
exec 9>"$dir/.lock"
flock 9
if ok etcd && ok kube-apiserver; then
	echo "$dir"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! ok etcd; then
	log "fetching etcd from Debian's etcd-server package"
	# bookworm ships etcd 3.4.23: kube-apiserver 1.37 runs on it, only logging that
	# RequestWatchProgress is unsupported (so lists are not served from its cache).
	# Sandbox user root: _apt cannot write to the private temp dir and apt would warn.
	dl() { (cd "$work" && apt-get -o APT::Sandbox::User=root download etcd-server >&2); }
	# Only refresh apt lists when needed: apt-get update is slow and often already done.
	dl || { apt-get update >&2 && dl; } || die "apt-get download etcd-server failed"
	dpkg-deb -x "$work"/etcd-server_*.deb "$work/etcd-deb"
	cp "$work/etcd-deb/usr/bin/etcd" "$dir/etcd.tmp"
	mv -f "$dir/etcd.tmp" "$dir/etcd" # rename is atomic: no half-written binary
	ok etcd || die "$dir/etcd does not run"
fi

if ! ok kube-apiserver; then
	command -v go >/dev/null || die "go is required to build kube-apiserver"
	log "building kube-apiserver $K8S_VERSION (takes several minutes)"
	mod=$work/build
	mkdir -p "$mod"
	cd "$mod"
	# GOFLAGS=-mod=mod lets go add go.sum entries itself; GOWORK=off keeps any
	# caller's workspace out. CGO off gives a static binary and needs no gcc.
	export GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0
	go mod init k8s-assets-build >&2
	go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
	# k8s.io/kubernetes requires its staging repos (k8s.io/api, apiserver, ...) at
	# v0.0.0 and only resolves them via replaces to ./staging, which is not in the
	# module zip, so pin each to its published tag. All 31 v0.0.0 requires of
	# v1.37.2 (api ... streaming) are served at v0.37.2; sample-cli-plugin and
	# sample-controller are not, but they are only replaced, never required.
	gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p') && [[ -f $gomod ]] ||
		die "cannot download k8s.io/kubernetes@$K8S_VERSION"
	staging=$(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print $1 }' "$gomod")
	[[ -n $staging ]] || die "no v0.0.0 staging requires found in $gomod"
	for m in $staging; do
		go mod edit -replace="$m=$m@$STAGING_VERSION"
	done
	# Stamp the version like the release build does, so --version reports it.
	v=k8s.io/component-base/version minor=${K8S_VERSION#v1.}
	ldflags="-s -w -X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=${minor%%.*}"
	go build -trimpath -ldflags "$ldflags" -o "$dir/kube-apiserver.tmp" \
		k8s.io/kubernetes/cmd/kube-apiserver || die "building kube-apiserver failed"
	mv -f "$dir/kube-apiserver.tmp" "$dir/kube-apiserver"
	ok kube-apiserver || die "$dir/kube-apiserver does not run"
fi

log "assets ready"
echo "$dir"
