#!/usr/bin/env bash
# The sanitizer stage of CI (called by tests/run.sh): commscale and its CPU tests built with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer (COMMSCALE_SANITIZE), plus the libFuzzer targets
# (COMMSCALE_FUZZ). Runs the unit tests, the MPI tests on 2 and 3 ranks, the bad-input corpus and the
# usage errors, then each fuzz target for COMMSCALE_FUZZ_SECONDS (default 25 s). Any sanitizer report
# fails the test that produced it.
#
# Environment: COMMSCALE_SANITIZE_BUILD_DIR (default build-sanitize/), COMMSCALE_FUZZ_SECONDS.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir="${COMMSCALE_SANITIZE_BUILD_DIR:-$root/build-sanitize}"

CC=clang CXX=clang++ cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCOMMSCALE_CUDA=OFF -DCOMMSCALE_SANITIZE=ON -DCOMMSCALE_FUZZ=ON -DCOMMSCALE_WERROR=ON \
  -DCOMMSCALE_FUZZ_SECONDS="${COMMSCALE_FUZZ_SECONDS:-25}"
cmake --build "$build_dir" --target commscale commscale_unit_tests commscale_mpi_tests fuzz_targets

# Reports fail the run (UBSan only prints by default). Leaks inside the MPI libraries, which keep
# their state to the end of the process, are suppressed by name; ours are not.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export LSAN_OPTIONS="suppressions=$root/tests/sanitize/lsan.supp:print_suppressions=0"
cd "$build_dir"
jobs=$(nproc)
ctest --output-on-failure -j "$((jobs < 4 ? jobs : 4))" -L 'unit|fuzz'
ctest --output-on-failure -R '^(cli\.bad_inputs|cli\.usage_errors)$'
# Under mpirun, LeakSanitizer reports memory of Open MPI's plugins, which are unloaded by the time it
# looks ("<unknown module>"), so no suppression can name them: the MPI tests run without leak checks
# (ASan's other checks and UBSan stay on). Our leaks are caught by the tests above.
ASAN_OPTIONS=detect_leaks=0:strict_string_checks=1:check_initialization_order=1 \
  ctest --output-on-failure -R '^(mpi\.ranks2|mpi\.ranks3)$'
