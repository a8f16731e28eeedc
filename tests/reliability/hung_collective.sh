#!/usr/bin/env bash
# A hung collective: one rank stops issuing collectives (--debug-skip-collective RANK:INDEX), so the
# others wait for it; with -T the run must end with exit code 4 and a message naming the op, the group
# and the rank that did not arrive. During `bench` and during `train`.
#
#   hung_collective.sh COMMSCALE WORK_DIR MPIRUN [MPIRUN OPTION...]
#
# RELIABILITY_BACKEND=gpu runs the same cases on two GPUs (NCCL): the communicators are aborted.
set -euo pipefail
COMMSCALE=$1
WORK=$2
shift 2
MPIRUN=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/reliability/common.sh
. "$here/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
backend=${RELIABILITY_BACKEND:-cpu}
timeout_s=5

# expect_hang NAME RANKS SKIPPER PATTERN COMMAND...: runs the job; it must end within the timeout plus
# 30 s, with exit code 4, and rank 0's message must match PATTERN (grep -E).
expect_hang() {
  local name=$1 ranks=$2 skipper=$3 pattern=$4
  shift 4
  local dir="$WORK/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  local start=$SECONDS rc=0
  timeout $((timeout_s + 60)) "${MPIRUN[@]}" -np "$ranks" "$COMMSCALE" "$@" -T "$timeout_s" \
    --debug-skip-collective "$skipper" > "$dir/stdout" 2> "$dir/stderr" || rc=$?
  local took=$((SECONDS - start))
  echo "$name: exit code $rc after ${took} s"
  grep -v "Read -1, expected" "$dir/stderr" | head -8 || true
  [ "$rc" -eq 4 ] || fail "$name: exit code $rc, expected 4 (timeout)"
  [ "$took" -le $((timeout_s + 30)) ] || fail "$name: took ${took} s"
  grep -Eq "$pattern" "$dir/stderr" || fail "$name: no message matching: $pattern"
}

# Rank 1 stops at its 4th collective call (counted from 0): the others wait in that call.
expect_hang bench 2 1:3 \
  "all_reduce of .* on the group of ranks 0, 1 .*did not complete within $timeout_s s.*did not arrive: rank 1 " \
  bench all_reduce --backend "$backend" -b 1K -e 1K -n 10 -w 1 -c 1
if [ "$backend" = cpu ]; then
  expect_hang bench-split 4 2:3 \
    "on the group of ranks 0, 2 .*did not arrive: rank 2 " \
    bench all_reduce --backend cpu -b 1K -e 1K -n 10 -w 1 -c 1 --split strided:2
fi
# Two ranks, so that the one rank left waiting is the one that reports. Rank 1 stops in the second
# step (tiny with tp 2 has 37 collectives a step).
expect_hang train 2 1:40 \
  "waiting for op [0-9]+ .*: all_reduce of .* on group .*did not arrive: rank 1 " \
  train --backend "$backend" --model tiny --tp 2 --steps 4 --warmup 0 --timing step
echo "hung_collective: all cases passed"
