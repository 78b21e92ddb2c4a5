#!/usr/bin/env bash
# The server's own CPU per answer (`perf stat -e task-clock` on the serve
# process) for getChildren pages of 100 (wrk -t2 -c16) and the 2,000-node
# getSubtree (one connection), alternated between two builds, each seeded
# as bench/run_http_bench.sh seeds it. CPU per answer is steadier than the
# request rate on a host whose speed drifts.
# Usage: bench/cpu_per_answer.sh BIN_A BIN_B [ROUNDS]   (bulleted-appview binaries)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bins=("$1" "$2")
rounds="${3:-3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-cpu-XXXXXX")"
did="did:plc:httpbenchmark"
base_port=$((20000 + RANDOM % 20000))
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for i in 0 1; do
  mkdir -p "$work/$i"
  token="$("${bins[$i]}" token create --did "$did" --db "$work/$i/bench.db")"
  BULLETED_PROCEDURE_RATE=0 BULLETED_QUERY_BYTES=0 "${bins[$i]}" serve --db "$work/$i/bench.db" \
    --port $((base_port + i)) --threads 4 --log-level warn 2>"$work/$i/serve.log" &
  pids+=($!)
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$((base_port + i))/healthz" >/dev/null && break; sleep 0.1; done
  node "$root/bench/http_seed.mjs" "http://127.0.0.1:$((base_port + i))" "$token" "$did" "$work/$i" >/dev/null
done
measure() {  # measure BUILD SCRIPT CONNECTIONS THREADS
  local i=$1
  wrk -t"$4" -c"$3" -d8s --latency -s "$work/$i/$2" "http://127.0.0.1:$((base_port + i))" >"$work/wrk.out" &
  local load=$!
  sleep 1
  local ms
  ms=$(perf stat -x, -e task-clock -p "${pids[$i]}" -- sleep 6 2>&1 | awk -F, '/task-clock/ {print $1}')
  wait $load
  python3 - "$ms" "$work/wrk.out" "${bins[$i]}" "$2" "$3" <<'PY'
import re, sys
ms, out, binary, script, conns = sys.argv[1:]
text = open(out).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p50 = re.search(r"\s50%\s+(\S+)", text).group(1)
print(f"{binary} {script} c{conns}: {rps:.0f} req/s, p50 {p50}, "
      f"server CPU {float(ms) * 1000 / (6 * rps):.0f} us an answer")
PY
}
for _ in $(seq "$rounds"); do
  for i in 0 1; do
    measure $i children.lua 16 2
    measure $i subtree.lua 1 1
  done
done
