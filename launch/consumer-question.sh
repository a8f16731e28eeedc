#!/usr/bin/env bash
# A100s or consumer cards? The README's answer, with commscale's own numbers (no GPU, no MPI needed):
#   compare-gpt3-1.3b.*  a model every box fits: 8 x A100 against 8 x RTX 4090 and 8 x RTX 5090 (with and
#                        without a P2P driver), 1 x A100 against 6 x RTX 3090 and 4 x 3090 in NVLink pairs;
#   compare-llama2-7b.*  the same clusters for Llama 2 7B, where 24 and 32 GB cards need memory saving;
#   compare-mixtral-8x7b.*, compare-deepseek-v2-lite.*  mixture-of-experts models on the 8-GPU boxes, EP plans;
#   compare-llama2-7b-fp8.*, compare-deepseek-v2-lite-fp8.*  the same with FP8 (delayed scaling) where the GPU
#                        has FP8 tensor cores (RTX 4090, RTX 5090, H100): the A100 trains in bf16, a note says so;
#   tp-on-pcie.md        tensor parallelism over two GPUs against one GPU, by model size: where TP on PCIe
#                        stops paying for its all-reduces.
# Prices are the catalog's on-demand rental rates (compare's default cost basis).
#
# usage: launch/consumer-question.sh [--commscale PATH] [--out DIR]
#   --commscale PATH   the executable (COMMSCALE_BIN; default build/src/commscale of this repository)
#   --out DIR          where to write (COMMSCALE_RESULTS; default results/consumer-question)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commscale="${COMMSCALE_BIN:-$root/build/src/commscale}"
out="${COMMSCALE_RESULTS:-$root/results/consumer-question}"
fail() {
  echo "consumer-question.sh: $*" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --commscale) [ $# -ge 2 ] || fail "--commscale needs a value"; commscale="$2"; shift 2 ;;
    --out) [ $# -ge 2 ] || fail "--out needs a value"; out="$2"; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) fail "unknown argument \"$1\" (see --help)" ;;
  esac
done
[ -x "$commscale" ] || fail "no executable at $commscale (build it, or give --commscale)"
mkdir -p "$out"
: >"$out/commands.txt"
# commscale, where exit status 1 (a plan or a cluster that does not fit) is an answer, not a failure.
cs() { "$commscale" "$@" || [ $? -eq 1 ]; }
run() {  # run OUTPUT_BASE ARGS...: the command's text and JSON, and its line in commands.txt
  local base="$1"
  shift
  echo "commscale $*" >>"$out/commands.txt"
  cs "$@" >"$out/$base.txt"
  cs "$@" --json >"$out/$base.json"
}

# Global batch 96 splits over 1, 4, 6 and 8 GPUs alike, so that no box idles a GPU for the batch's sake.
clusters=hgx-a100,rtx4090-8x-pcie,rtx4090-8x-pcie-p2p,rtx5090-8x-pcie,rtx5090-8x-pcie-p2p
clusters+=,hgx-a100:1,rtx3090-6x-pcie,rtx3090-4x-nvlink-pairs
for model in gpt3-1.3b llama2-7b; do
  run "compare-$model" compare --model "$model" --global-batch 96 --clusters "$clusters"
done

# Mixture of experts on the 8-GPU boxes, with expert-parallel plans (global batch 64): Mixtral 8x7B, which no
# consumer box holds, and DeepSeek-V2-Lite(-like), which they do with 8-bit optimizer states.
moe_clusters=hgx-a100,rtx4090-8x-pcie,rtx4090-8x-pcie-p2p,rtx5090-8x-pcie,rtx5090-8x-pcie-p2p
for model in mixtral-8x7b deepseek-v2-lite; do
  run "compare-$model" compare --model "$model" --global-batch 64 --clusters "$moe_clusters"
done

# FP8 where the hardware has it: the A100 node in bf16 against the consumer boxes and an H100 node in FP8.
fp8_clusters=hgx-a100,hgx-h100,rtx4090-8x-pcie,rtx4090-8x-pcie-p2p,rtx5090-8x-pcie,rtx5090-8x-pcie-p2p
run compare-llama2-7b-fp8 compare --model llama2-7b --global-batch 96 --clusters "$fp8_clusters" --fp8 delayed
run compare-deepseek-v2-lite-fp8 compare --model deepseek-v2-lite --global-batch 64 --clusters "$fp8_clusters" \
  --fp8 delayed

# TP 2 over a pair of GPUs against one GPU, same plan otherwise (micro-batch 4, full recompute, ZeRO 1).
tp_table="$out/tp-on-pcie.md"
{
  echo "| cluster | model | 1 GPU tokens/s | TP 2 tokens/s | TP 2 / 1 GPU | fits (1 GPU, TP 2) |"
  echo "|---|---|---|---|---|---|"
} >"$tp_table"
plan=(--global-batch 16 --micro-batch 4 --recompute full --zero 1)
for cluster in rtx4090-8x-pcie rtx4090-8x-pcie-p2p rtx3090-4x-nvlink-pairs; do
  for model in gpt3-125m gpt3-350m gpt3-1.3b gpt3-2.7b; do
    row=("$cluster" "$model")
    for tp in 1 2; do
      echo "commscale predict --cluster $cluster --model $model --tp $tp ${plan[*]} --json" >>"$out/commands.txt"
      row+=("$(cs predict --cluster "$cluster" --model "$model" --tp "$tp" "${plan[@]}" --json |
        python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["summary"]["tokens_per_s"], d["fit"]["fits"])')")
    done
    python3 - "${row[@]}" >>"$tp_table" <<'EOF'
import sys
cluster, model, one, two = sys.argv[1:]
(one_tps, one_fits), (two_tps, two_fits) = one.split(), two.split()
fits = lambda f: "yes" if f == "True" else "no"
print(f"| {cluster} | {model} | {float(one_tps):.0f} | {float(two_tps):.0f} | {float(two_tps) / float(one_tps):.2f} "
      f"| {fits(one_fits)}, {fits(two_fits)} |")
EOF
  done
done
"$commscale" --version >"$out/version.txt" 2>&1 || true
echo "consumer-question.sh: wrote $out"
