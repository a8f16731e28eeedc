#!/usr/bin/env bash
# `commscale doctor` on N "nodes" of this machine (default 4): network and UTS namespaces, each with a
# veth pair to a bridge in a "switch" namespace, one rank per node on the CPU backend, Open MPI
# starting its daemons through the launch agent (netns_agent.sh). Two runs:
#   healthy: every link at full speed: doctor must pass (exit 0) and name no suspect;
#   slowed:  node-c's link throttled both ways with tc (a token bucket of RATE on both ends of its veth
#            pair): doctor must exit 6 and name node-c, and nothing else, as the one suspect.
# With --measure it runs only the healthy case and prints the pair rounds' count and times (for the
# "Time" of src/bench/DOCTOR.md: rounds grow as log N), and passes whatever the verdict.
#
# usage: tests/multinode/doctor_netns.sh COMMSCALE WORK_DIR [NODES] [--measure]
# Exit codes: 0 passed, 1 failed, 77 skipped (not root, no ip/tc/unshare, or namespaces not allowed).
set -euo pipefail

# shellcheck source=netns_lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/netns_lib.sh"
if [ $# -lt 2 ]; then
  echo "usage: $0 COMMSCALE WORK_DIR [NODES] [--measure]" >&2
  exit 2
fi
nodes="${3:-4}"
measure="${4:-}"
case "$nodes" in '' | *[!0-9]* | 0 | 1) fail "NODES must be 2 to 8" ;; esac
[ "$nodes" -le 8 ] || fail "NODES must be 2 to 8"
netns_setup "$1" "$2" ip tc unshare python3

prefix="cd$$"
export COMMSCALE_NETNS_PREFIX="$prefix-"
subnet="10.232.$(($$ % 250)).0/24"
letters=(a b c d e f g h)
names=()
for ((i = 0; i < nodes; i++)); do names+=("node-${letters[$i]}"); done
cleanup() {
  for n in "${names[@]}"; do ip netns del "$prefix-$n" 2>/dev/null || true; done
  ip netns del "$prefix-switch" 2>/dev/null || true
}
trap cleanup EXIT
if ! ip netns add "$prefix-switch" 2>"$work/netns.err"; then
  skip "cannot create a network namespace here: $(cat "$work/netns.err")"
fi
ip -n "$prefix-switch" link add br0 type bridge
ip -n "$prefix-switch" link set br0 up
for ((i = 0; i < nodes; i++)); do
  n="${names[$i]}"
  ns="$prefix-$n"
  ip netns add "$ns"
  # node side "<prefix><letter>", switch side "<prefix><letter>s" (veth names: 15 characters at most)
  ip link add "$prefix${letters[$i]}" type veth peer name "$prefix${letters[$i]}s"
  ip link set "$prefix${letters[$i]}" netns "$ns"
  ip link set "$prefix${letters[$i]}s" netns "$prefix-switch"
  ip -n "$prefix-switch" link set "$prefix${letters[$i]}s" master br0 up
  ip -n "$ns" addr add "${subnet%.0/24}.$((i + 1))/24" dev "$prefix${letters[$i]}"
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "$prefix${letters[$i]}" up
done

hosts=$(IFS=,; echo "${names[*]}")
# shellcheck disable=SC2054 # the commas separate host names
mpi_args=(--hosts "$hosts" --per-node 1 --commscale "$commscale"
  --mpi-arg --mca --mpi-arg plm_rsh_agent --mpi-arg "$here/netns_agent.sh"
  --mpi-arg --mca --mpi-arg oob_tcp_if_include --mpi-arg "$subnet"
  --mpi-arg --mca --mpi-arg btl_tcp_if_include --mpi-arg "$subnet")
# The CPU backend's defaults (1 MiB collectives, 4 MiB pair transfers, --min-ratio 0.15), with fewer
# iterations to keep a run to seconds on two shared cores.
doctor_args=(doctor --backend cpu -n 5 -w 2)

# doctor NAME: runs doctor on the nodes as node-a, its text in NAME.txt, JSON in NAME.json; sets rc.
doctor() {
  local name="$1"
  rc=0
  # shellcheck disable=SC2016 # expanded by the inner bash
  ip netns exec "$prefix-node-a" unshare --uts bash -c 'hostname node-a && exec "$@"' node-a \
    timeout 300 "$root/launch/mpirun.sh" "${mpi_args[@]}" "${doctor_args[@]}" -J "$work/$name.json" \
    > "$work/$name.txt" 2>&1 || rc=$?
  cat "$work/$name.txt"
}

# suspects NAME: the suspects of NAME.json, one "kind name" per line.
suspects() {
  python3 -c 'import json,sys
for s in json.load(open(sys.argv[1]))["suspects"]: print(s["kind"], s["name"])' "$work/$1.json"
}

echo "== healthy: $nodes nodes, every link at full speed"
doctor healthy
[ "$rc" = 0 ] || [ -n "$measure" ] || fail "the healthy run exited $rc, not 0 (healthy.txt)"
python3 - "$work/healthy.json" "$nodes" <<'EOF' || fail "healthy.json: see above"
import json, math, sys
doc = json.load(open(sys.argv[1]))
nodes = int(sys.argv[2])
rounds = math.ceil(math.log2(nodes))
assert doc["kind"] == "commscale-doctor" and doc["complete"], "not a complete doctor file"
assert doc["config"]["rounds"] == rounds, f"rounds {doc['config']['rounds']}, expected ceil(log2 {nodes}) = {rounds}"
pairs = [c for c in doc["checks"] if c["check"] == "pair"]
# Every round pairs every node it can, once each way.
expected = sum(2 * sum(1 for i in range(nodes) if i < (i ^ (1 << k)) < nodes) for k in range(rounds))
assert len(pairs) == expected, f"{len(pairs)} pair transfers, expected {expected}"
phases = {p["phase"]: p["seconds"] for p in doc["phases"]}
print(f"MEASURED nodes={nodes} rounds={rounds} transfers={len(pairs)} total_s={doc['total_seconds']:.2f} "
      + " ".join(f"{k}_s={v:.2f}" for k, v in phases.items())
      + " round_s=" + ",".join(f"{t:.2f}" for t in doc["round_seconds"]))
EOF
if [ -n "$measure" ]; then exit 0; fi
[ -z "$(suspects healthy)" ] || fail "the healthy run named suspects: $(suspects healthy)"
grep -q "## verdict: PASS" "$work/healthy.txt" || fail "no PASS verdict in healthy.txt"

slow=2  # node-c
rate="${COMMSCALE_DOCTOR_TEST_RATE:-100mbit}"
echo "== slowed: ${names[$slow]}'s link at $rate both ways (tc tbf on both ends of its veth pair)"
ip netns exec "$prefix-${names[$slow]}" tc qdisc add dev "$prefix${letters[$slow]}" root tbf rate "$rate" burst 32kb latency 400ms
ip netns exec "$prefix-switch" tc qdisc add dev "$prefix${letters[$slow]}s" root tbf rate "$rate" burst 32kb latency 400ms
doctor slowed
[ "$rc" = 6 ] || fail "the slowed run exited $rc, not 6 (slowed.txt)"
found=$(suspects slowed)
[ "$found" = "node ${names[$slow]} (rank $slow)" ] || fail "suspects: '$found', expected exactly 'node ${names[$slow]} (rank $slow)'"
grep -q "^node  ${names[$slow]} (rank $slow): its link, both directions" "$work/slowed.txt" ||
  fail "slowed.txt does not blame ${names[$slow]}'s link in both directions"
echo "PASS: $nodes namespace nodes: the healthy run passes, and the slowed one names ${names[$slow]} alone"
