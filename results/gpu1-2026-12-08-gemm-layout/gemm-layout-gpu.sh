#!/usr/bin/env bash
# The executor's GEMM layouts (program/gemm_storage.hpp) and FP8 padding on one GPU: the GPU tests of the
# layouts and of the FP8 GEMMs, Qwen1.5-MoE (60 local experts of 274 rows) trained and predicted in bf16 and in
# FP8, the dense and MoE references beside it, then bf16 GEMMs at 272 and 273 through calibrate. Every step
# within LAYOUT_LIMIT_S seconds (default 300), the most telling first.
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/gpu1-2026-12-08-gemm-layout/gemm-layout-gpu.sh
#   (from the repository root, on the device, OUT set)
set -uo pipefail
# shellcheck source=launch/device-run.sh
source launch/device-run.sh
device_run_start layout "${LAYOUT_LIMIT_S:-300}"
device_run_machine
device_run_build /tmp/bm commscale_gpu_tests

base=(--recompute full --global-batch 4 --micro-batch 1)
qwen=(--model qwen1.5-moe-a2.7b --layers 4 "${base[@]}")

device_run_train_predict qwen1.5-moe 60 40 "${qwen[@]}"
el "GPU tests of the layouts and the FP8 GEMMs"
cmd "mpirun -np 1 commscale_gpu_tests --gtest_filter='GpuGemmLayout.*:GpuFp8Gemm.*'"
within 60 40 "${mpi[@]}" /tmp/bm/tests/commscale_gpu_tests --gtest_filter='GpuGemmLayout.*:GpuFp8Gemm.*' \
  > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|OK \]" "$W/gpu-tests.log" | head -12
save
device_run_train_predict qwen1.5-moe-fp8 60 40 "${qwen[@]}" --fp8 delayed
device_run_train_predict deepseek-v2-lite 60 40 --model deepseek-v2-lite --layers 4 "${base[@]}"

el "calibrate gemm bf16 at 272 273 2048 2816"
cmd "commscale calibrate --measure gemm --gemm-types bf16 --gemm-dims 272 273 2048 2816 --attention-batches 8 --attention-seqs 512 --attention-head-dims 128 -o W/calibration-bf16.json"
within 60 5 "${mpi[@]}" "$bin" calibrate --measure gemm --gemm-types bf16 --gemm-dims 272 273 2048 2816 \
  --attention-batches 8 --attention-seqs 512 --attention-head-dims 128 -o "$W/calibration-bf16.json" \
  > "$W/calibrate-bf16.txt" 2>&1
echo "calibrate rc=$?"
save

device_run_table qwen1.5-moe qwen1.5-moe-fp8 deepseek-v2-lite
