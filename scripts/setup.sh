#!/usr/bin/env bash
# Installs what dlsched's CLP build (go build -tags clp, with cgo) needs: the
# COIN-OR CLP library and pkg-config (Debian/Ubuntu). Does nothing when they
# are already present. The default build, without the tag, needs neither.
set -euo pipefail

if pkg-config --exists clp 2>/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "setup: CLP is missing and apt-get is not available; install coinor-libclp-dev by hand," >&2
  echo "setup: or build without -tags clp (the pure-Go LP engine, for small problems only)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "setup: installing coinor-libclp-dev and pkg-config" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq coinor-libclp-dev pkg-config >/dev/null
