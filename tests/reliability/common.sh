# shellcheck shell=bash
# Shared by the reliability tests (sourced): start a commscale job under mpirun in the background,
# wait for it to make progress, find its ranks' processes, and wait for every one to be gone.
#
# The caller sets COMMSCALE (the executable) and MPIRUN (an array: mpirun and its options). Every job
# runs with COMMSCALE_TEST_TAG in its environment, so the tests find their own processes (and not
# those of other jobs on the machine) through /proc, even once mpirun is gone.

COMMSCALE_TEST_TAG="reliability-$$-$RANDOM"
export COMMSCALE_TEST_TAG

# Fails the test with a message.
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# wait_for_lines FILE N SECONDS: until FILE has at least N lines.
wait_for_lines() {
  local file=$1 lines=$2 seconds=$3 waited=0
  while [ ! -f "$file" ] || [ "$(wc -l < "$file")" -lt "$lines" ]; do
    [ "$waited" -lt $((seconds * 10)) ] || fail "$file did not reach $lines lines in $seconds s"
    sleep 0.1
    waited=$((waited + 1))
  done
}

# job_pids: the commscale processes of this test's jobs, one per line as "PID RANK".
job_pids() {
  local exe environ pid
  exe=$(readlink -f "$COMMSCALE")
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ] || continue
    tr '\0' '\n' < "$environ" 2>/dev/null | grep -qx "COMMSCALE_TEST_TAG=$COMMSCALE_TEST_TAG" || continue
    echo "$pid $(tr '\0' '\n' < "$environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')"
  done
}

# rank_pid RANK: the pid of that rank's commscale process.
rank_pid() {
  job_pids | awk -v rank="$1" '$2 == rank { print $1; found = 1 } END { exit !found }'
}

# wait_gone LAUNCHER_PID SECONDS: until the launcher has ended and none of the job's processes is left;
# prints how long that took (seconds, one decimal). Kills what is left and fails after SECONDS.
wait_gone() {
  local launcher=$1 seconds=$2 tenths=0
  while kill -0 "$launcher" 2>/dev/null || [ -n "$(job_pids)" ]; do
    if [ "$tenths" -ge $((seconds * 10)) ]; then
      local left
      left=$(job_pids | tr '\n' ' ')
      kill_job "$launcher"
      fail "still running $seconds s after the kill: launcher $launcher, ranks (pid rank): $left"
    fi
    sleep 0.1
    tenths=$((tenths + 1))
  done
  echo "$((tenths / 10)).$((tenths % 10))"
}

# kill_job LAUNCHER_PID: SIGKILL to the launcher and every process of the job.
kill_job() {
  kill -KILL "$1" 2>/dev/null || true
  local pid _
  while read -r pid _; do kill -KILL "$pid" 2>/dev/null || true; done < <(job_pids)
}
