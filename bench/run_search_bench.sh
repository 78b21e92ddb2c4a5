#!/usr/bin/env bash
# Search at scale (docs/BENCHMARKS.md, "Search"): builds the Release
# tree, installs Debian's word list (wamerican) and FlexSearch (pinned,
# into .scratch/bench-flexsearch), writes the index search_bench describes
# (MAIN bullets in one repo among OTHERS in REPOS others; kept at
# $DB for RUN=again), measures search in process, then FlexSearch on the
# same outline, in the same run.
# Usage: [MAIN=N] [OTHERS=N] [REPOS=N] [DB=PATH] [REUSE=1] bench/run_search_bench.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh --target search_bench >/dev/null
if [ ! -f /usr/share/dict/words ]; then
  sudo_cmd=(); [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -qq wamerican >/dev/null
fi
./tests/e2e/pds/install.sh >/dev/null  # node
node_dir="$root/.scratch/bench-flexsearch"
if [ ! -d "$node_dir/node_modules/flexsearch" ]; then
  mkdir -p "$node_dir"
  (cd "$node_dir" && npm init -y >/dev/null && \
   npm install --no-audit --no-fund --loglevel=error flexsearch@0.8.212 >/dev/null)
fi
db="${DB:-/tmp/bulleted-search-bench.db}"
export_file="$db.export.jsonl"
reuse=(); [ "${REUSE:-0}" = 1 ] && reuse=(--reuse)
build/bench/search_bench --main "${MAIN:-1000000}" --others "${OTHERS:-3000000}" \
  --repos "${REPOS:-1000}" --db "$db" --export "$export_file" "${reuse[@]}"
FLEXSEARCH_DIR="$node_dir/node_modules/flexsearch" \
  ./tests/e2e/pds/node22 --expose-gc --max-old-space-size=8192 bench/js/flexsearch_bench.mjs "$export_file"
