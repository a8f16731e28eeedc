#!/bin/bash
# 1 x H200: the PyTorch reference fused (SDPA flash attention, torch.compile) against commscale train
# --flash-attn, and unfused against unfused, in one call.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 --target commscale >> /tmp/build.log 2>&1; echo "build rc=$?"
el built
C=/tmp/b/src/commscale
log() { echo "# $*" >> $OUT/r/commands.txt; }
cs() { local name=$1; shift; log commscale "$@"; timeout 100 $C "$@" > $OUT/r/$name.txt 2>&1; echo "$name rc=$? $(grep -E '^step time' $OUT/r/$name.txt)"; }
pt() { local name=$1; shift; log mpirun -np 1 python3 launch/pytorch_reference.py "$@"; timeout 170 mpirun -np 1 python3 launch/pytorch_reference.py "$@" > $OUT/r/$name.txt 2>&1; echo "$name rc=$? $(tail -1 $OUT/r/$name.txt | cut -c1-400)"; }
for mb in 1 2 4; do
  cs cs-flash-mb$mb train --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch $mb --global-batch $((4*mb)) --steps 10 --warmup 3 --flash-attn -J $OUT/r/cs-flash-mb$mb.json
  pt pt-sdpa-compile-mb$mb --mode dp --layers 8 --hidden 4096 --heads 32 --seq 2048 --micro-batch $mb --microbatches 4 --steps 10 --warmup 3 --attention sdpa --compile
  el mb$mb
done
cs cs-unfused-mb2 train --no-flash-attn --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch 2 --global-batch 8 --steps 10 --warmup 3 -J $OUT/r/cs-unfused-mb2.json
pt pt-sdpa-mb2 --mode dp --layers 8 --hidden 4096 --heads 32 --seq 2048 --micro-batch 2 --microbatches 4 --steps 10 --warmup 3 --attention sdpa
pt pt-unfused-compile-mb2 --mode dp --layers 8 --hidden 4096 --heads 32 --seq 2048 --micro-batch 2 --microbatches 4 --steps 10 --warmup 3 --compile
el done
tar czf $OUT/h200x1-d.tgz -C $OUT r && rm -rf $OUT/r
