#!/usr/bin/env bash
# Installs what the tests need, builds, and runs every test. Exits non-zero
# when any test fails. This is the README's test command and what CI runs.
#   FUZZ_SECONDS (default 10): how long each fuzz target runs first (0 skips).
#   SANITIZERS (default 1): also run every test under ASan + UBSan (0 skips).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/install-deps.sh --tests
./tests/js/install.sh
./tests/e2e/pds/install.sh
./scripts/build.sh
if [ "${FUZZ_SECONDS:-10}" != "0" ]; then
  ./scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
fi
if [ "${SANITIZERS:-1}" != "0" ]; then
  ./scripts/test-sanitizers.sh
fi
cd "${BUILD_DIR:-build}"
ctest --output-on-failure --parallel "${JOBS:-$(nproc)}" --timeout 900
