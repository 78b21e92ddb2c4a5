#!/usr/bin/env bash
# Generates a stream of realistic #commit frames, then measures in one run:
# the C++ decoder (frames + CARs + records), the C++ decoder with apply to
# SQLite, and the JavaScript reference decoder on the same frames.
# Usage: bench/run_firehose_bench.sh [COMMITS]   (default 5000)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
./tests/e2e/pds/install.sh >/dev/null
frames="$(mktemp "${TMPDIR:-/tmp}/bulleted-frames-XXXXXX")"
trap 'rm -f "$frames"' EXIT
"${BUILD_DIR:-build}/bench/make_frames" "$frames" "${1:-5000}"
cpp=$("${BUILD_DIR:-build}/bench/firehose_bench" "$frames")
js=$(tests/e2e/pds/node22 bench/js/decode_frames.mjs "$root/tests/e2e/pds" "$frames")
echo "$cpp"
echo "$js"
python3 - "$cpp" "$js" <<'PY'
import json, sys
cpp = [json.loads(l) for l in sys.argv[1].splitlines()]
js = json.loads(sys.argv[2])
decode = next(r for r in cpp if r["benchmark"] == "decode")
apply = next(r for r in cpp if r["benchmark"] == "decodeAndApply")
print(f"decode:          C++ {decode['framesPerSecond']:,.0f} frames/s, {decode['opsPerSecond']:,.0f} ops/s; "
      f"JS {js['framesPerSecond']:,.0f} frames/s, {js['opsPerSecond']:,.0f} ops/s; C++/JS {decode['framesPerSecond']/js['framesPerSecond']:.1f}x")
print(f"decode + apply:  C++ {apply['framesPerSecond']:,.0f} frames/s, {apply['opsPerSecond']:,.0f} node ops/s applied to SQLite")
PY
