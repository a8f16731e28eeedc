#!/bin/bash
# 1 x H200, one device call (~9 minutes), issue 21:
#   - eager PyTorch's host: host_ladder.py (this folder) times pytorch_host.py's stacks, a ladder of GPT
#     SDPA stacks from the stacks' shapes to the runs', and the 8 host-bound runs, interleaved, in
#     rounds, in one process, before anything else runs on the machine;
#   - the clock curve as the code now takes it (against the grid's row) with the GEMM and memory rows,
#     the GPU tests of calibrate, and the 17 train runs, in the same call.
# Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03d/run-17.sh
set -u
source launch/device-run.sh
device_run_start run-17 570
here=results/h200x1-2026-12-03d
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train" "$W/ladder"
device_run_machine

el "1. host ladder: stacks, ladder, host-bound runs, interleaved rounds"
grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"
python3 launch/regime_grid.py pytorch-grid "$W/points-host-bound.jsonl" --out "$W/ladder" > /dev/null
cmd "mpirun -np 1 python3 $here/host_ladder.py --grid W/ladder/grid.jsonl --out W/ladder --rounds 4 --budget-s 120"
within 170 390 "${mpi[@]}" python3 "$here/host_ladder.py" --grid "$W/ladder/grid.jsonl" --out "$W/ladder" \
  --rounds 4 --budget-s 120 > "$W/ladder/ladder.txt" 2> "$W/ladder/ladder.err"
echo "host_ladder rc=$?"; tail -3 "$W/ladder/ladder.err"; grep -c . "$W/ladder/ladder.txt"
save

el "2. build: commscale and the GPU tests"
bin=/tmp/b17/src/commscale
build="cmake -S . -B /tmp/b17 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build /tmp/b17 -j 16 --target commscale commscale_gpu_tests"
cmd "$build"
within 200 200 bash -c "$build" > "$W/build.log" 2>&1
echo "build rc=$?"; grep -ciE "warning:" "$W/build.log" | sed 's/^/compiler warnings: /'
if [ ! -x "$bin" ]; then tail -20 "$W/build.log"; save; exit 1; fi
save

el "3. GPU tests of calibrate"
cmd "mpirun -np 1 /tmp/b17/tests/commscale_gpu_tests --gtest_filter='GpuCalibrate*'"
within 90 170 "${mpi[@]}" /tmp/b17/tests/commscale_gpu_tests --gtest_filter='GpuCalibrate*' > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "OK \]|FAILED|Failure" "$W/gpu-tests.log" | head -10
save

el "4. calibrate: GEMM rows, memory rows, the clock curve"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory,clock --heat-ms 20 --cluster h200x1"
within 95 62 "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory,clock --heat-ms 20 --cluster h200x1 \
  > "$W/calibrate.txt" 2>&1
echo "calibrate rc=$?"; grep -E "^clock" "$W/calibrate.txt"
save

el "5. train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
within 58 2 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s 55 | tail -2
echo "train: $(find "$W/train" -name "train-*.json" | wc -l) runs"
save
el "done: $OUT/h200x1-run-17.tgz"
