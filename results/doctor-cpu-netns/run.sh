#!/usr/bin/env bash
# `commscale doctor` on network-namespace nodes of this 2-core CPU machine (issue 22), with the test
# script tests/multinode/doctor_netns.sh (one rank per node, CPU backend, -n 5 -w 2):
#   1. rounds against N: a healthy run on 2, 3, 4, 5 and 8 nodes: the pair rounds' count, transfers and time;
#   2. spread: REPEATS more healthy runs on 4 nodes: every pair transfer's ratio to its peer reference
#      (the 75th percentile of the run's transfers), which --min-ratio on the CPU backend must pass;
#   3. the test case: 4 nodes, node-c's link throttled with tc, which doctor must name alone.
# Writes OUT/nodes-N/, OUT/spread-K/, OUT/slowed-4/ (doctor's text, JSON and JSON Lines of each run),
# OUT/summary.txt and OUT/spread.txt.
#
# usage: results/doctor-cpu-netns/run.sh COMMSCALE OUT [REPEATS]   (as root; about 5 minutes)
set -euo pipefail
commscale="$1"
out="$2"
repeats="${3:-5}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
test="$here/tests/multinode/doctor_netns.sh"
mkdir -p "$out"
: > "$out/summary.txt"
for nodes in 2 3 4 5 8; do
  "$test" "$commscale" "$out/nodes-$nodes" "$nodes" --measure | grep '^MEASURED' | tee -a "$out/summary.txt"
done
for ((k = 1; k <= repeats; k++)); do
  "$test" "$commscale" "$out/spread-$k" 4 --measure | grep '^MEASURED' | sed "s/^/spread-$k /" | tee -a "$out/summary.txt"
done
python3 - "$out" "$repeats" <<'EOF' | tee "$out/spread.txt"
import json, sys
out, repeats = sys.argv[1], int(sys.argv[2])
ratios = []
for k in range(1, repeats + 1):
    doc = json.load(open(f"{out}/spread-{k}/healthy.json"))
    ratios += [c["ratio"] for c in doc["checks"] if c["check"] == "pair" and c["ratio"] is not None]
ratios.sort()
print(f"{len(ratios)} healthy pair transfers in {repeats} runs of 4 nodes: ratio to the peer reference "
      f"min {ratios[0]:.3f}, median {ratios[len(ratios) // 2]:.3f}, max {ratios[-1]:.3f}")
print("all: " + " ".join(f"{r:.3f}" for r in ratios))
EOF
"$test" "$commscale" "$out/slowed-4" 4 | tail -1 | tee -a "$out/summary.txt"
