#!/bin/bash
# 1 x H200, one device call (~5 minutes), issue 21, after run-13 (same session): the executor's GEMMs
# read their operands from a half of the pool that no op writes (src/runtime/step_buffers.cpp), so they
# multiply the fill as calibrate's probes now do; measured: PyTorch's GEMMs on randn, on the fill's
# pattern and on NaN at two shapes, calibrate's rows, the 17 train runs and train --gemm-check. Run from
# the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03c/run-14.sh
set -u
source launch/device-run.sh
device_run_start run-14 420
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train"
device_run_machine
device_run_build /tmp/b14

el "2. PyTorch's GEMMs on three operand patterns"
for data in randn commscale-signed nan; do
  cmd "python3 launch/gemm_context.py --data $data --shape 8192,8192,8192 --shape 4096,14336,4096 --contexts sustained-rotated -o W/gemm-data-$data.json"
  within 25 230 python3 launch/gemm_context.py --data "$data" --shape 8192,8192,8192 --shape 4096,14336,4096 \
    --contexts sustained-rotated -o "$W/gemm-data-$data.json" > "$W/gemm-data-$data.txt" 2>&1
  echo "gemm_context --data $data rc=$?"; grep -v "^#" "$W/gemm-data-$data.txt" | tail -2
done
save

el "3. calibrate"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory --heat-ms 20 --cluster h200x1"
within 90 85 "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory --heat-ms 20 --cluster h200x1 \
  > "$W/calibrate.txt" 2>&1
echo "calibrate rc=$?"; grep -E "8192 x   8192 x   8192|4096 x  14336 x   4096" "$W/calibrate.txt" | head -2
save

el "4. train at every point, and --gemm-check"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
within 60 15 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s 55 | tail -2
echo "train: $(find "$W/train" -name "train-*.json" | wc -l) runs"
g2048=(--layers 4 --hidden 2048 --heads 16 --kv-heads 16 --seq 1024 --vocab 0 --micro-batch 1 --global-batch 4)
cmd "mpirun -np 1 commscale train ${g2048[*]} --no-flash-attn --steps 5 --warmup 2 --gemm-check -J W/train/gemm-check-g2048-s1024-mb1-unfused.json"
within 12 1 "${mpi[@]}" "$bin" train "${g2048[@]}" --no-flash-attn --steps 5 --warmup 2 --gemm-check \
  -J "$W/train/gemm-check-g2048-s1024-mb1-unfused.json" > "$W/train/gemm-check-g2048-s1024-mb1-unfused.txt" 2>&1
echo "train --gemm-check rc=$?"
save
el "done: $OUT/h200x1-run-14.tgz"
