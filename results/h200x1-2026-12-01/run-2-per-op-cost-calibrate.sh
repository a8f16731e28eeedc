#!/bin/bash
# 1 x H200: GPU tests (with calibrate), per-op timing cost after sharing start events, calibrate.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
timeout 200 mpirun -np 1 /tmp/b/tests/commscale_gpu_tests > $OUT/r/gpu-tests-np1.log 2>&1; echo "gpu tests rc=$?"; grep -E "FAILED|Failure|Calibrate" $OUT/r/gpu-tests-np1.log | head -20; tail -3 $OUT/r/gpu-tests-np1.log
el tests
C=/tmp/b/src/commscale
log() { echo "# $*" >> $OUT/r/commands.txt; }
for mb in 1 2 4; do
  args=(train --no-flash-attn --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch $mb --global-batch $((4*mb)) --steps 10 --warmup 3 --timing both -J $OUT/r/train-block8-mb$mb.json)
  log commscale "${args[@]}"
  timeout 120 $C "${args[@]}" > $OUT/r/train-block8-mb$mb.txt 2>&1; echo "train mb$mb rc=$?"
  grep -E "step time|per-op timing" $OUT/r/train-block8-mb$mb.txt | head -3
done
args=(train --no-flash-attn --model gpt3-1.3b --micro-batch 4 --global-batch 16 --steps 10 --warmup 3 --timing both -J $OUT/r/train-gpt3-1.3b.json)
log commscale "${args[@]}"; timeout 120 $C "${args[@]}" > $OUT/r/train-gpt3-1.3b.txt 2>&1; echo "train 1.3b rc=$?"; grep -E "step time|per-op timing" $OUT/r/train-gpt3-1.3b.txt | head -3
el trains
args=(calibrate -o $OUT/r/h200x1-calibration.json --cluster h200x1 --description "1 x H200 SXM 141GB (lent GPU machine)")
log commscale "${args[@]}"; timeout 240 $C "${args[@]}" > $OUT/r/calibrate.txt 2>&1; echo "calibrate rc=$?"; tail -25 $OUT/r/calibrate.txt
el done
tar czf $OUT/h200x1-b.tgz -C $OUT r && rm -rf $OUT/r
