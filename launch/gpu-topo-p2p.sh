#!/usr/bin/env bash
# Discovers this GPU machine and measures its copy bandwidths and latencies with an already built
# commscale (issue 4, items 4 and 5): `commscale topo` (the matrix, the discovery as JSON, and the
# machine as a topology file, checked with `hw show`), nvidia-smi's own view beside it, and
# `commscale p2p` (JSON and CSV), plus the staged path (`p2p --no-p2p`) where there are 2 GPUs or
# more. Every command line is written to OUT/commands.txt exactly as run. Builds nothing.
#
# usage: launch/gpu-topo-p2p.sh COMMSCALE OUT [-- P2P_ARGS...]
#   COMMSCALE  the commscale executable (e.g. build/src/commscale)
#   OUT        the folder for the results (created)
#   P2P_ARGS   passed to both p2p runs, e.g. -- -b 1G -n 20
#
# Writes 8 files: commands.txt, topo.txt, topo.json, topology.json, p2p.txt, p2p.json, p2p.csv and
# p2p-nop2p.json (the staged run's text is appended to p2p.txt). Exits non-zero when a command failed
# (p2p exits 1 on any wrong byte), after running them all.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 COMMSCALE OUT [-- P2P_ARGS...]" >&2
  exit 2
fi
commscale="$1"
out="$2"
shift 2
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi
p2p_args=("$@")
if [ ! -x "$commscale" ]; then
  echo "gpu-topo-p2p.sh: $commscale is not an executable: build commscale first" >&2
  exit 2
fi
mkdir -p "$out"

commands="$out/commands.txt"
failed=0
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "# CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
} > "$commands"

# run LOG COMMAND...: records the command line (shell-quoted) in commands.txt and in LOG, appends the
# command's output and exit code to LOG.
run() {
  local log="$1"
  shift
  local line
  line="$(printf '%q ' "$@")"
  echo "${line% }" >> "$commands"
  echo "\$ ${line% }" >> "$log"
  local rc=0
  "$@" >> "$log" 2>&1 || rc=$?
  echo "# exit code $rc" >> "$log"
  echo "" >> "$log"
  if [ "$rc" -ne 0 ]; then failed=1; fi
}

topo_txt="$out/topo.txt"
p2p_txt="$out/p2p.txt"
: > "$topo_txt"
: > "$p2p_txt"

run "$topo_txt" "$commscale" topo --output "$out/topology.json" -J "$out/topo.json"
run "$topo_txt" "$commscale" hw show "$out/topology.json"
if command -v nvidia-smi > /dev/null; then
  run "$topo_txt" nvidia-smi topo -m
  run "$topo_txt" nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.max,pcie.link.width.max,driver_version --format=csv
  run "$topo_txt" nvidia-smi nvlink -s -i 0
fi

run "$p2p_txt" "$commscale" p2p -J "$out/p2p.json" --csv "$out/p2p.csv" "${p2p_args[@]}"
gpus="$(sed -n 's/^# commscale .* topo on .*: \([0-9][0-9]*\) GPUs\{0,1\};.*/\1/p' "$topo_txt" | head -n 1)"
if [ "${gpus:-0}" -ge 2 ]; then
  run "$p2p_txt" "$commscale" p2p --no-p2p --tests ce -J "$out/p2p-nop2p.json" "${p2p_args[@]}"
fi

cat "$p2p_txt"
echo "# commands: $commands"
if [ "$failed" -ne 0 ]; then
  echo "gpu-topo-p2p.sh: a command failed; see $topo_txt and $p2p_txt" >&2
  exit 1
fi
