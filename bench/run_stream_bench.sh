#!/usr/bin/env bash
# Change streams under load (docs/BENCHMARKS.md, "Live changes"): builds the
# Release tree and runs bench/js/stream_load.mjs with N streams (and then N
# pollers) against a fresh database, printing its JSON.
# Usage: [STREAMS=N] [SECONDS_=S] [RATE=R] [STALL=K] [POLL=0|1] [SPREAD=repos|kinds] bench/run_stream_bench.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh --target bulleted-appview >/dev/null
./tests/e2e/pds/install.sh >/dev/null  # node
# N streams are N descriptors on each side.
ulimit -n "$(ulimit -Hn)"
workdir="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-stream-bench-XXXXXX")"
trap 'rm -rf "$workdir"' EXIT
./tests/e2e/pds/node22 bench/js/stream_load.mjs --binary build/bulleted-appview --workdir "$workdir" \
  --streams "${STREAMS:-1000}" --seconds "${SECONDS_:-30}" --rate "${RATE:-200}" --stall "${STALL:-0}" \
  --poll "${POLL:-1}" --spread "${SPREAD:-repos}"
