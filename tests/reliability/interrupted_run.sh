#!/usr/bin/env bash
# SIGTERM and SIGINT to mpirun (which passes SIGTERM on to every rank for both) during a long `bench`
# sweep and a `train` run on the CPU backend: every rank must stop within seconds with exit code
# 128 + SIGTERM (143), rank 0 must say in one line what it kept, and every JSON Lines line it names must
# be there and whole; the -J file, rewritten after every row, must read back. mpirun itself exits with
# 1 after a signal (Open MPI 4.1 sets its own status before passing the signal on): checked as non-zero.
# Then a SIGTERM sent to rank 1 alone: rank 1 says so and ends the job.
#
#   interrupted_run.sh COMMSCALE WORK_DIR MPIRUN [MPIRUN OPTION...]
set -euo pipefail
COMMSCALE=$1
WORK=$2
shift 2
MPIRUN=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/reliability/common.sh
. "$here/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# Open MPI's mpirun, signalled, sends its ranks SIGCONT, sleeps odls_base_sigkill_timeout (1 s by
# default), sends SIGTERM, sleeps again, then SIGKILLs what is left; on a loaded test machine a rank (and
# the wrapper that records its exit code) may not be scheduled within 1 s, so the test gives them 5.
# While it sleeps, mpirun reads none of its ranks' output, and bench's rows can fill a rank's stdout pipe
# within those 5 s: the rank must still see the SIGTERM (core/interruptible_output.hpp).
sigkill=(--mca odls_base_sigkill_timeout 5)
bench_args=(bench all_reduce --backend cpu -b 4K -e 4M -i 4K -n 50 -w 1 -c 0)  # a thousand sizes: minutes
train_args=(train --backend cpu --model tiny --tp 2 --steps 10000 --warmup 0 --timing step)

# start_job NAME COMMAND...: starts the job on 2 ranks, each under record_exit.sh, and waits for 4 lines.
start_job() {
  local name=$1
  shift
  dir="$WORK/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  "${MPIRUN[@]}" "${sigkill[@]}" -np 2 "$here/record_exit.sh" "$dir" "$COMMSCALE" "$@" > "$dir/stdout" 2> "$dir/stderr" &
  job=$!
  wait_for_lines "$dir/out.jsonl" 4 120
}

# finish_job NAME: waits for every process to be gone (30 s at most); sets rc to mpirun's exit code.
finish_job() {
  local took
  took=$(wait_gone "$job" 30) || exit 1
  rc=0
  wait "$job" || rc=$?
  echo "$1: every process gone after ${took} s; mpirun exit code $rc"
  grep "commscale" "$dir/stderr" || true
}

# expect_rank_exit NAME RANK CODE
expect_rank_exit() {
  [ -f "$dir/exit.$2" ] || fail "$1: rank $2 left no exit code (killed before it could stop?)"
  local code
  code=$(cat "$dir/exit.$2")
  [ "$code" -eq "$3" ] || fail "$1: rank $2 exited with $code, expected $3"
}

# signal_mpirun NAME SIGNAL ROW WITH_JSON COMMAND...: SIGNAL to mpirun, which passes SIGTERM on.
signal_mpirun() {
  local name=$1 signal=$2 row=$3 with_json=$4
  shift 4
  start_job "$name" "$@" -J "$WORK/$name/out.json"
  kill "-$signal" "$job"
  finish_job "$name"
  [ "$rc" -ne 0 ] || fail "$name: mpirun exited with 0"
  expect_rank_exit "$name" 0 143
  expect_rank_exit "$name" 1 143
  # One line, from rank 0, naming what it kept; the line count it gives is the file's.
  local line lines
  line=$(grep -E "^commscale: interrupted by SIGTERM from [^ ]+ \(pid [0-9]+\) on host [^,]+, rank 0: the run stopped; kept what was written: .*; exit code 143$" "$dir/stderr") ||
    fail "$name: rank 0 did not say it was interrupted and what it kept"
  lines=$(grep -c "" "$dir/out.jsonl")
  case "$line" in *"$dir/out.jsonl ($lines whole lines)"*) ;; *) fail "$name: the line does not name out.jsonl with its $lines lines" ;; esac
  if [ "$with_json" = yes ]; then
    case "$line" in *"$dir/out.json, "* | *"$dir/out.json; "*) ;; *) fail "$name: the line does not name out.json" ;; esac
  fi
  [ "$(grep -c "^commscale: " "$dir/stderr")" -eq 1 ] || fail "$name: more than one commscale message"
  cmake -DFILE="$dir/out.jsonl" -DMIN_ROWS=3 -DROW="$row" -P "$here/read_jsonl.cmake"
  if [ "$with_json" = yes ]; then cmake -DFILE="$dir/out.json" -P "$here/read_json.cmake"; fi
}

signal_mpirun bench-sigterm TERM row yes "${bench_args[@]}"
signal_mpirun bench-sigint INT row yes "${bench_args[@]}"
signal_mpirun train-sigterm TERM step no "${train_args[@]}"

# SIGTERM to rank 1 alone (not through the launcher): it says so, and the job ends.
start_job rank1-alone "${bench_args[@]}" -J "$WORK/rank1-alone/out.json"
pid=$(rank_pid 1) || fail "rank1-alone: no process for rank 1"
kill -TERM "$pid"
finish_job rank1-alone
[ "$rc" -ne 0 ] || fail "rank1-alone: mpirun exited with 0"
grep -Eq "commscale: interrupted by SIGTERM from [^ ]+ \(pid [0-9]+\) on host [^,]+, rank 1, sent to this rank alone: ending the job" \
  "$dir/stderr" || fail "rank1-alone: rank 1 did not say it was interrupted"
cmake -DFILE="$dir/out.jsonl" -DMIN_ROWS=3 -DROW=row -P "$here/read_jsonl.cmake"
echo "interrupted_run: all cases passed"
