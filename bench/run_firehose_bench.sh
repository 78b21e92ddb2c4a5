#!/usr/bin/env bash
# Verified ingest against the JavaScript consumer, in one run:
#  1. a stream of signed #commit frames of app.bulleted.node repos
#     (bench/make_frames, COMMITS frames): the C++ path (decode + verify, then
#     decode + verify + apply to SQLite) against @atproto/sync's Firehose with
#     its proofs verified (bench/js/verify_frames.mjs);
#  2. a network-shaped stream (make_frames --network, 100,000 frames, 95% from
#     repos of other apps): both sides again, the C++ one pinned to one core;
#  3. backfill: getRepo CARs of 10 to 100,000 records (bench/make_repos): the
#     C++ verify (and verify + apply) against @atproto/repo's verifyRepoCar.
# @atproto/sync and @atproto/repo are installed into .scratch/bench-sync.
# Usage: [ROUNDS=N] bench/run_firehose_bench.sh [COMMITS]   (default 5000;
# N alternating rounds of both sides, default 3)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
./tests/e2e/pds/install.sh >/dev/null
sync_dir="$root/.scratch/bench-sync"
if [ ! -d "$sync_dir/node_modules/@atproto/sync" ]; then
  mkdir -p "$sync_dir"
  (cd "$sync_dir" && npm init -y >/dev/null && \
   npm install --no-audit --no-fund --loglevel=error @atproto/sync@0.4.11 @atproto/repo@0.10.14 >/dev/null)
fi
bin="${BUILD_DIR:-build}/bench"
node=tests/e2e/pds/node22
work="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-firehose-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$bin/make_frames" "$work/frames" "${1:-5000}"
"$bin/make_frames" "$work/network" 100000 --network
"$bin/make_repos" "$work/repos"
# The two sides run in turn ROUNDS times (default 3; the host's load moves
# either side by 20-50% within a minute): ratios are the medians of the
# per-round ratios.
rounds="${ROUNDS:-3}"
for round in $(seq "$rounds"); do
  "$bin/firehose_bench" "$work/frames" "$work/db" > "$work/cpp-frames.$round"
  "$node" bench/js/verify_frames.mjs "$sync_dir" "$work/frames" > "$work/js-frames.$round"
  taskset -c 0 "$bin/firehose_bench" "$work/network" "$work/db" > "$work/cpp-network.$round"
  "$node" bench/js/verify_frames.mjs "$sync_dir" "$work/network" > "$work/js-network.$round"
  "$bin/backfill_bench" "$work/repos" "$work/db" > "$work/cpp-repos.$round"
  "$node" bench/js/verify_repos.mjs "$sync_dir" "$work/repos" > "$work/js-repos.$round"
done
cat "$work"/cpp-* "$work"/js-*
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, n = sys.argv[1], int(sys.argv[2])
def rows(name):
    return [[json.loads(line) for line in open(f"{work}/{name}.{r}") if line.strip()] for r in range(1, n + 1)]
med = statistics.median
def stream(label, name):
    cpp, js = rows(f"cpp-{name}"), rows(f"js-{name}")
    verify = [r[0] for r in cpp]
    apply = [r[1] for r in cpp]
    jsr = [r[0] for r in js]
    ratios = [c["framesPerSecond"] / j["framesPerSecond"] for c, j in zip(verify, jsr)]
    print(f"{label}: decode + verify C++ {med(v['framesPerSecond'] for v in verify):,.0f} frames/s "
          f"({med(v['opsPerSecond'] for v in verify):,.0f} node ops/s); JS {med(j['framesPerSecond'] for j in jsr):,.0f} "
          f"frames/s ({med(j['opsPerSecond'] for j in jsr):,.0f} ops/s); C++/JS {med(ratios):.1f}x "
          f"(rounds: {' '.join(f'{r:.1f}' for r in ratios)})")
    print(f"{label}: decode + verify + apply C++ {med(a['framesPerSecond'] for a in apply):,.0f} frames/s, "
          f"{med(a['opsPerSecond'] for a in apply):,.0f} node ops/s applied in the median, "
          f"{min(a['opsPerSecond'] for a in apply):,.0f} in the slowest round; "
          f"commits verified {apply[0]['commitsVerified']}, failures {apply[0]['verificationFailures']}")
stream("node stream", "frames")
stream("network stream (C++ on one core)", "network")
cpp, js = rows("cpp-repos"), rows("js-repos")
print("backfill  records/repo  repos  C++ verify repos/s  records/s   JS repos/s  records/s  C++/JS  C++ verify+apply records/s")
for i, first in enumerate(cpp[0]):
    c = [r[i] for r in cpp]
    j = [r[i] for r in js]
    ratios = [a["recordsPerSecond"] / b["recordsPerSecond"] for a, b in zip(c, j)]
    print(f"          {first['recordsPerRepo']:>12,} {first['repos']:>6} {med(x['reposPerSecond'] for x in c):>19,.1f} "
          f"{med(x['recordsPerSecond'] for x in c):>10,.0f} {med(x['reposPerSecond'] for x in j):>12,.2f} "
          f"{med(x['recordsPerSecond'] for x in j):>10,.0f} {med(ratios):>6.1f}x "
          f"{med(x['applyRecordsPerSecond'] for x in c):>12,.0f}")
PY
