#!/bin/bash
# usage: results/collective-latency/predict-cases.sh COMMSCALE OUTDIR
# The predict runs compared before and after the collective model's change (NOTES.md).
set -u
B=$1
O=$2
mkdir -p "$O"
run() {
  local name=$1
  shift
  "$B" predict "$@" >"$O/$name.txt" 2>&1
  echo "rc $?" >>"$O/$name.txt"
}
run a100-gpt3-1.3b-dp8 --cluster hgx-a100 --model gpt3-1.3b --dp 8 --zero 1 --micro-batch 2 --global-batch 64
run a100-llama2-7b-tp2-dp4 --cluster hgx-a100 --model llama2-7b --tp 2 --dp 4 --sp --zero 1 --global-batch 64
run h100x2-llama2-7b-tp16 --cluster hgx-h100 --model llama2-7b --tp 16 --global-batch 8
run h100x4-gpt3-13b-tp8pp4 --cluster hgx-h100 --model gpt3-13b --tp 8 --pp 4 --global-batch 32
run h200x2-small-tp2 --cluster h200x2 --model gpt3-1.3b --hidden 2048 --heads 16 --seq 1024 --layers 4 --vocab 0 --tp 2
run h200x2-nop2p-dp2 --cluster h200x2-nop2p --model gpt3-1.3b --dp 2 --global-batch 8
run rtx4090-gpt3-1.3b-dp8 --cluster rtx4090-8x-pcie --model gpt3-1.3b --dp 8 --zero 1 --global-batch 64
run rtx3090-llama2-7b-tp4 --cluster rtx3090-4x-nvlink-pairs --model llama2-7b --tp 4 --sp --recompute full --global-batch 64
