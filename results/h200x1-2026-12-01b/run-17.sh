#!/bin/bash
# launch/gpu-reliability.sh with racecheck narrowed to commscale's kernels, 1 x H200.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
/usr/local/cuda/bin/compute-sanitizer --version | tail -1
timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --kernel-name kns=commscale --print-limit 5 /tmp/b/tests/commscale_gpu_tests --gtest_brief=1 --gtest_filter='Gpu.FillKernel*' 2>&1 | tail -4
el probe
export SANITIZE_FILTER='GpuTrain.*:Gpu.*:GpuCalibrate.*'
echo "SANITIZE_FILTER='$SANITIZE_FILTER' launch/gpu-reliability.sh BUILD OUT/reliability" > $OUT/r/commands.txt
timeout 420 bash launch/gpu-reliability.sh /tmp/b $OUT/r/reliability > $OUT/r/reliability.log 2>&1; echo "gpu-reliability rc=$?"; tail -6 $OUT/r/reliability.log; cat $OUT/r/reliability/summary.txt
el done
tar czf $OUT/r17.tgz -C $OUT r && rm -rf $OUT/r
