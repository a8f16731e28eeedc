#!/bin/bash
# 1 x H200: GPU tests; train of the GPT block stack (h4096, 32 heads, seq 2048, 8 layers, bf16) at
# micro-batch 1, 2, 4 with per-op cost and GEMM checks; the PyTorch reference at the same shapes; a
# full GPT-3 1.3B; topo and p2p.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
(nvidia-smi; nvcc --version | tail -2; python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())') > $OUT/r/machine.txt 2>&1
timeout 240 mpirun -np 1 /tmp/b/tests/commscale_gpu_tests > $OUT/r/gpu-tests-np1.log 2>&1; echo "gpu tests rc=$?"; grep -E "OK \]|FAILED|Failure|SKIPPED \]" $OUT/r/gpu-tests-np1.log | head -30
el tests
C=/tmp/b/src/commscale
log() { echo "# $*" >> $OUT/r/commands.txt; }
for mb in 1 2 4; do
  args=(train --no-flash-attn --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch $mb --global-batch $((4*mb)) --steps 10 --warmup 3 --timing both --gemm-check -J $OUT/r/train-block8-mb$mb.json)
  [ $mb = 2 ] && args+=(--trace $OUT/r/trace-block8-mb2.json)
  log commscale "${args[@]}"
  timeout 150 $C "${args[@]}" > $OUT/r/train-block8-mb$mb.txt 2>&1; echo "train mb$mb rc=$?"
  [ $mb = 2 ] && cat $OUT/r/train-block8-mb$mb.txt | head -80
  grep -iE "step time|overhead|gemm check|worst|tokens" $OUT/r/train-block8-mb$mb.txt | head -12
  pargs=(--mode dp --layers 8 --hidden 4096 --heads 32 --seq 2048 --micro-batch $mb --microbatches 4 --steps 10 --warmup 3)
  log mpirun -np 1 python3 launch/pytorch_reference.py "${pargs[@]}"
  timeout 150 mpirun -np 1 python3 launch/pytorch_reference.py "${pargs[@]}" > $OUT/r/pytorch-block8-mb$mb.txt 2>&1; echo "pytorch mb$mb rc=$?"; tail -3 $OUT/r/pytorch-block8-mb$mb.txt
  el mb$mb
done
args=(train --no-flash-attn --model gpt3-1.3b --micro-batch 4 --global-batch 16 --steps 5 --warmup 2 --timing both -J $OUT/r/train-gpt3-1.3b.json)
log commscale "${args[@]}"; timeout 120 $C "${args[@]}" > $OUT/r/train-gpt3-1.3b.txt 2>&1; echo "train 1.3b rc=$?"; head -40 $OUT/r/train-gpt3-1.3b.txt
el train-1.3b
if [ -x launch/gpu-topo-p2p.sh ]; then timeout 120 bash launch/gpu-topo-p2p.sh "$C" $OUT/r/topo > $OUT/r/topo-p2p.log 2>&1; echo "topo-p2p rc=$?"; tail -30 $OUT/r/topo-p2p.log; fi
el done
tar czf $OUT/h200x1.tgz -C $OUT r && rm -rf $OUT/r
