#!/usr/bin/env bash
# Runs one end-to-end test script against a real PDS: installs the harness
# when needed, then runs SCRIPT with the harness's Node 22 in a scratch folder
# that is removed afterwards; on failure it prints the app views' logs first.
# Usage: tests/e2e/run_e2e.sh SCRIPT.mjs APPVIEW_BINARY
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
script="$1"
binary="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
"$here/pds/install.sh" >/dev/null
# The abuse test holds thousands of sockets.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
workdir="$(mktemp -d "${TMPDIR:-/tmp}/bulleted-e2e-XXXXXX")"
status=0
(cd "$here/pds" && ./node22 "../$script" "$binary" "$workdir") || status=$?
if [ "$status" -ne 0 ]; then
  # Every app view's log, including those of the scripts' own sub-folders.
  while IFS= read -r log; do
    echo "--- $log (last 40 lines)"; tail -n 40 "$log"
  done < <(find "$workdir" -name 'appview-*.log' -type f | sort)
fi
rm -rf "$workdir"
exit "$status"
