#!/usr/bin/env bash
# Mixture-of-experts layers (local experts, ep 1) and FP8 GEMMs on one GPU, measured and predicted side by side
# (issue 38 item 4): `commscale train` runs each plan on the lent GPU and `commscale predict` predicts the same
# flags for that machine (the catalog's cluster of that GPU cut to one, the lease's 16 host cores), then a table.
# One device call: build (Release, sm_90, with the GPU tests), the GPU tests of train and of the FP8 GEMMs, the
# runs, the table; every step within MOE_LIMIT_S seconds (default 570).
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/gpu1-2026-12-07-moe/moe-fp8-gpu.sh
#   (from the repository root, on the device, OUT set)
#
# Writes OUT/h200x1-moe.tgz (the work folder) and prints the table last.
set -uo pipefail
# shellcheck source=launch/device-run.sh
source launch/device-run.sh
device_run_start moe "${MOE_LIMIT_S:-570}"
device_run_machine

b=/tmp/bm
targets=(commscale_gpu_tests)
if [ -n "${MOE_SKIP_CHECKS:-}" ]; then targets=(); fi
device_run_build $b "${targets[@]}"

# MOE_SKIP_CHECKS=1 skips the GPU tests and calibrate; MOE_PLANS="a b" runs only those plans (a later call that
# adds rows to an earlier one's).
if [ -z "${MOE_SKIP_CHECKS:-}" ]; then
el "GPU tests of train and of the FP8 GEMMs"
cmd "mpirun -np 1 commscale_gpu_tests --gtest_filter='GpuTrain.*:*Fp8*'"
within 150 300 "${mpi[@]}" "$b/tests/commscale_gpu_tests" --gtest_filter='GpuTrain.*:*Fp8*' > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \] |OK \] .*Fp8" "$W/gpu-tests.log" | head -16
save
fi

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) cluster=hgx-h200 ;; *) cluster=hgx-h100 ;; esac
machine=(--cluster "$cluster" --set node.gpus=1 --set host_cpu_cores=16 --framework commscale)
# Few layers of each model, its embedding and head, full recompute, 4 microbatches of one sequence.
declare -A plans=(
  [llama2-7b]="--model llama2-7b --layers 4"
  [mixtral-8x7b]="--model mixtral-8x7b --layers 2"
  [qwen1.5-moe]="--model qwen1.5-moe-a2.7b --layers 4"
  [deepseek-v2-lite]="--model deepseek-v2-lite --layers 4"
)
names=(llama2-7b mixtral-8x7b qwen1.5-moe deepseek-v2-lite)
# The help is read whole first: `grep -q` would end the pipe early and fail it under pipefail.
plan_help=$("$bin" plan --help 2>&1)
if grep -q -- "--fp8 TEXT" <<< "$plan_help"; then
  plans[llama2-7b-fp8-delayed]="--model llama2-7b --layers 4 --fp8 delayed"
  plans[llama2-7b-fp8-current]="--model llama2-7b --layers 4 --fp8 current"
  plans[mixtral-8x7b-fp8]="--model mixtral-8x7b --layers 2 --fp8 delayed"
  plans[deepseek-v2-lite-fp8]="--model deepseek-v2-lite --layers 4 --fp8 delayed"
  names+=(llama2-7b-fp8-delayed llama2-7b-fp8-current mixtral-8x7b-fp8 deepseek-v2-lite-fp8)
fi
if [ -n "${MOE_PLANS:-}" ]; then read -r -a names <<< "$MOE_PLANS"; fi
base=(--recompute full --global-batch 4 --micro-batch 1)
mkdir -p "$W/train" "$W/predict"
for name in "${names[@]}"; do
  # shellcheck disable=SC2206  # the plan's flags are words
  flags=(${plans[$name]})
  el "train $name"
  cmd "commscale train ${flags[*]} ${base[*]} --steps 5 --warmup 2 -J W/train/$name.json"
  within 70 60 "${mpi[@]}" "$bin" train "${flags[@]}" "${base[@]}" --steps 5 --warmup 2 -J "$W/train/$name.json" \
    > "$W/train/$name.txt" 2>&1 || echo "train $name failed: $(tail -2 "$W/train/$name.txt")"
  cmd "commscale predict ${machine[*]} ${flags[*]} ${base[*]} -J W/predict/$name.json"
  "$bin" predict "${machine[@]}" "${flags[@]}" "${base[@]}" -J "$W/predict/$name.json" > "$W/predict/$name.txt" 2>&1 ||
    echo "predict $name failed: $(tail -2 "$W/predict/$name.txt")"
  save
done

calibrate_help=$("$bin" calibrate --help 2>&1)
if [ -z "${MOE_SKIP_CHECKS:-}" ] && grep -qi fp8 <<< "$calibrate_help"; then
  el "calibrate (GEMMs, FP8 rows among them)"
  cmd "commscale calibrate --quick -o W/calibration.json"
  within 90 20 "${mpi[@]}" "$bin" calibrate --quick -o "$W/calibration.json" > "$W/calibrate.txt" 2>&1
  echo "calibrate rc=$?"; grep -iE "fp8|e4m3" "$W/calibrate.txt" | head -8
  save
fi

python3 - "$W" "${names[@]}" > "$W/table.txt" <<'PY'
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
