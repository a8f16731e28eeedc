#!/bin/bash
# 1 x H200 after the reliability merge: GPU tests, per-op timing cost, launch/gpu-reliability.sh
# (bench and p2p corruption, compute-sanitizer memcheck and racecheck over the GPU tests).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
timeout 200 mpirun -np 1 /tmp/b/tests/commscale_gpu_tests > $OUT/r/gpu-tests-np1.log 2>&1; echo "gpu tests rc=$?"; grep -E "FAILED|Failure" $OUT/r/gpu-tests-np1.log | head -20; tail -3 $OUT/r/gpu-tests-np1.log
el tests
C=/tmp/b/src/commscale
args=(train --no-flash-attn --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch 2 --global-batch 8 --steps 10 --warmup 3 --timing both -J $OUT/r/train-block8-mb2.json)
echo "# commscale ${args[*]}" > $OUT/r/commands.txt
timeout 100 $C "${args[@]}" > $OUT/r/train-block8-mb2.txt 2>&1; echo "train rc=$?"; grep -E "^step time|per-op timing" $OUT/r/train-block8-mb2.txt
el train
timeout 420 bash launch/gpu-reliability.sh /tmp/b $OUT/r/reliability > $OUT/r/reliability.log 2>&1; echo "gpu-reliability rc=$?"; tail -12 $OUT/r/reliability.log
el done
tar czf $OUT/h200x1-f.tgz -C $OUT r && rm -rf $OUT/r
