#!/usr/bin/env bash
# Installs what dlsched's CLP build (go build -tags clp, with cgo) needs: the
# COIN-OR CLP library and pkg-config (Debian/Ubuntu). With the argument
# "browser" it also installs Chromium, which the HTML report's test renders
# the report in, and with "python" Python 3, which runs the decision
# service's example client in its test, and with "c++" a C++ compiler, which
# the code the performance issue was filed at needs (scripts/bench.sh builds
# it to compare with). Does nothing for what is already present. The default build, without the tag, needs none of it.
set -euo pipefail

need=()
if ! pkg-config --exists clp 2>/dev/null; then
  need+=(coinor-libclp-dev pkg-config)
fi
for arg in "$@"; do
  case "$arg" in
    browser) command -v chromium >/dev/null || need+=(chromium) ;;
    python) command -v python3 >/dev/null || need+=(python3) ;;
    c++) command -v g++ >/dev/null || need+=(g++) ;;
    *) echo "setup: unknown argument $arg (want browser, python or c++)" >&2; exit 2 ;;
  esac
done
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "setup: ${need[*]} missing and apt-get is not available; install them by hand," >&2
  echo "setup: or build without -tags clp (the pure-Go LP engine, for small problems only)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "setup: installing ${need[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
