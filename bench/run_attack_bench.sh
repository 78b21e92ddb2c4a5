#!/usr/bin/env bash
# Other users' latency beside each attack (docs/BENCHMARKS.md, "Beside each
# attack"): builds the Release tree and runs bench/js/attack_bench.mjs on a
# fresh database: getNode and a rare word's search alone, then beside each
# attack shape, in one run.
# Usage: [SECONDS_=S] [ONLY=REGEX] bench/run_attack_bench.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh --target bulleted-appview >/dev/null
./tests/e2e/pds/install.sh >/dev/null  # node
ulimit -n "$(ulimit -Hn)"
workdir="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-attack-bench-XXXXXX")"
trap 'rm -rf "$workdir"' EXIT
./tests/e2e/pds/node22 bench/js/attack_bench.mjs --binary build/bulleted-appview --workdir "$workdir" \
  --seconds "${SECONDS_:-8}" --only "${ONLY:-.}"
