#!/usr/bin/env bash
# A real one-node Slurm cluster on this machine, for as long as the test runs: munged, slurmctld and
# slurmd from Debian's packages, configured in a temporary folder for this host (its real CPUs and
# memory, no cgroups, no systemd), then launch/slurm-single-node.sh submitted with sbatch on 2 tasks
# of the CPU backend under srun --mpi=pmix. Checks the job's output (the rank map) and its bench
# JSON (2 ranks, complete, no wrong value). The daemons are always stopped, whatever happens.
#
# usage: tests/slurm/slurm_single_node.sh COMMSCALE [WORK_DIR]
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, or Slurm, munge or PMIx not installed).
# Two jobs (bench, then the sweep): 15-50 s here; each job and the daemons' start are bounded (5 min, 1 min).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 COMMSCALE [WORK_DIR]" >&2
  exit 2
fi
# shellcheck source=slurm_lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/slurm_lib.sh"
slurm_setup "$1" "${2:-$(mktemp -d /tmp/commscale-slurm.XXXXXX)}"
host=$(hostname -s)
slurm_start_munge
slurm_write_conf "$host" 127.0.0.1 "$host:127.0.0.1"
slurmctld -D -i -f "$SLURM_CONF" &
daemon_pids+=("$!")
slurmd -D -f "$SLURM_CONF" -N "$host" &
daemon_pids+=("$!")
slurm_wait_idle -- "$host"

# The job: launch/slurm-single-node.sh on 2 tasks of one node, CPU backend.
results="$work/results"
mkdir -p "$results"
job=$(COMMSCALE_ROOT="$root" COMMSCALE_BIN="$commscale" COMMSCALE_RESULTS="$results" \
  COMMSCALE_SRUN_MPI="$srun_mpi" \
  sbatch --parsable --nodes=1 --ntasks-per-node=2 --overcommit --time=5 --chdir="$work" \
  --output="$work/job-%j.out" "$root/launch/slurm-single-node.sh" \
  bench all_reduce --backend cpu -b 8 -e 64K -f 8 -n 5 -w 2)
echo "slurm: submitted job $job"

out="$work/job-$job.out"
job_state=$(slurm_wait_job -- "$job" "$out")
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
cmake -DJSON="$json" -DRANKS=2 -DHOSTS="$host" -DEXPECT_ENV="SLURM_JOB_ID=$job;SLURM_NTASKS=2;SLURM_LOCALID=0" \
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
sweep_state=$(slurm_wait_job -- "$sweep" "$work/job-$sweep.out")
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
