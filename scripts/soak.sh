#!/usr/bin/env bash
# Mixed-load soak (reads, writes, firehose ingest at once) against a Release
# build: prints throughput, p50/p99 latency per request kind, ingest progress
# and the server's memory over time (JSON). Exit 1 on any 5xx or 429, or
# when no ingested op was applied.
# Usage: scripts/soak.sh [SECONDS]   (default 600)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
./tests/e2e/pds/install.sh >/dev/null
workdir="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-soak-XXXXXX")"
trap 'rm -rf "$workdir"' EXIT
binary="$root/${BUILD_DIR:-build}/bulleted-appview"
(cd tests/e2e/pds && ./node22 ../soak.mjs "$binary" "$workdir" "${1:-600}")
