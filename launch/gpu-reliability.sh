#!/usr/bin/env bash
# The reliability checks that need GPUs (issue 7), on an already built commscale with its tests
# (cmake -DCOMMSCALE_CUDA=ON, target all). Builds nothing. Each step's output goes to OUT/<step>.txt
# and a one-line verdict to OUT/summary.txt; exits non-zero if any step failed, after running them all.
#
# usage: launch/gpu-reliability.sh BUILD_DIR OUT
#
# Steps (the ones marked 2+ need two GPUs or more and are skipped, said so, with one):
#   corruption        bench on NCCL with a seeded wrong element: exit 1, "#wrong" counted (2+: 2 ranks)
#   p2p-corruption    p2p with a copy overwritten before its check: exit 1
#   hung (2+)         tests/reliability/hung_collective.sh on NCCL: exit 4 naming op, group and rank
#   dead-rank (2+)    tests/reliability/dead_rank.sh on NCCL: SIGKILL a rank, the other ends within 30 s
#   memcheck, racecheck
#                     compute-sanitizer over the GPU tests (commscale_gpu_tests, 1 rank): 0 errors;
#                     SANITIZE_FILTER (a gtest filter) narrows memcheck's tests. racecheck runs the
#                     tests RACECHECK_FILTER names (default Gpu.*: the backend's fill and check kernels,
#                     every collective, graph replay), not those that run cuBLAS: its Hopper GEMMs
#                     (nvjet_*) synchronize shared memory through TMA and mbarriers, and racecheck
#                     reports hundreds of thousands of hazards inside them, or, told to skip them
#                     (--kernel-name-exclude), fails with an internal error. Our kernels use no shared
#                     memory; the one cross-thread exchange (the check kernel's warp-shuffle sum) runs
#                     in Gpu.*.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT" >&2
  exit 2
fi
build=$1
out=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commscale="$build/src/commscale"
gpu_tests="$build/tests/commscale_gpu_tests"
for f in "$commscale" "$gpu_tests"; do
  if [ ! -x "$f" ]; then
    echo "gpu-reliability.sh: $f is not an executable: build with -DCOMMSCALE_CUDA=ON first" >&2
    exit 2
  fi
done
mkdir -p "$out"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun --bind-to none)
sanitizer=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
failed=0

# step NAME COMMAND...: runs it, records the verdict.
step() {
  local name=$1 rc=0
  shift
  echo "# $*" > "$out/$name.txt"
  "$@" >> "$out/$name.txt" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then echo "$name: passed" >> "$out/summary.txt"; else
    echo "$name: FAILED (exit code $rc; see $name.txt)" >> "$out/summary.txt"
    failed=1
  fi
}

# shellcheck disable=SC2317  # corruption and sanitize run through `step`
# A seeded wrong element must fail the run with exit code 1 and a non-zero "#wrong".
corruption() {
  local ranks=$1 rc=0
  "${mpirun[@]}" -np "$ranks" "$commscale" bench all_reduce all_gather -b 1K -e 1M -f 4 -n 5 --backend gpu \
    --inject-corruption "$((ranks - 1))" -J "$out/corruption.json" || rc=$?
  echo "exit code $rc"
  [ "$rc" -eq 1 ] && grep -Eq '"wrong": ?[1-9]' "$out/corruption.json"
}

# shellcheck disable=SC2317  # run through `step`
# A copy overwritten before its check must fail p2p with exit code 1.
p2p_corruption() {
  local rc=0
  "$commscale" p2p --inject-corruption -b 1M -n 2 -w 0 --copies 1 --tests ce,sm,host || rc=$?
  echo "exit code $rc"
  [ "$rc" -eq 1 ]
}

# shellcheck disable=SC2317  # run through `step`
# compute-sanitizer TOOL over the GPU tests on one rank; its summary must say 0 errors.
sanitize() {
  local tool=$1
  # API errors are left out: NCCL probes kernels for other architectures and cuMem features, and the
  # errors it gets back (and handles) would count as findings; memory and race findings still do.
  local filter=${SANITIZE_FILTER:-*}
  [ "$tool" = racecheck ] && filter=${RACECHECK_FILTER:-Gpu.*}
  "$sanitizer" --tool "$tool" --report-api-errors no --error-exitcode 99 --log-file "$out/$tool-%p.log" \
    "$gpu_tests" --gtest_brief=1 --gtest_filter="$filter"
  local rc=$?
  cat "$out/$tool"-*.log
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$out/$tool"-*.log
  return "$rc"
}

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader 2>/dev/null || true
  "$commscale" --version
} > "$out/summary.txt"

if [ "$gpus" -ge 2 ]; then
  step corruption corruption 2
  step hung env RELIABILITY_BACKEND=gpu "$root/tests/reliability/hung_collective.sh" "$commscale" "$out/hung-work" \
    "${mpirun[@]}"
  step dead-rank env RELIABILITY_BACKEND=gpu "$root/tests/reliability/dead_rank.sh" "$commscale" "$out/dead-work" \
    "${mpirun[@]}"
else
  step corruption corruption 1
  echo "hung, dead-rank: skipped ($gpus GPU: they need 2)" >> "$out/summary.txt"
fi
step p2p-corruption p2p_corruption
step memcheck sanitize memcheck
step racecheck sanitize racecheck
cat "$out/summary.txt"
exit "$failed"
