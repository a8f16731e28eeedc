#!/usr/bin/env bash
# The README's first command on one GPU at the end of issue 38's wave (MoE, context parallelism, FP8, MLA, the
# GEMM layouts; last run on a GPU on 2026-12-02, results/h200x1-2026-12-02): launch/main.sh as the README gives
# it (its package check and its own default Release build, default size), its folder checked by
# tests/check-main-job.sh as CI checks it; then every GPU test on one rank from a second build with the tests.
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/gpu1-2026-12-08-main-job/main-job-gpu.sh
#   (from the repository root, on the device, OUT set)
set -uo pipefail
# shellcheck source=launch/device-run.sh
source launch/device-run.sh
device_run_start main-job "${MAIN_LIMIT_S:-560}"
device_run_machine

el "launch/main.sh"
cmd "COMMSCALE_RESULTS=W/main launch/main.sh"
export COMMSCALE_RESULTS="$W/main"
within 330 200 launch/main.sh > "$W/main.log" 2>&1
echo "main.sh rc=$?"
grep -ciE "warning:" "$W/main.log" | sed 's/^/compiler warnings in main.sh: /'
cmd "tests/check-main-job.sh W/main W/main.log"
tests/check-main-job.sh "$W/main" "$W/main.log" > "$W/check-main-job.txt" 2>&1
echo "check-main-job rc=$?"; tail -2 "$W/check-main-job.txt"
save

device_run_build /tmp/bt commscale_gpu_tests
el "every GPU test, one rank"
cmd "mpirun -np 1 commscale_gpu_tests"
within 150 5 "${mpi[@]}" /tmp/bt/tests/commscale_gpu_tests > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"
grep -E "^\S*\[  (PASSED|FAILED) |FAILED  \]|tests ran" "$W/gpu-tests.log" | tail -12
grep -c "SKIPPED \]" "$W/gpu-tests.log" | sed 's/^/skipped: /'
save

el "summary"
grep -E "step time|MFU" "$W/main/train.txt" 2>/dev/null | head -3
sed -n '/^step/,/^ *compute/p' "$W/main/predict.txt" 2>/dev/null
save
el "done"
