#!/bin/bash
# 1 x H200, one device call (~4 minutes), issue 21, after run-14 (same session): calibrate's GEMM rows
# with and without its heat (20 ms of an 8192^3 GEMM before each shape), now that its operands and the
# executor's stay the fill: train --gemm-check (run-14) found a step's 1024 x 8192 x 2048 GEMM at 49.5 us,
# alone without heat on the step's operands 48.9 us, calibrate's heated row 60.0 us. Both profiles and
# the 17 train runs in one call. Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03c/run-15.sh
set -u
source launch/device-run.sh
device_run_start run-15 330
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train"
device_run_machine
device_run_build /tmp/b15

for heat in 0 20; do
  el "calibrate, heat $heat ms"
  cmd "mpirun -np 1 commscale calibrate -o W/cal-heat$heat.json --measure gemm,memory --heat-ms $heat --cluster h200x1"
  within 70 75 "${mpi[@]}" "$bin" calibrate -o "$W/cal-heat$heat.json" --measure gemm,memory --heat-ms "$heat" \
    --cluster h200x1 > "$W/calibrate-heat$heat.txt" 2>&1
  echo "calibrate heat $heat rc=$?"; grep -E "8192 x   8192 x   8192|1024 x   8192 x   2048" "$W/calibrate-heat$heat.txt" | head -2
  save
done

el "train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
within 62 3 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s 58 | tail -2
echo "train: $(find "$W/train" -name "train-*.json" | wc -l) runs"
save
el "done: $OUT/h200x1-run-15.tgz"
