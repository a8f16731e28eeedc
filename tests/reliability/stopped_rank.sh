#!/usr/bin/env bash
# A stopped rank (SIGSTOP: a rank that hangs without dying) under -T: the others must end the job with
# exit code 4 and a message naming what they waited for and the rank that did not arrive.
#
#   stopped_rank.sh COMMSCALE WORK_DIR MPIRUN [MPIRUN OPTION...]
#
# `train --tp 2 --pp 2` with rank 0 (stage 0) stopped: the stage-1 ranks wait in a pipeline transfer,
# and the message names it (send or recv, the peer and its stage, the group, the microbatch), the rank
# that did not arrive and that rank 0 is stopped. A stop that lands between two steps leaves the
# others in the barrier before the next one: that wait is bounded too (by -T, at least 30 s) and names
# rank 0; so does one in a collective at the step's end (the message names the collective); the case then runs
# again, up to 3 times, to catch a stop inside a pipeline transfer.
set -euo pipefail
COMMSCALE=$1
WORK=$2
shift 2
MPIRUN=("$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/reliability/common.sh
. "$here/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
timeout_s=5

transfer="waiting for op [0-9]+ \(mb[0-9]+\.(fwd|bwd)\.(send|recv), stream pp-(send|recv)\): (send|recv) of [^;]* (to|from) rank [0-9] \(stage [01]\) on group pp-(fwd|bwd) \(ranks [0-9], [0-9]\), microbatch [0-9]+, transfer [0-9]+ from rank [0-9] to rank [0-9]; "
# Which rank reports first depends on where the stop landed; some message names a rank behind.
behind="did not arrive: rank [0-9] \(has started [0-9]+ (calls on this group|transfers from rank [0-9] to rank [0-9] on group pp-(fwd|bwd)); |did not answer within 5 s [^:]*: rank 0"
between="(a barrier|a gather|an all-gather)[^;]* did not complete within 30 s on "
# A stop after rank 0's last transfer of a step leaves the others in a collective of the step's end (the
# embedding's gradients, the data-parallel reduction): the message names the op, its group and who is behind.
collective="waiting for op [0-9]+ \([^,]+, stream [a-z-]+\): [a-z_]+ of [^;]* on group [a-z-]+[^;]*, did not arrive: rank [0-9]"
stopped="rank 0 \(pid [0-9]+ on host [^ )]+\)? is stopped"

# stop_rank NAME VICTIM COMMAND...: starts the job on 4 ranks, SIGSTOPs VICTIM once it has made
# progress; every process must be gone within the timeout plus 70 s, mpirun's exit code must be 4.
# Prints "transfer" or "between" for the message found.
stop_rank() {
  local name=$1 victim=$2
  shift 2
  local dir="$WORK/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  "${MPIRUN[@]}" -np 4 "$COMMSCALE" "$@" -T "$timeout_s" --jsonl "$dir/progress.jsonl" \
    > "$dir/stdout" 2> "$dir/stderr" &
  local job=$!
  wait_for_lines "$dir/progress.jsonl" 4 120
  local pid
  pid=$(rank_pid "$victim") || fail "$name: no process for rank $victim"
  kill -STOP "$pid"
  local took rc=0
  took=$(wait_gone "$job" $((timeout_s + 70))) || exit 1
  wait "$job" || rc=$?
  {
    echo "$name: rank $victim (pid $pid) stopped; every process gone after ${took} s; mpirun exit code $rc"
    grep "^commscale: " "$dir/stderr" | cut -c1-1200 || true
  } >&2
  [ "$rc" -eq 4 ] || fail "$name: exit code $rc, expected 4 (timeout)"
  grep -Eq "$stopped" "$dir/stderr" || fail "$name: no message says rank 0 is stopped"
  grep -Eq "$behind" "$dir/stderr" || fail "$name: no message names a rank that did not arrive"
  if grep -Eq "$transfer" "$dir/stderr"; then
    echo transfer
  elif grep -Eq "$between" "$dir/stderr"; then
    echo between
  elif grep -Eq "$collective" "$dir/stderr"; then
    echo collective
  else
    fail "$name: no message names the transfer, the step-end collective or the wait between steps that timed out"
  fi
}

for attempt in 1 2 3; do
  found=$(stop_rank "train-pipeline-$attempt" 0 \
    train --backend cpu --model tiny --tp 2 --pp 2 --steps 10000 --warmup 0 --timing step)
  echo "train-pipeline-$attempt: the message names the $found wait"
  [ "$found" = transfer ] && break
  [ "$attempt" -lt 3 ] || fail "train-pipeline: 3 stops in a row landed outside a pipeline transfer"
done
# Without -T nothing ends the wait (issue 36, case 17: the job hung in silence). A rank that has waited
# --wait-report seconds (60 by default; 2 here) says so on stderr, naming what it waits for and that rank 0
# is stopped, and says that no -T bounds the wait; the job goes on waiting, and this test ends it.
untimed_stop() {
  local dir="$WORK/untimed"
  rm -rf "$dir"
  mkdir -p "$dir"
  "${MPIRUN[@]}" -np 4 "$COMMSCALE" train --backend cpu --model tiny --tp 2 --pp 2 --steps 10000 --warmup 0 \
    --timing step --wait-report 2 --jsonl "$dir/progress.jsonl" > "$dir/stdout" 2> "$dir/stderr" &
  local job=$!
  wait_for_lines "$dir/progress.jsonl" 4 120
  local pid tenths=0
  pid=$(rank_pid 0) || fail "untimed: no process for rank 0"
  kill -STOP "$pid"
  # The report comes after 2 s of waiting and the 5 s in which the others are asked what they do.
  until grep -q "^commscale: still waiting on " "$dir/stderr"; do
    if [ "$tenths" -ge 300 ] || ! kill -0 "$job" 2>/dev/null; then
      kill_job "$job"
      cat "$dir/stderr" >&2
      fail "untimed: no report of the wait within 30 s of the stop (or the job ended)"
    fi
    sleep 0.1
    tenths=$((tenths + 1))
  done
  kill -0 "$job" 2>/dev/null || fail "untimed: the job ended without -T"
  kill_job "$job"
  wait "$job" 2>/dev/null || true
  grep "^commscale: still waiting on " "$dir/stderr" | cut -c1-1200 >&2
  local report="^commscale: still waiting on host [^,]+, rank [1-3]: [0-9]+ s for [^;]+; .*rank 0 \(pid $pid on host [^ )]+ is stopped: SIGSTOP, or a debugger\).*; no -T/--timeout was given, so nothing ends the wait"
  grep -Eq "$report" "$dir/stderr" || fail "untimed: no report names the wait, the stopped rank 0 and the missing -T"
}
untimed_stop
echo "untimed: a rank reported its wait, naming the stopped rank 0; the job was not ended"

echo "stopped_rank: all cases passed"
