#!/usr/bin/env bash
# Generates a stream of realistic #commit frames, then measures in one run:
# the C++ decoder (frames + CARs + records), the C++ decoder with apply to
# SQLite, and the JavaScript reference decoder on the same frames.
# Usage: [ROUNDS=N] bench/run_firehose_bench.sh [COMMITS]   (default 5000; N
# alternating rounds of the two decoders, default 3)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
./tests/e2e/pds/install.sh >/dev/null
frames="$(mktemp "${TMPDIR:-/tmp}/bulleted-frames-XXXXXX")"
trap 'rm -f "$frames"' EXIT
"${BUILD_DIR:-build}/bench/make_frames" "$frames" "${1:-5000}"
# The decoders run alternately ROUNDS times (default 3; the host's load moves
# either side by 20-50% within a minute) and the ratio is the median of the
# per-round ratios; decode + apply runs once, after them.
rounds="${ROUNDS:-3}"
cpp_rounds=()
js_rounds=()
for round in $(seq "$rounds"); do
  cpp_rounds+=("$("${BUILD_DIR:-build}/bench/firehose_bench" "$frames" --decode-only)")
  js_rounds+=("$(tests/e2e/pds/node22 bench/js/decode_frames.mjs "$root/tests/e2e/pds" "$frames")")
done
apply=$("${BUILD_DIR:-build}/bench/firehose_bench" "$frames" | tail -n 1)
printf '%s\n' "${cpp_rounds[@]}" "${js_rounds[@]}" "$apply"
python3 - "$apply" "${cpp_rounds[@]}" "${js_rounds[@]}" <<'PY'
import json, statistics, sys
apply = json.loads(sys.argv[1])
rest = [json.loads(a) for a in sys.argv[2:]]
cpp, js = rest[:len(rest) // 2], rest[len(rest) // 2:]
ratios = [c["framesPerSecond"] / j["framesPerSecond"] for c, j in zip(cpp, js)]
median = lambda key, rows: statistics.median(r[key] for r in rows)
print(f"decode ({len(ratios)} alternating rounds, medians): C++ {median('framesPerSecond', cpp):,.0f} frames/s, "
      f"{median('opsPerSecond', cpp):,.0f} ops/s; JS {median('framesPerSecond', js):,.0f} frames/s, "
      f"{median('opsPerSecond', js):,.0f} ops/s; C++/JS {statistics.median(ratios):.1f}x "
      f"(rounds: {' '.join(f'{r:.1f}' for r in ratios)})")
print(f"decode + apply:  C++ {apply['framesPerSecond']:,.0f} frames/s, {apply['opsPerSecond']:,.0f} node ops/s applied to SQLite")
PY
