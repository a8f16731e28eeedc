#!/bin/bash
# calibrate with --heat-ms 0 and 20 (the attention-batch grid); GPU tests; launch/gpu-reliability.sh
# with the sanitizers narrowed to our kernels (SANITIZE_FILTER), 1 x H200.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv,noheader
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
C=/tmp/b/src/commscale
: > $OUT/r/commands.txt
for heat in 0 20; do
  args=(calibrate -o $OUT/r/cal-heat$heat.json --measure gemm,memory --heat-ms $heat --cluster h200x1 --description "1 x H200 SXM 141GB (lent GPU machine)")
  echo "commscale ${args[*]}" >> $OUT/r/commands.txt
  timeout 150 $C "${args[@]}" > $OUT/r/cal-heat$heat.txt 2>&1; echo "calibrate heat $heat rc=$?"; grep -c "^gemm" $OUT/r/cal-heat$heat.txt; grep skipped $OUT/r/cal-heat$heat.txt | head -3; tail -1 $OUT/r/cal-heat$heat.txt
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  el calibrate heat $heat
done
timeout 150 mpirun -np 1 /tmp/b/tests/commscale_gpu_tests > $OUT/r/gpu-tests-np1.log 2>&1; echo "gpu tests rc=$?"; grep -E "FAILED|Failure" $OUT/r/gpu-tests-np1.log | head -10; tail -2 $OUT/r/gpu-tests-np1.log
el gpu tests
export SANITIZE_FILTER='GpuTrain.OneRank:Gpu.FillKernel*:Gpu.CheckKernel*:Gpu.SeededCorruption*:GpuCalibrate.*'
echo "SANITIZE_FILTER='$SANITIZE_FILTER' launch/gpu-reliability.sh BUILD OUT/reliability" >> $OUT/r/commands.txt
timeout 270 bash launch/gpu-reliability.sh /tmp/b $OUT/r/reliability > $OUT/r/reliability.log 2>&1; echo "gpu-reliability rc=$?"; tail -8 $OUT/r/reliability.log; cat $OUT/r/reliability/summary.txt
el done
tar czf $OUT/r16.tgz -C $OUT r && rm -rf $OUT/r
