#!/usr/bin/env bash
# Imports a generated WorkFlowy-style OPML outline (bench/make_opml.py) into a
# fresh local database with `bulleted-appview import`, and prints the seconds
# and the peak memory (maximum resident set size) of the process.
# Usage: bench/run_import_bench.sh [NODES]   (default 100000)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh >/dev/null
nodes="${1:-100000}"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-import-bench-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
python3 bench/make_opml.py "$nodes" > "$scratch/outline.opml"
echo "outline: $nodes nodes, $(stat -c %s "$scratch/outline.opml") bytes of OPML"
python3 - "$root/${BUILD_DIR:-build}/bulleted-appview" "$scratch" <<'PY'
import resource, subprocess, sys, time
binary, scratch = sys.argv[1], sys.argv[2]
start = time.monotonic()
done = subprocess.run([binary, "import", f"{scratch}/outline.opml", "--repo", "did:plc:bench",
                       "--db", f"{scratch}/bench.db"], capture_output=True, text=True)
seconds = time.monotonic() - start
if done.returncode != 0:
    sys.exit(done.stderr)
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(done.stdout.strip())
print(f"import: {seconds:.2f} s, peak RSS {peak_kib / 1024:.1f} MiB")
PY
