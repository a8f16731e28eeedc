#!/usr/bin/env bash
# Installs missing packages, builds commscale and its tests, and runs every test (unit, MPI under
# mpirun with 1-4 ranks, end-to-end CLI, a one-node Slurm cluster, and GPU tests, which skip where no
# GPU is visible); then the sanitizer build and the fuzz targets (tests/sanitize/run.sh).
#
# Environment: COMMSCALE_BUILD_DIR (default build-tests/), COMMSCALE_REQUIRE_SLURM (default 1 as root).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="${COMMSCALE_BUILD_DIR:-$root/build-tests}"

"$root/launch/install-deps.sh" test
# A unity build (CMAKE_UNITY_BUILD: source files compiled in batches of 8, so the json, fmt, CLI11 and
# GoogleTest templates each file instantiates are compiled once per batch, not once per file) with line
# tables only (-g1: backtraces keep file and line, not variables): about 3 times less compiler time than
# file by file with full -g (results/ci-time). A user's own builds (launch/main.sh, cmake by hand) are
# file by file, so a file that misses an include still fails there.
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMSCALE_WERROR=ON \
  -DCMAKE_UNITY_BUILD=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
cmake --build "$build_dir"
# As root (CI) the Slurm test has what it needs (install-deps installed it): it must run, not skip.
if [ "$(id -u)" = 0 ]; then export COMMSCALE_REQUIRE_SLURM="${COMMSCALE_REQUIRE_SLURM:-1}"; fi
cd "$build_dir"
# Two tests at a time (at most four, one per core): the tests that time ranks, kill them or start services
# (reliability, slurm, multinode, gpu) are RUN_SERIAL in tests/CMakeLists.txt and run alone.
jobs=$(nproc)
ctest --output-on-failure -j "$((jobs < 4 ? jobs : 4))"

# ASan+UBSan build of the CPU tests, and the fuzz targets for a bounded time.
"$root/tests/sanitize/run.sh"
