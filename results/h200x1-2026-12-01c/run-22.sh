#!/bin/bash
# Third call: the final tree built with CUDA, its GPU tests on 1 rank, and `train` at run-20's small
# block shape (fused, to compare with run-20 on another machine; and --kernels eager, the eager
# kernel list run by commscale's own kernels). 1 x H200.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $OUT/r/machine.txt
echo "commscale $(cat ../sha)" >> $OUT/r/machine.txt
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
: > $OUT/r/commands.txt
echo "mpirun -np 1 BUILD/tests/commscale_gpu_tests" >> $OUT/r/commands.txt
timeout 200 mpirun -np 1 /tmp/b/tests/commscale_gpu_tests > $OUT/r/gpu-tests-np1.log 2>&1; echo "gpu tests rc=$?"; grep -E "FAILED|Failure" $OUT/r/gpu-tests-np1.log | head -20; tail -3 $OUT/r/gpu-tests-np1.log
el tests
for k in fused eager; do
  args=(train --no-flash-attn --layers 8 --hidden 2048 --heads 16 --seq 1024 --vocab 0 --micro-batch 4 --global-batch 16 --kernels $k --steps 10 --warmup 3 --timing both -J $OUT/r/train-$k-small-mb4.json)
  echo "commscale ${args[*]/$OUT/OUT}" >> $OUT/r/commands.txt
  timeout 100 /tmp/b/src/commscale "${args[@]}" > $OUT/r/train-$k-small-mb4.txt 2>&1; echo "train $k rc=$?"; grep -E "^step time|kernels" $OUT/r/train-$k-small-mb4.txt
done
el done
tar czf $OUT/r22.tgz -C $OUT r && rm -rf $OUT/r
