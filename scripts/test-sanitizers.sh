#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer
# (Debug, into build-asan/) and runs every test against that build, the
# end-to-end tests included. Any sanitizer report fails the run, except the
# two leaks inside cpprestsdk at exit that tests/lsan.supp names.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/install-deps.sh
./tests/js/install.sh
./tests/e2e/pds/install.sh
started=$SECONDS
BUILD_DIR=build-asan BUILD_TYPE=Debug ./scripts/build.sh -DBULLETED_SANITIZE=ON -DBULLETED_BENCH=OFF
# The build's time, for the test command's summary.
echo $((SECONDS - started)) > build-asan/build-seconds
suppressions="$PWD/tests/lsan.supp"
cd build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
# Two known leaks inside cpprestsdk at exit (the file says which).
export LSAN_OPTIONS="suppressions=$suppressions"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --output-on-failure --parallel "${JOBS:-$(nproc)}" --timeout 900
