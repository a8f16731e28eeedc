#!/bin/bash
# 1 x H200, one device call (~3 minutes), issue 21: run-23 again after doctor's GEMM expectation moved to
# 0.67 of the dense rate (run-23's healthy H200 failed it at 0.80): every GPU test on one rank at this session's last
# commit (calibrate's timing behind a spin is also what train --gemm-check and the interference probe
# use). Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03e/run-24.sh
set -u
source launch/device-run.sh
device_run_start run-24 400
device_run_machine

el "1. build: commscale and the GPU tests (-Werror)"
build="cmake -S . -B /tmp/b24 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_WERROR=ON && cmake --build /tmp/b24 -j 16 --target commscale commscale_gpu_tests"
cmd "$build"
within 200 150 bash -c "$build" > "$W/build.log" 2>&1
echo "build rc=$?"
if [ ! -x /tmp/b24/tests/commscale_gpu_tests ]; then tail -20 "$W/build.log"; save; exit 1; fi
save

el "2. every GPU test, one rank"
cmd "mpirun -np 1 /tmp/b24/tests/commscale_gpu_tests"
within 240 5 "${mpi[@]}" /tmp/b24/tests/commscale_gpu_tests > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\S*\[  (PASSED|FAILED) |OK \]|FAILED \]|SKIPPED \]" "$W/gpu-tests.log" | tail -25
save
el "done: $OUT/h200x1-run-24.tgz"
