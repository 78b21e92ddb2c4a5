#!/usr/bin/env bash
# HTTP benchmark with wrk, in one run: getChildren pages of 100 from a
# 3,000-child group, getNode, getPosition, getSubtree of 2,000 nodes,
# getOutline (depth 5, limit 100), createNode at random positions, and the
# ceilings of a trivial handler on
# the same HTTP front answering a fixed 2 KB body, a fixed body of a page's
# size (17 KB) and one of a 2,000-node subtree's (746 KB, one connection),
# each beside the same trivial handler on a Boost.Beast front.
# Usage: bench/run_http_bench.sh [SECONDS] [CONNECTIONS]   (default 10 s, 16)
# After the createNode row it prints the share of those requests the server
# itself answered within 2.5, 5, 10, 25 and 100 ms, and the share that waited
# for a worker no longer than those (its /metrics histograms), and the largest
# the WAL file grew to meanwhile.
# ONLY=<regex> runs only the rows whose name matches (e.g. ONLY='746|getSubtree').
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-10}"
connections="${2:-16}"
./scripts/build.sh >/dev/null
if ! command -v wrk >/dev/null; then
  sudo_cmd=(); [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq && "${sudo_cmd[@]}" apt-get install -y -qq wrk >/dev/null
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-http-bench-XXXXXX")"
bin="${BUILD_DIR:-build}/bulleted-appview"
port=$((20000 + RANDOM % 20000))
ceiling_port=$((port + 1))
page_ceiling_port=$((port + 2))
beast_port=$((port + 3))
beast_page_port=$((port + 4))
tree_ceiling_port=$((port + 5))
beast_tree_port=$((port + 6))
did="did:plc:httpbenchmark"
token="$("$bin" token create --did "$did" --db "$work/bench.db")"
# Per-client limits off: one client is the whole load here.
BULLETED_PROCEDURE_RATE=0 BULLETED_QUERY_BYTES=0 "$bin" serve --db "$work/bench.db" --port "$port" --threads 4 --log-level warn 2>"$work/serve.log" &
serve_pid=$!
"${BUILD_DIR:-build}/bench/http_ceiling" "$ceiling_port" 2000 &
ceiling_pid=$!
"${BUILD_DIR:-build}/bench/http_ceiling" "$page_ceiling_port" 17000 &
page_ceiling_pid=$!
# Another front's ceiling (Boost.Beast, two threads like cpprest's pool of 2).
"${BUILD_DIR:-build}/bench/beast_ceiling" "$beast_port" 2000 2 &
beast_pid=$!
"${BUILD_DIR:-build}/bench/beast_ceiling" "$beast_page_port" 17000 2 &
beast_page_pid=$!
# Both fronts with a body of a 2,000-node subtree's size (746 KB), no work.
"${BUILD_DIR:-build}/bench/http_ceiling" "$tree_ceiling_port" 746000 &
tree_ceiling_pid=$!
"${BUILD_DIR:-build}/bench/beast_ceiling" "$beast_tree_port" 746000 2 &
beast_tree_pid=$!
trap 'kill $serve_pid $ceiling_pid $page_ceiling_pid $beast_pid $beast_page_pid $tree_ceiling_pid $beast_tree_pid $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
node bench/http_seed.mjs "http://127.0.0.1:$port" "$token" "$did" "$work" >/dev/null

run() {  # run NAME URL [SCRIPT]   (CONNECTIONS=1 RUN_THREADS=1 for one client's latency)
  local out
  if [ -n "${ONLY:-}" ] && ! [[ "$1" =~ $ONLY ]]; then return 0; fi
  out=$(wrk -t"${RUN_THREADS:-2}" -c"${CONNECTIONS:-$connections}" -d"${seconds}s" --latency ${3:+-s "$3"} "$2")
  local rps p50 p99 errors
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
  p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
  errors=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  printf "%-32s %12s req/s   p50 %8s   p99 %8s   non-2xx %s\n" "$1" "$rps" "$p50" "$p99" "${errors:-0}"
}
echo "wrk -t2 -c$connections -d${seconds}s, server with 4 workers; $(nproc) cores shared by client and server"
run "trivial handler, 2 KB (ceiling)" "http://127.0.0.1:$ceiling_port/"
run "trivial handler, 17 KB (ceiling)" "http://127.0.0.1:$page_ceiling_port/"
run "Boost.Beast trivial, 2 KB" "http://127.0.0.1:$beast_port/"
run "Boost.Beast trivial, 17 KB" "http://127.0.0.1:$beast_page_port/"
run "getChildren, pages of 100" "http://127.0.0.1:$port" "$work/children.lua"
run "getNode" "http://127.0.0.1:$port" "$work/node.lua"
run "getPosition" "http://127.0.0.1:$port" "$work/position.lua"
run "getSubtree, 2,000 nodes" "http://127.0.0.1:$port" "$work/subtree.lua"
CONNECTIONS=1 RUN_THREADS=1 run "getSubtree, 2,000 nodes, 1 conn" "http://127.0.0.1:$port" "$work/subtree.lua"
CONNECTIONS=1 RUN_THREADS=1 run "trivial, 746 KB, 1 conn" "http://127.0.0.1:$tree_ceiling_port/"
CONNECTIONS=1 RUN_THREADS=1 run "Boost.Beast trivial, 746 KB, 1 conn" "http://127.0.0.1:$beast_tree_port/"
# Search: a rare word (a number, found in a bullet or two), against a
# trivial handler answering a body of the same size, started now that the
# size is known; then getNode while eight broad searches (every bullet, in
# outline order: each page spends its whole budget) ask from other
# connections at once.
search_q() { echo "/xrpc/app.bulleted.searchNodes?repo=$did&q=$1"; }
search_bytes=$(curl -sf "http://127.0.0.1:$port$(search_q 1234)" | wc -c)
search_ceiling_port=$((port + 7))
"${BUILD_DIR:-build}/bench/http_ceiling" "$search_ceiling_port" "$search_bytes" &
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$search_ceiling_port/" >/dev/null && break; sleep 0.1; done
printf 'request = function()\n  return wrk.format("GET", "%s" .. math.random(1000, 2999))\nend\n' \
  "$(search_q '')" > "$work/search.lua"
printf 'request = function()\n  return wrk.format("GET", "%s&sort=outline")\nend\n' \
  "$(search_q bullet)" > "$work/broad.lua"
# Two connections: searches run one at a time on 4 workers (a quarter),
# with one waiting; more connections would measure 429s.
CONNECTIONS=2 RUN_THREADS=1 run "trivial, a search answer's size ($search_bytes B), 2 conns" "http://127.0.0.1:$search_ceiling_port/"
CONNECTIONS=2 RUN_THREADS=1 run "searchNodes, a rare word, 2 conns" "http://127.0.0.1:$port" "$work/search.lua"
# Bulleted's published getOutline, depth 5 and limit 100 (the seed's top
# level and what is under it, in pre-order), against a trivial handler
# answering a body of the same size.
outline_q="/xrpc/app.bulleted.getOutline?did=$did&depth=5&limit=100"
outline_bytes=$(curl -sf "http://127.0.0.1:$port$outline_q" | wc -c)
outline_ceiling_port=$((port + 8))
"${BUILD_DIR:-build}/bench/http_ceiling" "$outline_ceiling_port" "$outline_bytes" &
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$outline_ceiling_port/" >/dev/null && break; sleep 0.1; done
run "trivial, a getOutline answer's size ($outline_bytes B)" "http://127.0.0.1:$outline_ceiling_port/"
run "getOutline, depth 5, limit 100" "http://127.0.0.1:$port$outline_q"
# getNode while eight searchers (SCRIPT, wrk's own options after it) ask
# from other connections.
while_searching() {  # while_searching NAME SCRIPT WRK_OPTION...
  local name=$1 script=$2 searchers
  shift 2
  if [ -n "${ONLY:-}" ] && ! [[ "$name" =~ $ONLY ]]; then return 0; fi
  wrk "$@" -d"$((seconds + 2))s" -s "$script" "http://127.0.0.1:$port" > "$work/searchers.out" &
  searchers=$!
  sleep 1
  run "$name" "http://127.0.0.1:$port" "$work/node.lua"
  wait "$searchers" || true
  printf "  %-30s %s req/s, %s non-2xx (429: no place)\n" "the 8 broad searches" \
    "$(awk '/Requests\/sec/ {print $2}' "$work/searchers.out")" \
    "$(awk '/Non-2xx/ {print $NF}' "$work/searchers.out")"
}
while_searching "getNode while 8 searches run" "$work/broad.lua" -t1 -c8
# The same eight searchers as clients that wait the Retry-After of a 429
# before asking again (one connection a wrk thread: its own wait): the
# searches' lane stays busy (one running, four waiting), without the flood
# of 429s above.
printf 'local wait_ms = 0\nrequest = function()\n  return wrk.format("GET", "%s&sort=outline")\nend\n' \
  "$(search_q bullet)" > "$work/polite.lua"
cat >> "$work/polite.lua" <<'LUA'
response = function(status, headers, body)
  wait_ms = 0
  if status == 429 then wait_ms = 1000 * (tonumber(headers["Retry-After"]) or 1) end
end
delay = function() return wait_ms end
LUA
while_searching "getNode while 8 searches run, 429s waited out" "$work/polite.lua" -t8 -c8
# The server's own time for the same createNode requests: its latency
# histogram (from the handler's start to its answer) and the time they waited
# for a worker (the requests lane's queue; nothing else runs meanwhile). What
# wrk's figures add beyond both is time in the front and in the client.
metrics() { curl -sf "http://127.0.0.1:$port/metrics" | grep -E 'request_seconds_bucket\{method="app.bulleted.createNode"|queue_seconds_bucket\{lane="requests"' || true; }
if [ -n "${ONLY:-}" ] && ! [[ "createNode, random positions" =~ $ONLY ]]; then exit 0; fi
metrics > "$work/create.before"
# The WAL's size meanwhile, every 50 ms: it should be started over, not grow.
(while :; do stat -c %s "$work/bench.db-wal" 2>/dev/null || true; sleep 0.05; done) > "$work/wal.sizes" &
wal_watch=$!
run "createNode, random positions" "http://127.0.0.1:$port" "$work/create.lua"
kill "$wal_watch" 2>/dev/null || true
metrics > "$work/create.after"
python3 - "$work/create.before" "$work/create.after" <<'PY'
import re, sys
def buckets(path, family):
    out = {}
    for line in open(path):
        m = re.search(family + r'_bucket\{.*le="([^"]+)"\} (\d+)', line)
        if m: out[m.group(1)] = int(m.group(2))
    return out
for family, name, what in (("request_seconds", "  in the server (handler)", "answers"),
                           ("queue_seconds", "  queued for a worker", "requests")):
    before, after = buckets(sys.argv[1], family), buckets(sys.argv[2], family)
    total = after.get("+Inf", 0) - before.get("+Inf", 0)
    if total <= 0: continue
    shares = []
    for le in ("0.0025", "0.005", "0.01", "0.025", "0.1"):
        if le in after:
            shares.append(f"{(after[le] - before.get(le, 0)) / total:.2%} within {float(le) * 1000:g} ms")
    print(f"{name:32s} {total} {what}: " + ", ".join(shares))
PY
if [ -s "$work/wal.sizes" ] && { [ -z "${ONLY:-}" ] || [[ "createNode, random positions" =~ $ONLY ]]; }; then
  printf "  %-30s %s MB at most\n" "the WAL meanwhile" "$(sort -n "$work/wal.sizes" | tail -1 | awk '{printf "%.1f", $1 / 1e6}')"
fi
