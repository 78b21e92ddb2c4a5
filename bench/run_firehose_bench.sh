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
# The decoders and decode + apply run in turn ROUNDS times (default 3; the
# host's load moves either side by 20-50% within a minute): the decoder ratio
# is the median of the per-round ratios, and apply is reported as the median
# and the slowest of its rounds.
rounds="${ROUNDS:-3}"
cpp_rounds=()
js_rounds=()
apply_rounds=()
for round in $(seq "$rounds"); do
  cpp_rounds+=("$("${BUILD_DIR:-build}/bench/firehose_bench" "$frames" --decode-only)")
  js_rounds+=("$(tests/e2e/pds/node22 bench/js/decode_frames.mjs "$root/tests/e2e/pds" "$frames")")
  apply_rounds+=("$("${BUILD_DIR:-build}/bench/firehose_bench" "$frames" | tail -n 1)")
done
printf '%s\n' "${cpp_rounds[@]}" "${js_rounds[@]}" "${apply_rounds[@]}"
python3 - "$rounds" "${cpp_rounds[@]}" "${js_rounds[@]}" "${apply_rounds[@]}" <<'PY'
import json, statistics, sys
n = int(sys.argv[1])
rest = [json.loads(a) for a in sys.argv[2:]]
cpp, js, apply = rest[:n], rest[n:2 * n], rest[2 * n:]
ratios = [c["framesPerSecond"] / j["framesPerSecond"] for c, j in zip(cpp, js)]
median = lambda key, rows: statistics.median(r[key] for r in rows)
print(f"decode ({len(ratios)} alternating rounds, medians): C++ {median('framesPerSecond', cpp):,.0f} frames/s, "
      f"{median('opsPerSecond', cpp):,.0f} ops/s; JS {median('framesPerSecond', js):,.0f} frames/s, "
      f"{median('opsPerSecond', js):,.0f} ops/s; C++/JS {statistics.median(ratios):.1f}x "
      f"(rounds: {' '.join(f'{r:.1f}' for r in ratios)})")
print(f"decode + apply ({n} rounds): C++ {median('framesPerSecond', apply):,.0f} frames/s, "
      f"{median('opsPerSecond', apply):,.0f} node ops/s applied to SQLite in the median, "
      f"{min(a['opsPerSecond'] for a in apply):,.0f} in the slowest round")
PY
