#!/usr/bin/env bash
# GEMM speed when a dimension is not a multiple of 8 (issue 38: Qwen1.5-MoE's 273-row expert GEMMs measured
# about 3x slower than the catalog's GEMM model prices them). `commscale calibrate --measure gemm` times the
# executor's own cuBLASLt GEMM at every (m, n, k) of a grid with aligned (256, 272, 280, 2048, 2816) and
# unaligned (273) sizes, bf16 and then FP8, so the model's alignment term can be fitted to what the executor
# runs. One device call; build (Release, sm_90, no tests) unless the MoE script's build is there.
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/gpu1-2026-12-07-gemm-align/gemm-alignment-gpu.sh
#
# Writes OUT/h200x1-gemm-align.tgz (the work folder: calibration-bf16.json, calibration-fp8.json, logs).
set -uo pipefail
# shellcheck source=launch/device-run.sh
source launch/device-run.sh
device_run_start gemm-align "${ALIGN_LIMIT_S:-200}"
device_run_machine
device_run_build /tmp/bm

dims=(256 272 273 280 2048 2816)
attention=(--attention-batches 8 --attention-seqs 512 --attention-head-dims 128)
for type in bf16 fp8; do
  el "calibrate gemm $type at ${dims[*]}"
  cmd "commscale calibrate --measure gemm --gemm-types $type --gemm-dims ${dims[*]} ${attention[*]} -o W/calibration-$type.json"
  within 90 10 "${mpi[@]}" "$bin" calibrate --measure gemm --gemm-types "$type" --gemm-dims "${dims[@]}" \
    "${attention[@]}" -o "$W/calibration-$type.json" > "$W/calibrate-$type.txt" 2>&1
  echo "calibrate $type rc=$?"; tail -3 "$W/calibrate-$type.txt"
  save
done
