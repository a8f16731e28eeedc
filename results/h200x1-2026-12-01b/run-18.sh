#!/bin/bash
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
if [ ! -x /tmp/b/tests/commscale_gpu_tests ]; then
  cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"
fi
el ready
f='GpuTrain.OneRank:Gpu.FillKernel*:Gpu.CheckKernel*:Gpu.SeededCorruption*:Gpu.GraphReplay*:Gpu.EveryCollective*'
echo "compute-sanitizer --tool racecheck --kernel-name-exclude kns=nvjet --report-api-errors no --error-exitcode 99 commscale_gpu_tests --gtest_filter='$f'" > $OUT/r/commands.txt
timeout 330 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --kernel-name-exclude kns=nvjet --report-api-errors no --error-exitcode 99 --print-limit 20 /tmp/b/tests/commscale_gpu_tests --gtest_brief=1 --gtest_filter="$f" > $OUT/r/racecheck.txt 2>&1; echo "racecheck rc=$?"; tail -6 $OUT/r/racecheck.txt
el done
