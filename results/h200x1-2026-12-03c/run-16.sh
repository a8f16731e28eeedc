#!/bin/bash
# 1 x H200, one device call (~3.5 minutes), issue 21, after run-15 (same session): calibrate's clock
# curve now taken against its GEMM's row (the time every GEMM row is timed at) rather than against
# the GEMM back to back, with the GEMM and memory rows, and the 17 train runs, in one call. Run from
# the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03c/run-16.sh
set -u
source launch/device-run.sh
device_run_start run-16 255
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train"
device_run_machine
device_run_build /tmp/b16

el "calibrate: GEMM rows, memory rows, the clock curve"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory,clock --heat-ms 20 --cluster h200x1"
within 95 60 "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory,clock --heat-ms 20 --cluster h200x1 \
  > "$W/calibrate.txt" 2>&1
echo "calibrate rc=$?"; grep -E "^clock" "$W/calibrate.txt"
save

el "train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
within 58 2 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s 55 | tail -2
echo "train: $(find "$W/train" -name "train-*.json" | wc -l) runs"
save
el "done: $OUT/h200x1-run-16.tgz"
