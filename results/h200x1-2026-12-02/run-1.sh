#!/bin/bash
# 1 x H200, 2026-12-02: the README's first command as a new user types it (launch/main.sh: its own
# package check and default Release build, default size), its folder checked by
# tests/check-main-job.sh as CI checks it; then the GPU tests. Run from the repository's root with
# $OUT set (the device tool's output folder).
set -u
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
mkdir -p "$OUT/r"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; g++ --version | head -1; cmake --version | head -1; } > "$OUT/r/machine.txt" 2>&1
el "launch/main.sh"
COMMSCALE_RESULTS="$OUT/r/main" timeout 480 launch/main.sh > "$OUT/r/main.log" 2>&1
echo "main.sh rc=$?"
el "main.sh done"
grep -ciE "warning:" "$OUT/r/main.log" | sed 's/^/compiler warnings: /'
grep -E "^commscale:" "$OUT/r/main.log"
tests/check-main-job.sh "$OUT/r/main" "$OUT/r/main.log"; echo "check-main-job rc=$?"
el "GPU tests"
cmake -S . -B /tmp/bt -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/bt.log 2>&1 \
  && cmake --build /tmp/bt -j 16 --target commscale_gpu_tests >> /tmp/bt.log 2>&1
timeout 240 mpirun --allow-run-as-root -np 1 /tmp/bt/tests/commscale_gpu_tests > "$OUT/r/gpu-tests-np1.log" 2>&1
echo "gpu tests rc=$?"; tail -3 "$OUT/r/gpu-tests-np1.log"
el "summary"
sed -n '/^step/,/^ *compute/p' "$OUT/r/main/predict.txt" 2>/dev/null
grep -E "step time|^# job" "$OUT/r/main/train.txt" 2>/dev/null | head -5
grep -E "Avg bus bandwidth|local copies" "$OUT/r/main/bench.txt" | head -9
tar czf "$OUT/h200x1-run-1.tgz" -C "$OUT" r && rm -rf "$OUT/r"
el done
