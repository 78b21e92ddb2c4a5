#!/usr/bin/env bash
# Installs what the tests need, builds, and runs every test. Exits non-zero
# when any test fails. This is the README's test command and what CI runs.
#   FUZZ_SECONDS (default 10): how long each fuzz target runs first (0 skips).
#   SANITIZERS (default 1): also run every test under ASan + UBSan (0 skips).
# Ends by printing how long each step took.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
steps=()
step() {  # step NAME COMMAND...: runs it, noting its time (and exit status)
  local name=$1 started=$SECONDS status=0
  shift
  "$@" || status=$?
  steps+=("$(printf '%-22s %5d s%s' "$name" $((SECONDS - started)) \
    "$([ "$status" = 0 ] || echo " (exit $status)")")")
  return "$status"
}
summary() {
  echo "--- test command steps (${SECONDS} s in all)"
  printf '%s\n' "${steps[@]}"
  local asan="$root/build-asan/build-seconds"
  [ -f "$asan" ] && echo "  of which the asan build: $(cat "$asan") s"
  return 0
}
trap summary EXIT
step "install packages" ./scripts/install-deps.sh --tests
step "install js tools" ./tests/js/install.sh
step "install the pds" ./tests/e2e/pds/install.sh
# Without link-time optimisation: each test executable would optimise the
# whole library again as it links (the service's own build keeps it).
step "build (Release)" env LTO=OFF ./scripts/build.sh
if [ "${FUZZ_SECONDS:-10}" != "0" ]; then
  step "fuzz" ./scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
fi
if [ "${SANITIZERS:-1}" != "0" ]; then
  step "asan build and tests" ./scripts/test-sanitizers.sh
fi
cd "${BUILD_DIR:-build}"
step "tests (Release)" ctest --output-on-failure --parallel "${JOBS:-$(nproc)}" --timeout 900
