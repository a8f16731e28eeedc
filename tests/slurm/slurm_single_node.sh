#!/usr/bin/env bash
# A real one-node Slurm cluster on this machine, for as long as the test runs: munged, slurmctld and
# slurmd from Debian's packages, configured in a temporary folder for this host (its real CPUs and
# memory, no cgroups, no systemd), then launch/slurm-single-node.sh submitted with sbatch on 2 tasks
# of the CPU backend under srun --mpi=pmix. Checks the job's output (the rank map) and its bench
# JSON (2 ranks, complete, no wrong value). The daemons are always stopped, whatever happens.
#
# usage: tests/slurm/slurm_single_node.sh COMMSCALE [WORK_DIR]
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, or Slurm, munge or PMIx not installed).
# The whole run takes about 15 s here; the job and the daemons' start are bounded (5 min, 1 min).
set -euo pipefail

# COMMSCALE_REQUIRE_SLURM=1 (tests/run.sh as root, i.e. CI) turns a skip into a failure.
skip() {
  if [ "${COMMSCALE_REQUIRE_SLURM:-0}" = 1 ]; then
    echo "FAIL: COMMSCALE_REQUIRE_SLURM=1 but the Slurm test cannot run: $*" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

if [ $# -lt 1 ]; then
  echo "usage: $0 COMMSCALE [WORK_DIR]" >&2
  exit 2
fi
commscale=$(realpath "$1")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ -x "$commscale" ] || fail "$commscale is not an executable"

[ "$(id -u)" = 0 ] || skip "starting slurmctld, slurmd and munged needs root (run tests/run.sh as root, as CI does)"
for tool in munged slurmctld slurmd sbatch srun scontrol; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip "$tool is not installed (launch/install-deps.sh test installs slurm-wlm, munge and libpmix-dev)"
done
srun_mpi="${COMMSCALE_SRUN_MPI:-pmix}"

work="${2:-}"
if [ -z "$work" ]; then work=$(mktemp -d /tmp/commscale-slurm.XXXXXX); fi
rm -rf "$work"
mkdir -p "$work/state" "$work/spool" "$work/munge" "$work/results"
chmod 0700 "$work/munge"
host=$(hostname -s)
mkdir -p "$work/spool/slurmd-$host"

pids=()
stop_daemons() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
show_logs() {
  local log
  for log in "$work"/*.log; do
    [ -f "$log" ] || continue
    echo "---- $log (last 30 lines)"
    tail -n 30 "$log"
  done
}
on_exit() {
  local rc=$?
  stop_daemons
  if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then show_logs; fi
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 1' INT TERM

# munge: a fresh key and a socket of our own, so a system munged (if any) is left alone.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$work/munge/munge.key"
munge_socket="$work/munge/munge.socket"
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$munge_socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/munged.seed" &
pids+=("$!")
for _ in $(seq 50); do [ -S "$munge_socket" ] && break; sleep 0.1; done
[ -S "$munge_socket" ] || fail "munged did not create its socket $munge_socket"

# Ports of our own, so that two runs (or a system Slurm) do not collide.
port=$((20000 + ($$ % 20000)))
# This node as slurmd itself measures it (CPUs, sockets, cores, threads, memory).
node_line=$(slurmd -C | head -n 1 | sed "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
cat > "$work/slurm.conf" <<EOF
ClusterName=commscale-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/slurmd-%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=$srun_mpi
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
$node_line State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF="$work/slurm.conf"
mpi_plugins=$(srun --mpi=list 2>&1 || true)
grep -q "$srun_mpi" <<< "$mpi_plugins" || skip "srun has no --mpi=$srun_mpi plugin (srun --mpi=list: $mpi_plugins)"

slurmctld -D -i -f "$SLURM_CONF" &
pids+=("$!")
slurmd -D -f "$SLURM_CONF" -N "$host" &
pids+=("$!")

# Up when the node is idle (bounded: 60 s).
state=""
for _ in $(seq 120); do
  state=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || fail "node $host is not idle after 60 s (state: '${state:-no answer}')"
echo "slurm: node $host idle; srun --mpi=list: $(tr '\n' ' ' <<< "$mpi_plugins")"

# wait_for_job JOB OUTPUT: waits for JOB to end (bounded: 5 min), shows its output, prints its state.
wait_for_job() {
  local state=""
  for _ in $(seq 300); do
    state=$(scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL) break ;; esac
    sleep 1
  done
  {
    echo "---- job $1: $state; its output ($2):"
    cat "$2" 2>/dev/null || true
    echo "----"
  } >&2
  echo "$state"
}

# The job: launch/slurm-single-node.sh on 2 tasks of one node, CPU backend.
results="$work/results"
job=$(COMMSCALE_ROOT="$root" COMMSCALE_BIN="$commscale" COMMSCALE_RESULTS="$results" \
  COMMSCALE_SRUN_MPI="$srun_mpi" \
  sbatch --parsable --nodes=1 --ntasks-per-node=2 --overcommit --time=5 --chdir="$work" \
  --output="$work/job-%j.out" "$root/launch/slurm-single-node.sh" \
  bench all_reduce --backend cpu -b 8 -e 64K -f 8 -n 5 -w 2)
echo "slurm: submitted job $job"

out="$work/job-$job.out"
job_state=$(wait_for_job "$job" "$out")
[ "$job_state" = COMPLETED ] || fail "job $job ended as '${job_state:-unknown}' (expected COMPLETED)"

# The rank map: both ranks on this host, and the job's layout line from the script.
grep -q "^# job $job: 1 node(s) \[$host\], 2 tasks" "$out" || fail "job output lacks the job layout line"
for rank in 0 1; do
  grep -Eq "^#  Rank +$rank Group +0 Pid +[0-9]+ on +$host host memory" "$out" ||
    fail "job output lacks rank $rank in the rank map"
done
grep -q "Out of bounds values : 0 OK" "$out" || fail "job output lacks 'Out of bounds values : 0 OK'"

# The bench JSON: complete, 2 ranks with their local ranks from Slurm, no wrong value.
json="$results/bench.json"
[ -s "$json" ] || fail "no bench JSON at $json"
cmake -DJSON="$json" -DRANKS=2 -DHOSTS="$host" -DEXPECT_ENV="SLURM_JOB_ID=$job;SLURM_NTASKS=2" \
  -P "$root/tests/slurm/check_bench_json.cmake" || fail "bench JSON $json: see above"

# The sweep: bench, then train for each plan of a list; the third does not divide the job's 2 tasks,
# and plan rejects the fourth (a micro-batch of 3 does not divide a global batch of 4).
printf '%s\n' "# plans" "--tp 2 --global-batch 4" "--pp 2 --global-batch 4  # dp 1" "--tp 3" \
  "--tp 2 --global-batch 4 --micro-batch 3" > "$work/plans"
sweep_results="$work/sweep"
sweep=$(COMMSCALE_ROOT="$root" COMMSCALE_BIN="$commscale" COMMSCALE_RESULTS="$sweep_results" \
  COMMSCALE_SRUN_MPI="$srun_mpi" COMMSCALE_BACKEND=cpu COMMSCALE_BENCH="all_reduce -b 8 -e 1K -f 4 -n 2" \
  COMMSCALE_TRAIN="--steps 2 --warmup 1" \
  sbatch --parsable --nodes=1 --ntasks-per-node=2 --overcommit --time=5 --chdir="$work" \
  --output="$work/job-%j.out" "$root/launch/slurm-sweep.sh" "$work/plans" --model tiny)
echo "slurm: submitted sweep job $sweep"
sweep_state=$(wait_for_job "$sweep" "$work/job-$sweep.out")
[ "$sweep_state" = COMPLETED ] || fail "sweep job $sweep ended as '${sweep_state:-unknown}' (expected COMPLETED)"
summary="$sweep_results/summary.tsv"
grep -Pq '^bench\tall_reduce .*\tok$' "$summary" || fail "$summary: bench did not run"
grep -Pq '^train-1\t--tp 2 --global-batch 4 --dp 1\tok$' "$summary" || fail "$summary: plan 1 did not run"
grep -Pq '^train-2\t--pp 2 --global-batch 4 --dp 1\tok$' "$summary" || fail "$summary: plan 2 did not run"
grep -Pq "^train-3\t--tp 3\ttp x pp = 3 does not divide the job's 2 tasks$" "$summary" ||
  fail "$summary: plan 3 was not refused"
grep -Pq '^train-4\t--tp 2 --global-batch 4 --micro-batch 3 --dp 1\tplan rejected it' "$summary" ||
  fail "$summary: plan 4 was not rejected"
for run in bench train-1 train-2; do [ -s "$sweep_results/$run.json" ] || fail "no $run.json from the sweep"; done

echo "PASS: Slurm jobs $job (bench on 2 tasks) and $sweep (sweep) ran under srun --mpi=$srun_mpi"
