#!/bin/bash
# 1 x H200, one device call (~3.5 minutes), issue 21, after run-11 (same session): the executor's and
# calibrate's operands made like a model's (kernels/step_kernels.cu: a random sign in the fill, memory
# kernels that keep their values' spread; src/runtime/cuda/cublaslt_gemm.cpp: GEMM outputs scaled by
# about 2 / sqrt(k)), measured: the probe over the old and the new fill against randn, calibrate's GEMM and
# memory rows, the 17 train runs, and train --gemm-check. Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03b/run-12.sh
set -u
source launch/device-run.sh
device_run_start run-12 270
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train"
device_run_machine

el "2. the fills against randn"
for data in randn commscale commscale-signed; do
  cmd "python3 launch/gemm_context.py --data $data --shape 1024,8192,2048 --shape 4096,14336,4096 --contexts sustained-rotated -o W/gemm-data-$data.json"
  within 15 235 python3 launch/gemm_context.py --data "$data" --shape 1024,8192,2048 --shape 4096,14336,4096 \
    --contexts sustained-rotated -o "$W/gemm-data-$data.json" > "$W/gemm-data-$data.txt" 2>&1
  echo "gemm_context --data $data rc=$?"; grep -v "^#" "$W/gemm-data-$data.txt" | tail -2
done
save
device_run_build /tmp/b12

el "3. calibrate: GEMM and memory rows"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory --heat-ms 20 --cluster h200x1"
within 75 70 "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory --heat-ms 20 --cluster h200x1 \
  > "$W/calibrate.txt" 2>&1
echo "calibrate rc=$?: $(grep -c '"m":' "$W/cal.json") GEMM rows"; grep -E "8192 x   8192 x   8192|1024 x   8192 x   2048" "$W/calibrate.txt" | head -3
save

el "4. train at every point, and --gemm-check"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
within 60 8 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s 55 | tail -2
echo "train: $(find "$W/train" -name "train-*.json" | wc -l) runs"
g2048=(--layers 4 --hidden 2048 --heads 16 --kv-heads 16 --seq 1024 --vocab 0 --micro-batch 1 --global-batch 4)
cmd "mpirun -np 1 commscale train ${g2048[*]} --no-flash-attn --steps 5 --warmup 2 --gemm-check -J W/train/gemm-check-g2048-s1024-mb1-unfused.json"
within 10 1 "${mpi[@]}" "$bin" train "${g2048[@]}" --no-flash-attn --steps 5 --warmup 2 --gemm-check \
  -J "$W/train/gemm-check-g2048-s1024-mb1-unfused.json" > "$W/train/gemm-check-g2048-s1024-mb1-unfused.txt" 2>&1
echo "train --gemm-check rc=$?"; grep -A12 "alone" "$W/train/gemm-check-g2048-s1024-mb1-unfused.txt" | head -14
save
el "done: $OUT/h200x1-run-12.tgz"
