#!/usr/bin/env bash
# Installs every Debian package the project needs to build, test and benchmark;
# with --tests also the browser the web client's tests drive (chromium), the
# openssl command the OAuth test makes its certificates with, and unshare and
# mount (util-linux, mount), which put the name lookups' test in namespaces
# of its own.
# Idempotent: runs `apt-get update` and `apt-get install` only when a package
# is missing. Needs root (or sudo) only in that case.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config git ca-certificates
  libcpprest-dev libssl-dev libboost-dev
  libsqlite3-dev sqlite3
  nlohmann-json3-dev
  libcbor-dev libsecp256k1-dev
  libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-16 libclang-rt-16-dev
  libexpat1-dev libjemalloc-dev
  libicu-dev
  curl
  python3
  nginx
)

if [ "${1:-}" = "--tests" ]; then
  packages+=(chromium openssl util-linux mount)
fi

# Node.js and npm run the lexicon check, the JS benchmarks and the PDS test
# harness. A machine may already carry a Node.js build of its own that bundles
# npm (and conflicts with Debian's npm package): use it when present.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
