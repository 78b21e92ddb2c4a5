#!/usr/bin/env bash
# Installs what the app view needs, builds the service alone (Release, no
# tests, no benchmarks, in build-serve/ so that it never shares a build
# folder with the test command's build/) and runs `bulleted-appview serve`
# on its embedded default (local mode, SQLite file under ./data). Extra
# arguments go to `serve`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/install-deps.sh
export BUILD_DIR="${SERVE_BUILD_DIR:-build-serve}"
./scripts/build.sh --target bulleted-appview -- -DBULLETED_TESTS=OFF -DBULLETED_BENCH=OFF
exec "$BUILD_DIR/bulleted-appview" serve "$@"
