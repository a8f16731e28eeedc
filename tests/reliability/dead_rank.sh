#!/usr/bin/env bash
# A rank killed with SIGKILL during `bench` and during `train` (CPU backend): every other rank must be
# gone within 30 s, with a non-zero exit code and a message naming the lost rank.
#
#   dead_rank.sh COMMSCALE WORK_DIR MPIRUN [MPIRUN OPTION...]
#
# Twice each: under mpirun as it comes (mpirun ends the job when a rank dies, and says which), and
# under `mpirun --enable-recovery`, which leaves the other ranks running: then commscale's own
# watchdog must end them, each with exit code 5 and a message naming the rank.
set -euo pipefail
COMMSCALE=$1
WORK=$2
shift 2
MPIRUN=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/reliability/common.sh
. "$here/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# RELIABILITY_BACKEND=gpu runs the same cases on GPUs (NCCL), two ranks each (one per GPU).
backend=${RELIABILITY_BACKEND:-cpu}
bench_args=(bench all_reduce --backend "$backend" -b 4K -e 4M -i 4K -n 50 -w 1 -c 0)  # a thousand sizes: minutes
train_args=(train --backend "$backend" --model tiny --tp 2 --pp 2 --steps 10000 --warmup 0 --timing step)
bench_ranks=3
train_ranks=4
if [ "$backend" = gpu ]; then
  bench_args=(bench all_reduce --backend gpu -b 64K -e 4G -i 64K -n 200 -w 1 -c 0)
  train_args=(train --backend gpu --model tiny --tp 2 --steps 10000 --warmup 0 --timing step)
  bench_ranks=2
  train_ranks=2
fi

# run_case NAME RANKS VICTIM RECOVERY COMMAND...: starts the job, kills VICTIM once it has made progress.
run_case() {
  local name=$1 ranks=$2 victim=$3 recovery=$4
  shift 4
  local dir="$WORK/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  local launcher=("${MPIRUN[@]}" -np "$ranks")
  local command=("$COMMSCALE" "$@" --jsonl "$dir/progress.jsonl")
  if [ "$recovery" = yes ]; then
    launcher+=(--enable-recovery)
    command=("$here/record_exit.sh" "$dir" "${command[@]}")
  fi
  "${launcher[@]}" "${command[@]}" > "$dir/stdout" 2> "$dir/stderr" &
  local job=$!
  wait_for_lines "$dir/progress.jsonl" 3 120
  local pid
  pid=$(rank_pid "$victim") || fail "$name: no process for rank $victim"
  kill -KILL "$pid"
  local took
  took=$(wait_gone "$job" 30) || exit 1
  local rc=0
  wait "$job" || rc=$?
  echo "$name: rank $victim (pid $pid) killed; every process gone after ${took} s; mpirun exit code $rc"
  grep -v "Read -1, expected" "$dir/stderr" | head -20 || true

  if [ "$recovery" = no ]; then
    [ "$rc" -ne 0 ] || fail "$name: mpirun exited with 0"
    grep -Eq "rank $victim (with PID|\(pid)" "$dir/stderr" || fail "$name: no message names rank $victim"
    return 0
  fi
  # Each survivor ends itself with exit code 5 and names the lost rank, unless the launcher ends it
  # first on another survivor's MPI_Abort (a signal: exit code above 128).
  local r code fives=0 codes=""
  for ((r = 0; r < ranks; r++)); do
    [ "$r" -eq "$victim" ] && continue
    if [ ! -f "$dir/exit.$r" ]; then
      # The launcher can SIGKILL a survivor's wrapper (record_exit.sh) along with it once another
      # survivor has ended the job: then nothing records its exit, but the rank must have named the lost
      # rank before it went (every process is gone: wait_gone above).
      grep -q "error on host .*, rank $r: .*rank $victim (pid $pid on host" "$dir/stderr" ||
        fail "$name: rank $r left no exit code and did not name the lost rank $victim"
      codes+=" rank $r: killed with its wrapper after naming rank $victim;"
      continue
    fi
    code=$(cat "$dir/exit.$r")
    codes+=" rank $r: $code;"
    case "$code" in
      5) fives=$((fives + 1))
         grep -q "error on host .*, rank $r: .*rank $victim (pid $pid on host" "$dir/stderr" ||
           fail "$name: rank $r exited with 5 but did not name the lost rank $victim" ;;
      0) fail "$name: rank $r exited with 0" ;;
      *) [ "$code" -gt 128 ] || fail "$name: rank $r exited with $code, expected 5 (or a signal from the launcher)" ;;
    esac
  done
  echo "$name: exit codes:$codes"
  [ "$fives" -gt 0 ] || fail "$name: no rank ended itself with exit code 5"
}

run_case bench-mpirun "$bench_ranks" 1 no "${bench_args[@]}"
run_case train-mpirun "$train_ranks" 1 no "${train_args[@]}"
run_case bench-recovery "$bench_ranks" 1 yes "${bench_args[@]}"
run_case train-recovery "$train_ranks" "$((train_ranks - 1))" yes "${train_args[@]}"
echo "dead_rank: all cases passed"
