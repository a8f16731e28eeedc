#!/usr/bin/env bash
# launch/gpu-train-matrix.sh's command lines (--dry-run, nothing started): which plans, transports,
# flash-attention and PyTorch points a choice of options makes; its refusals (exit 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
matrix="$root/launch/gpu-train-matrix.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# lines ARGS...: the commands the matrix lists for ARGS, one per line.
lines() { "$matrix" --commscale /opt/commscale --out "$work/out" --dry-run "$@"; }
count() {  # count PATTERN WANT ARGS...
  local pattern=$1 want=$2
  shift 2
  local got
  got=$(lines "$@" | grep -c -- "$pattern" || true)
  [ "$got" = "$want" ] || fail "$want lines matching '$pattern' expected for '$*', got $got"
}

# 2 GPUs over NVLink, one micro-batch: 7 plans, and beside DP, TP and PP a flash-attention train run
# and PyTorch with SDPA.
count '^train-nvlink-' 10 --np 2 --transports nvlink --micro-batches 1
count '^train-nvlink-[a-z]*-flash-mb1: .* --flash-attn ' 3 --np 2 --transports nvlink --micro-batches 1
# The other runs say --no-flash-attn: they were measured before flash attention became the default.
count '^train-nvlink-[a-z0-9]*-mb1: .* --no-flash-attn ' 7 --np 2 --transports nvlink --micro-batches 1
count '^pytorch-nvlink-[a-z]*-sdpa-mb1: .*pytorch_reference.py --mode [dtp]* .*--attention sdpa' 3 \
  --np 2 --transports nvlink --micro-batches 1
count '^pytorch-.*--compile' 3 --np 2 --transports nvlink --micro-batches 1 --pytorch-compile
# PyTorch and flash points only over the PyTorch transports.
count '^pytorch-' 0 --np 2 --transports "p2p-off sockets" --micro-batches 1
count '^train-sockets-' 7 --np 2 --transports sockets --micro-batches 1
count '^pytorch-sockets-' 3 --np 2 --transports sockets --micro-batches 1 --pytorch-transports sockets
count '^train-' 21 --np 2 --transports nvlink --micro-batches "1 2 4" --pytorch-transports ""
# The transports' NCCL variables, passed to the ranks.
count '^train-sockets-dp-mb2: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 mpirun .*-x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE' 1 \
  --np 2 --transports sockets --micro-batches 2
# 8 GPUs add DP2 x TP2 x PP2; the global batch is 4 microbatches per replica.
count '^train-nvlink-dp2tp2pp2-mb2: .*--dp 2 --tp 2 --pp 2 --micro-batch 2 --global-batch 16 ' 1 \
  --np 8 --transports nvlink --micro-batches 2
count '^train-nvlink-dp-mb4: .*--dp 8 --micro-batch 4 --global-batch 128 ' 1 --np 8 --transports nvlink --micro-batches 4

# Refusals: exit 2 and the reason.
for args in "--np two" "--transports infiniband" "--frobnicate"; do
  rc=0
  # shellcheck disable=SC2086  # each case is a list of words
  "$matrix" --commscale /opt/commscale --out "$work/out" --dry-run $args > "$work/err" 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "exit 2 expected for '$args', got $rc: $(cat "$work/err")"
done
echo "train_matrix: ok"
