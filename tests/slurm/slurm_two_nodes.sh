#!/usr/bin/env bash
# A real two-node Slurm cluster on this machine: two network namespaces joined by a veth pair, each
# with a host name (UTS namespace) and a /tmp (mount namespace) of its own, a slurmd in each and
# slurmctld beside the first. launch/slurm-multi-node.sh is submitted on 2 nodes x 2 tasks (CPU
# backend) under srun --mpi=pmix: bench across the job and within each node (--split), as on real
# nodes. Checks the rank -> node map, the local ranks per node and the JSON of every run.
#
# Namespaces are entered with nsenter --net (not ip netns exec, which remounts /sys and so hides the
# cgroup file systems slurmd insists on finding). Each node gets its own /tmp because Slurm's PMIx
# plugin makes /tmp/spmix_appdir_UID_JOB.STEP on every node, which collide on one file system.
#
# usage: tests/slurm/slurm_two_nodes.sh COMMSCALE WORK_DIR   (WORK_DIR outside /tmp)
# Exit codes: 0 passed, 1 failed, 77 skipped (no root, packages or namespaces).
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 COMMSCALE WORK_DIR" >&2
  exit 2
fi
# shellcheck source=slurm_lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/slurm_lib.sh"
slurm_setup "$1" "$(realpath -m "$2")"
# Each node replaces /tmp by its own, so what the job reads and writes must live elsewhere.
for path in "$work" "$commscale" "$root"; do
  case "$path/" in /tmp/*)
    echo "SKIP: $path is under /tmp, which each namespace node replaces by its own (build outside /tmp)"
    exit 77 ;;
  esac
done
for tool in ip nsenter unshare; do command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"; done

ns_prefix="cs$$"
subnet="10.232.$(($$ % 250))"
delete_namespaces() {
  ip netns del "$ns_prefix-node-a" 2>/dev/null || true
  ip netns del "$ns_prefix-node-b" 2>/dev/null || true
}
# shellcheck disable=SC2034 # read by slurm_on_exit
slurm_cleanup_hook=delete_namespaces
if ! ip netns add "$ns_prefix-node-a" 2>"$work/netns.err"; then
  # Namespaces are a property of the machine, not a package: their absence skips even in CI.
  echo "SKIP: cannot create a network namespace here: $(cat "$work/netns.err")"
  exit 77
fi
ip netns add "$ns_prefix-node-b"
ip link add "${ns_prefix}a" type veth peer name "${ns_prefix}b"
for n in a b; do
  ip link set "${ns_prefix}$n" netns "$ns_prefix-node-$n"
  ip -n "$ns_prefix-node-$n" link set lo up
  ip -n "$ns_prefix-node-$n" link set "${ns_prefix}$n" up
done
ip -n "$ns_prefix-node-a" addr add "$subnet.1/24" dev "${ns_prefix}a"
ip -n "$ns_prefix-node-b" addr add "$subnet.2/24" dev "${ns_prefix}b"

# on NODE COMMAND... &: COMMAND in NODE's network, with its host name and its own /tmp, in the
# background: the process execs itself into nsenter, unshare, bash and COMMAND in turn, so that the
# daemon keeps the id $! the clean-up kills.
on() {
  local node="$1"
  shift
  # shellcheck disable=SC2016 # expanded by the inner bash
  exec nsenter --net="/run/netns/$ns_prefix-$node" unshare --uts --mount \
    bash -c 'hostname "$1" && mount -t tmpfs tmpfs /tmp && shift && exec "$@"' on "$node" "$@"
}
# Clients (sbatch, scontrol) need only the first node's network.
client=(nsenter --net="/run/netns/$ns_prefix-node-a")

slurm_start_munge
slurm_write_conf node-a "$subnet.1" "node-a:$subnet.1" "node-b:$subnet.2"
on node-a slurmctld -D -i -f "$SLURM_CONF" &
daemon_pids+=("$!")
for n in a b; do
  on "node-$n" slurmd -D -f "$SLURM_CONF" -N "node-$n" &
  daemon_pids+=("$!")
done
slurm_wait_idle "${client[@]}" -- node-a node-b

results="$work/results"
mkdir -p "$results"
job=$("${client[@]}" env COMMSCALE_ROOT="$root" COMMSCALE_BIN="$commscale" COMMSCALE_RESULTS="$results" \
  COMMSCALE_SRUN_MPI="$srun_mpi" COMMSCALE_BACKEND=cpu COMMSCALE_BENCH_SIZES="-b 8 -e 4K -f 8 -n 3 -w 1" \
  sbatch --parsable --nodes=2 --ntasks-per-node=2 --gpus-per-node=0 --overcommit --time=5 \
  --chdir="$work" --output="$work/job-%j.out" "$root/launch/slurm-multi-node.sh")
echo "slurm: submitted job $job"
out="$work/job-$job.out"
state=$(slurm_wait_job "${client[@]}" -- "$job" "$out")
[ "$state" = COMPLETED ] || fail "job $job ended as '${state:-unknown}' (expected COMPLETED)"

grep -q "^# job $job: 2 node(s) \[node-a,node-b\], 4 tasks (2 per node)" "$out" ||
  fail "job output lacks the job layout line"
for node in node-a node-b; do
  grep -q "^# $node: " "$results/nodes.txt" || fail "nodes.txt does not list $node"
done
for collective in all_reduce all_gather; do
  for scope in job node; do
    text="$results/$collective-$scope.txt"
    grep -q "bench: 4 ranks on 2 hosts" "$text" || fail "$text: not 4 ranks on 2 hosts"
    for r in "0 node-a" "1 node-a" "2 node-b" "3 node-b"; do
      read -r rank host <<< "$r"
      group=0
      if [ "$scope" = node ] && [ "$host" = node-b ]; then group=1; fi
      grep -Eq "^#  Rank +$rank Group +$group Pid +[0-9]+ on +$host host memory" "$text" ||
        fail "$text: the rank map does not put rank $rank in group $group on $host"
    done
    cmake -DJSON="$results/$collective-$scope.json" -DRANKS=4 "-DHOSTS=node-a;node-b" \
      "-DEXPECT_ENV=SLURM_JOB_ID=$job;SLURM_NNODES=2" -P "$root/tests/slurm/check_bench_json.cmake" ||
      fail "$collective-$scope.json: see above"
  done
done

# launch/slurm-doctor.sh on the same two nodes: the job's exit code is doctor's verdict (0 here). The
# CPU backend's default sizes (4 MiB pair transfers) and --min-ratio: with 64 KiB transfers among 4
# ranks on 2 shared cores one rail's pair ran 40 times slower than the other's, scheduling alone.
doctor_results="$work/doctor"
mkdir -p "$doctor_results"
job=$("${client[@]}" env COMMSCALE_ROOT="$root" COMMSCALE_BIN="$commscale" COMMSCALE_RESULTS="$doctor_results" \
  COMMSCALE_SRUN_MPI="$srun_mpi" COMMSCALE_BACKEND=cpu \
  sbatch --parsable --nodes=2 --ntasks-per-node=2 --gpus-per-node=0 --overcommit --time=5 \
  --chdir="$work" --output="$work/job-%j.out" "$root/launch/slurm-doctor.sh" \
  -n 5 -w 2)
echo "slurm: submitted doctor job $job"
state=$(slurm_wait_job "${client[@]}" -- "$job" "$work/job-$job.out")
[ "$state" = COMPLETED ] || fail "doctor job $job ended as '${state:-unknown}' (expected COMPLETED, exit 0)"
grep -q "doctor: 4 ranks on 2 hosts, backend cpu" "$doctor_results/doctor.txt" || fail "doctor.txt: not 4 ranks on 2 hosts"
grep -q "^# pair rounds: 2 nodes, 1 round" "$doctor_results/doctor.txt" || fail "doctor.txt: no pair round of 2 nodes"
grep -q "^## verdict: PASS" "$doctor_results/doctor.txt" || fail "doctor.txt: no PASS verdict"
grep -q '"kind": "commscale-doctor"' "$doctor_results/doctor.json" || fail "no doctor.json"
grep -q "^# doctor: every check passed (exit 0)" "$work/job-$job.out" || fail "the job output does not give doctor's exit"
echo "PASS: Slurm job $job ran on 2 nodes x 2 tasks under srun --mpi=$srun_mpi, and slurm-doctor.sh passed"
