#!/usr/bin/env bash
# Memory-saving training on one GPU, measured and predicted side by side (issue 35): `commscale train` runs
# each plan below on the lent GPU and `commscale predict` predicts the same flags for that machine (the
# catalog's hgx-h100 cut to one GPU and the lease's 16 host cores), then a table of step times. One device
# call: build (Release, sm_90, with the GPU tests), the GPU tests of train, the runs, the table; every step
# within MEMSAVE_LIMIT_S seconds (default 570).
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h100x1-2026-12-07/memory-saving-gpu.sh
#   (from the repository root, on the device, OUT set)
#
# Writes OUT/h200x1-memsave.tgz (the work folder: machine.txt, commands.txt, build and test logs,
# train/*.json, predict/*.json, table.txt) and prints the table last.
set -uo pipefail
# shellcheck source=launch/device-run.sh
source launch/device-run.sh
device_run_start memsave "${MEMSAVE_LIMIT_S:-570}"
device_run_machine

b=/tmp/bm
device_run_build $b commscale_gpu_tests

el "GPU tests of train (offload among them)"
cmd "mpirun -np 1 commscale_gpu_tests --gtest_filter='GpuTrain.*'"
within 120 240 "${mpi[@]}" "$b/tests/commscale_gpu_tests" --gtest_filter='GpuTrain.*' > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \] GpuTrain.Offload|FAILED  \] " "$W/gpu-tests.log" | head -12
save

# Four Llama-2-7B layers with the embedding and the head, full recompute, 4 microbatches of one sequence.
base=(--model llama2-7b --layers 4 --recompute full --global-batch 4 --micro-batch 1)
declare -A plans=(
  [dense]=""
  [adam8bit]="--optimizer adam8bit"
  [lora]="--lora-rank 16 --lora-targets all"
  [qlora]="--lora-rank 16 --lora-targets all --lora-base-bits 4"
  [offload-optimizer]="--zero 1 --offload-optimizer cpu"
  [offload-activations]="--zero 1 --offload-optimizer cpu --offload-activations"
  [offload-all]="--zero 3 --offload-optimizer cpu --offload-params cpu --offload-activations"
)
machine=(--cluster hgx-h100 --set node.gpus=1 --set host_cpu_cores=16 --framework commscale)
mkdir -p "$W/train" "$W/predict"
for name in dense adam8bit lora qlora offload-optimizer offload-activations offload-all; do
  # shellcheck disable=SC2206  # the plan's flags are words
  flags=(${plans[$name]})
  el "train $name"
  cmd "commscale train ${base[*]} ${flags[*]} --steps 5 --warmup 2 -J W/train/$name.json"
  within 60 60 "${mpi[@]}" "$bin" train "${base[@]}" "${flags[@]}" --steps 5 --warmup 2 -J "$W/train/$name.json" \
    > "$W/train/$name.txt" 2>&1 || echo "train $name failed: $(tail -2 "$W/train/$name.txt")"
  cmd "commscale predict ${machine[*]} ${base[*]} ${flags[*]} -J W/predict/$name.json"
  "$bin" predict "${machine[@]}" "${base[@]}" "${flags[@]}" -J "$W/predict/$name.json" > "$W/predict/$name.txt" 2>&1 ||
    echo "predict $name failed: $(tail -2 "$W/predict/$name.txt")"
  save
done

python3 - "$W" > "$W/table.txt" <<'EOF'
import json, os, sys
w = sys.argv[1]
print(f"{'plan':<22}{'measured s':>12}{'predicted s':>13}{'error':>8}")
for name in ["dense", "adam8bit", "lora", "qlora", "offload-optimizer", "offload-activations", "offload-all"]:
    try:
        measured = json.load(open(os.path.join(w, "train", name + ".json")))["summary"]["step_time_s"]
        predicted = json.load(open(os.path.join(w, "predict", name + ".json")))["summary"]["step_time_s"]
        print(f"{name:<22}{measured:>12.4f}{predicted:>13.4f}{100 * (predicted / measured - 1):>+7.1f}%")
    except (OSError, KeyError, ValueError) as e:
        print(f"{name:<22} missing: {e}")
EOF
save
cat "$W/table.txt"
