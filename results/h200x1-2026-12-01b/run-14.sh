#!/bin/bash
# Flash attention side by side: commscale train --flash-attn against PyTorch SDPA (flash kernel, 4-D
# layout), eager and compiled, micro-batch 1/2/4, block stack h4096/32 heads/seq 2048/8 layers, 1 x H200.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
C=/tmp/b/src/commscale
py=(--mode dp --layers 8 --hidden 4096 --heads 32 --seq 2048 --microbatches 4 --steps 10 --warmup 3)
: > $OUT/r/commands.txt
for mb in 1 2 4; do
  args=(train --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch $mb --global-batch $((4 * mb)) --flash-attn --steps 10 --warmup 3 --timing both -J $OUT/r/train-flash-mb$mb.json)
  echo "commscale ${args[*]}" >> $OUT/r/commands.txt
  timeout 100 $C "${args[@]}" > $OUT/r/train-flash-mb$mb.txt 2>&1; echo "train mb$mb rc=$?"; grep -E "^step time" $OUT/r/train-flash-mb$mb.txt
  prof=(); [ $mb = 2 ] && prof=(--profile $OUT/r/prof-sdpa-mb2.json)
  echo "mpirun -np 1 python3 launch/pytorch_reference.py ${py[*]} --micro-batch $mb --attention sdpa ${prof[*]}" >> $OUT/r/commands.txt
  timeout 150 mpirun -np 1 python3 launch/pytorch_reference.py "${py[@]}" --micro-batch $mb --attention sdpa "${prof[@]}" > $OUT/r/pytorch-sdpa-mb$mb.txt 2>/tmp/err.txt; echo "pytorch sdpa mb$mb rc=$?"; tail -2 /tmp/err.txt; cat $OUT/r/pytorch-sdpa-mb$mb.txt
  el mb$mb
done
echo "mpirun -np 1 python3 launch/pytorch_reference.py ${py[*]} --micro-batch 2 --attention sdpa --compile --profile OUT/prof-sdpa-compile-mb2.json" >> $OUT/r/commands.txt
timeout 240 mpirun -np 1 python3 launch/pytorch_reference.py "${py[@]}" --micro-batch 2 --attention sdpa --compile --profile $OUT/r/prof-sdpa-compile-mb2.json > $OUT/r/pytorch-sdpa-compile-mb2.txt 2>/tmp/err.txt; echo "compile rc=$?"; tail -2 /tmp/err.txt; cat $OUT/r/pytorch-sdpa-compile-mb2.txt
el compile
tar czf $OUT/flash.tgz -C $OUT r && rm -rf $OUT/r
