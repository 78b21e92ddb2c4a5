#!/usr/bin/env bash
# Installs what the app view needs, builds it (Release) and runs
# `bulleted-appview serve` on its embedded default (local mode, SQLite file
# under ./data). Extra arguments go to `serve`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/install-deps.sh
./scripts/build.sh
exec "${BUILD_DIR:-build}/bulleted-appview" serve "$@"
