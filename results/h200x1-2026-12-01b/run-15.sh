#!/bin/bash
# Calibration with and without --heat-ms, new attention-batch grid; train points (unfused and flash,
# micro-batch 1 and 2) with --gemm-check and --timeline, in the same call, 1 x H200.
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
log() { echo "$*" >> $OUT/r/commands.txt; }
for heat in 0 20; do
  args=(calibrate -o $OUT/r/cal-heat$heat.json --measure gemm,memory --heat-ms $heat --cluster h200x1 --description "1 x H200 SXM 141GB (lent GPU machine)")
  log "commscale ${args[*]}"
  timeout 200 $C "${args[@]}" > $OUT/r/cal-heat$heat.txt 2>&1; echo "calibrate heat $heat rc=$?"; tail -2 $OUT/r/cal-heat$heat.txt
  el calibrate heat $heat
done
for attn in unfused flash; do
  for mb in 1 2; do
    f=(--no-flash-attn); [ $attn = flash ] && f=(--flash-attn)
    args=(train --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch $mb --global-batch $((4 * mb)) "${f[@]}" --steps 10 --warmup 3 --timing both --gemm-check -J $OUT/r/train-$attn-mb$mb.json --timeline $OUT/r/timeline-$attn-mb$mb.json)
    log "commscale ${args[*]}"
    timeout 100 $C "${args[@]}" > $OUT/r/train-$attn-mb$mb.txt 2>&1; echo "train $attn mb$mb rc=$?"; grep -E "^step time" $OUT/r/train-$attn-mb$mb.txt
  done
done
el trains
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
tar czf $OUT/cal.tgz -C $OUT r && rm -rf $OUT/r
