#!/usr/bin/env bash
# Installs the JavaScript packages the tests compare against (pinned in
# package-lock.json) into tests/js/node_modules. Skips npm when they are in
# place already.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if [ -d node_modules/@atproto/lexicon ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
