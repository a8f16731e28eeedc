#!/usr/bin/env bash
# The executor's GEMM layouts (program/gemm_storage.hpp) and FP8 padding on one GPU: the GPU tests of the
# layouts and of the FP8 GEMMs, Qwen1.5-MoE (60 local experts of 273 rows) trained and predicted in bf16 and in
# FP8, the dense and MoE references beside it, then bf16 GEMMs at 272 and 273 through calibrate. Every step
# within LAYOUT_LIMIT_S seconds (default 300), the most telling first.
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash launch/gemm-layout-device.sh
#   (from the repository root, on the device, OUT set)
set -uo pipefail
# shellcheck source=launch/device-run.sh
source launch/device-run.sh
device_run_start layout "${LAYOUT_LIMIT_S:-300}"
device_run_machine
device_run_build /tmp/bm commscale_gpu_tests

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) cluster=hgx-h200 ;; *) cluster=hgx-h100 ;; esac
machine=(--cluster "$cluster" --set node.gpus=1 --set host_cpu_cores=16 --framework commscale)
base=(--recompute full --global-batch 4 --micro-batch 1)
declare -A plans=(
  [qwen1.5-moe]="--model qwen1.5-moe-a2.7b --layers 4"
  [qwen1.5-moe-fp8]="--model qwen1.5-moe-a2.7b --layers 4 --fp8 delayed"
  [deepseek-v2-lite]="--model deepseek-v2-lite --layers 4"
)
mkdir -p "$W/train" "$W/predict"
run_plan() {
  # shellcheck disable=SC2206  # the plan's flags are words
  local name=$1 flags=(${plans[$1]})
  el "train $name"
  cmd "commscale train ${flags[*]} ${base[*]} --steps 5 --warmup 2 -J W/train/$name.json"
  within 60 40 "${mpi[@]}" "$bin" train "${flags[@]}" "${base[@]}" --steps 5 --warmup 2 -J "$W/train/$name.json" \
    > "$W/train/$name.txt" 2>&1 || echo "train $name failed: $(tail -2 "$W/train/$name.txt")"
  cmd "commscale predict ${machine[*]} ${flags[*]} ${base[*]} -J W/predict/$name.json"
  "$bin" predict "${machine[@]}" "${flags[@]}" "${base[@]}" -J "$W/predict/$name.json" > "$W/predict/$name.txt" 2>&1 ||
    echo "predict $name failed: $(tail -2 "$W/predict/$name.txt")"
  save
}

run_plan qwen1.5-moe
el "GPU tests of the layouts and the FP8 GEMMs"
cmd "mpirun -np 1 commscale_gpu_tests --gtest_filter='GpuGemmLayout.*:GpuFp8Gemm.*'"
within 60 40 "${mpi[@]}" /tmp/bm/tests/commscale_gpu_tests --gtest_filter='GpuGemmLayout.*:GpuFp8Gemm.*' \
  > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|OK \]" "$W/gpu-tests.log" | head -12
save
run_plan qwen1.5-moe-fp8
run_plan deepseek-v2-lite

el "calibrate gemm bf16 at 272 273 2048 2816"
cmd "commscale calibrate --measure gemm --gemm-types bf16 --gemm-dims 272 273 2048 2816 --attention-batches 8 --attention-seqs 512 --attention-head-dims 128 -o W/calibration-bf16.json"
within 60 5 "${mpi[@]}" "$bin" calibrate --measure gemm --gemm-types bf16 --gemm-dims 272 273 2048 2816 \
  --attention-batches 8 --attention-seqs 512 --attention-head-dims 128 -o "$W/calibration-bf16.json" \
  > "$W/calibrate-bf16.txt" 2>&1
echo "calibrate rc=$?"
save

python3 - "$W" qwen1.5-moe qwen1.5-moe-fp8 deepseek-v2-lite > "$W/table.txt" <<'PY'
import json, os, sys
w, names = sys.argv[1], sys.argv[2:]
print(f"{'plan':<20}{'measured s':>12}{'predicted s':>13}{'error':>8}")
for name in names:
    try:
        measured = json.load(open(os.path.join(w, "train", name + ".json")))["summary"]["step_time_s"]
        predicted = json.load(open(os.path.join(w, "predict", name + ".json")))["summary"]["step_time_s"]
        print(f"{name:<20}{measured:>12.4f}{predicted:>13.4f}{100 * (predicted / measured - 1):>+7.1f}%")
    except (OSError, KeyError, ValueError) as e:
        print(f"{name:<20} missing: {e}")
PY
save
cat "$W/table.txt"
