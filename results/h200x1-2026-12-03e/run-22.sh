#!/bin/bash
# 1 x H200, one device call (~7 minutes), issue 21: calibrate's GEMM rows timed behind a spin (the GPU's
# time per call) against the same rows timed from an idle GPU as before (the host's launch rate where a
# call is shorter than its launch), side by side on one machine; then the GPU tests of both, the host
# row, and `train` at the 17 points, for predictions with the executor's host costs.
# The old timing is this tree with queued-timing.patch reversed, built beside it.
# Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03e/run-22.sh
set -u
source launch/device-run.sh
device_run_start run-22 560
here=results/h200x1-2026-12-03e
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train"
device_run_machine

el "1. build: commscale and the GPU tests; commscale with the old timing beside it"
bin=/tmp/b22/src/commscale
old=/tmp/b22-idle/src/commscale
build="cmake -S . -B /tmp/b22 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build /tmp/b22 -j 10 --target commscale commscale_gpu_tests"
build_old="rm -rf /tmp/src-idle && mkdir /tmp/src-idle && cp -r CMakeLists.txt src kernels launch topologies tests /tmp/src-idle/ && patch -R -p1 -d /tmp/src-idle < $here/queued-timing.patch && cmake -S /tmp/src-idle -B /tmp/b22-idle -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_TESTS=OFF && cmake --build /tmp/b22-idle -j 6 --target commscale"
cmd "$build"
cmd "$build_old"
within 200 330 bash -c "$build_old" > "$W/build-idle.log" 2>&1 &
within 200 330 bash -c "$build" > "$W/build.log" 2>&1
echo "build rc=$?"; wait; grep -ciE "warning:" "$W/build.log" | sed 's/^/compiler warnings: /'
if [ ! -x "$bin" ] || [ ! -x "$old" ]; then tail -20 "$W/build.log" "$W/build-idle.log"; save; exit 1; fi
save

el "2. GPU tests: the timing and calibrate"
cmd "mpirun -np 1 /tmp/b22/tests/commscale_gpu_tests --gtest_filter='GpuProbeTiming*:GpuCalibrate*'"
within 80 300 "${mpi[@]}" /tmp/b22/tests/commscale_gpu_tests --gtest_filter='GpuProbeTiming*:GpuCalibrate*' \
  > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "OK \]|FAILED|Failure|SKIP" "$W/gpu-tests.log" | head -10
save

el "3. calibrate, GEMM rows from an idle GPU (the old timing)"
cmd "mpirun -np 1 commscale-idle calibrate -o W/cal-idle.json --measure gemm --heat-ms 20 --cluster h200x1"
within 90 210 "${mpi[@]}" "$old" calibrate -o "$W/cal-idle.json" --measure gemm --heat-ms 20 --cluster h200x1 \
  > "$W/calibrate-idle.txt" 2>&1
echo "calibrate (idle) rc=$?"
save

el "4. calibrate, rows behind a spin: GEMM, memory, the clock curve, the executor's host row"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory,clock,host --heat-ms 20 --cluster h200x1"
within 120 80 "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory,clock,host --heat-ms 20 \
  --cluster h200x1 > "$W/calibrate.txt" 2>&1
echo "calibrate rc=$?"; grep -E "^clock|^host" "$W/calibrate.txt"
save

el "5. train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
within 60 15 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s 55 | tail -2
echo "train: $(find "$W/train" -name "train-*.json" | wc -l) runs"
save

el "6. tiny GEMMs in torch, from an idle GPU and behind a spin"
cmd "python3 $here/gemm_spin.py"
within 40 2 python3 "$here/gemm_spin.py" > "$W/gemm_spin.txt" 2>&1
echo "gemm_spin rc=$?"; cat "$W/gemm_spin.txt"
save
el "done: $OUT/h200x1-run-22.tgz"
