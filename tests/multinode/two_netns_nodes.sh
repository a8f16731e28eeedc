#!/usr/bin/env bash
# Two "nodes" on this machine: two network namespaces joined by a veth pair, each with a host name of
# its own (UTS namespace), and Open MPI starting its daemon on the second through a launch agent
# (netns_agent.sh) where it would use ssh. Ranks on different nodes talk over TCP on the veth pair,
# ranks on one node over shared memory, and MPI's node grouping (MPI_COMM_TYPE_SHARED, the local
# ranks Open MPI sets) is the real one. Runs launch/mpirun.sh with --hosts node-a,node-b and checks
# the rank -> host map, the local ranks per node and the node count, for bench (on Open MPI's default
# PML and on UCX) and for train.
#
# usage: tests/multinode/two_netns_nodes.sh COMMSCALE WORK_DIR
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, no ip/unshare, or namespaces not allowed).
set -euo pipefail

# shellcheck source=netns_lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/netns_lib.sh"
if [ $# -lt 2 ]; then
  echo "usage: $0 COMMSCALE WORK_DIR" >&2
  exit 2
fi
netns_setup "$1" "$2" ip unshare

# Names of our own (a veth name has at most 15 characters), so that two runs do not collide.
prefix="cs$$"
export COMMSCALE_NETNS_PREFIX="$prefix-"
subnet="10.231.$(($$ % 250)).0/24"
address() { echo "${subnet%.0/24}.$1"; }
cleanup() {
  ip netns del "${prefix}-node-a" 2>/dev/null || true
  ip netns del "${prefix}-node-b" 2>/dev/null || true
}
trap cleanup EXIT
if ! ip netns add "${prefix}-node-a" 2>"$work/netns.err"; then
  skip "cannot create a network namespace here: $(cat "$work/netns.err")"
fi
ip netns add "${prefix}-node-b"
ip link add "${prefix}a" type veth peer name "${prefix}b"
for n in a b; do
  ns="${prefix}-node-$n"
  ip link set "${prefix}$n" netns "$ns"
  ip -n "$ns" addr add "$(address "$([ "$n" = a ] && echo 1 || echo 2)")/24" dev "${prefix}$n"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "${prefix}$n" up
done

# on_node_a COMMAND...: runs COMMAND as node-a, where mpirun runs.
on_node_a() {
  # shellcheck disable=SC2016 # expanded by the inner bash
  ip netns exec "${prefix}-node-a" unshare --uts bash -c 'hostname node-a && exec "$@"' node-a "$@"
}
# Open MPI: daemons through the agent, its own traffic and TCP messages on the veth pair only.
# shellcheck disable=SC2054 # the commas separate host names
mpi_args=(--hosts node-a,node-b --per-node 2 --commscale "$commscale"
  --mpi-arg --mca --mpi-arg plm_rsh_agent --mpi-arg "$here/netns_agent.sh"
  --mpi-arg --mca --mpi-arg oob_tcp_if_include --mpi-arg "$subnet"
  --mpi-arg --mca --mpi-arg btl_tcp_if_include --mpi-arg "$subnet")

echo "== bench on 2 nodes x 2 ranks"
on_node_a timeout 300 "$root/launch/mpirun.sh" "${mpi_args[@]}" \
  bench all_reduce --backend cpu -b 8 -e 64K -f 8 -n 3 -w 1 -J "$work/bench.json" | tee "$work/bench.txt" ||
  fail "bench on two nodes failed"
grep -q "bench: 4 ranks on 2 hosts" "$work/bench.txt" || fail "bench did not see 4 ranks on 2 hosts"
for r in "0 node-a" "1 node-a" "2 node-b" "3 node-b"; do
  read -r rank host <<< "$r"
  grep -Eq "^#  Rank +$rank Group +0 Pid +[0-9]+ on +$host host memory" "$work/bench.txt" ||
    fail "the rank map does not put rank $rank on $host"
done
cmake -DJSON="$work/bench.json" -DRANKS=4 "-DHOSTS=node-a;node-b" -P "$root/tests/slurm/check_bench_json.cmake" ||
  fail "bench JSON: see above"

echo "== bench --split consecutive:2: one group per node, at once"
on_node_a timeout 300 "$root/launch/mpirun.sh" "${mpi_args[@]}" \
  bench all_reduce --backend cpu -b 8 -e 4K -f 8 -n 3 -w 1 --split consecutive:2 | tee "$work/split.txt" ||
  fail "bench --split on two nodes failed"
grep -Eq "^#  Rank +2 Group +1 Pid +[0-9]+ on +node-b" "$work/split.txt" || fail "rank 2 is not in group 1 on node-b"

echo "== bench on UCX (--pml ucx, TCP between the nodes, shared memory within each)"
on_node_a env UCX_TLS=tcp,sm,self timeout 300 "$root/launch/mpirun.sh" --pml ucx "${mpi_args[@]}" \
  bench all_reduce --backend cpu -b 8 -e 4K -f 8 -n 3 -w 1 -J "$work/ucx.json" | tee "$work/ucx.txt" ||
  fail "bench on UCX on two nodes failed"
cmake -DJSON="$work/ucx.json" -DRANKS=4 "-DHOSTS=node-a;node-b" "-DEXPECT_TRANSPORT=pml=ucx;UCX_TLS=tcp,sm,self" \
  -P "$root/tests/slurm/check_bench_json.cmake" || fail "UCX bench JSON: see above"

echo "== train, tensor parallel within each node, data parallel across them"
on_node_a timeout 300 "$root/launch/mpirun.sh" "${mpi_args[@]}" \
  train --backend cpu --model tiny --tp 2 --dp 2 --global-batch 4 --steps 1 --warmup 0 -J "$work/train.json" |
  tee "$work/train.txt" || fail "train on two nodes failed"
grep -q "train: 4 ranks on 2 hosts" "$work/train.txt" || fail "train did not see 4 ranks on 2 hosts"
[ -s "$work/train.json" ] || fail "no train JSON"
echo "PASS: 4 ranks on two namespace nodes: rank map, local ranks and node grouping as on two hosts"
