#!/bin/bash
# Eager PyTorch's memory-bound kernels timed into a calibration profile (launch/pytorch_kernels.py),
# then the PyTorch reference and commscale train at the points the prediction is checked on: the block
# stack of the earlier calls (h4096, 32 heads, seq 2048, 8 layers) at micro-batch 1/2/4, and two shapes
# that none of the fitting looked at (h2048/16 heads/seq 1024 at micro-batch 4, h5120/40 heads/seq 4096
# at micro-batch 1), unfused and SDPA attention. 4 microbatches per step, 1 x H200.
set -u
export PYTHONUNBUFFERED=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $OUT/r/machine.txt
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())" | tee -a $OUT/r/machine.txt
nvcc --version | tail -2 >> $OUT/r/machine.txt; echo "commscale $(cat ../sha)" >> $OUT/r/machine.txt
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 --target commscale >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
C=/tmp/b/src/commscale
: > $OUT/r/commands.txt
echo "python3 launch/pytorch_kernels.py --base results/h200x1-2026-12-01b/calibration/cal-heat20.json -o OUT/cal-eager.json" >> $OUT/r/commands.txt
timeout 200 python3 launch/pytorch_kernels.py --base results/h200x1-2026-12-01b/calibration/cal-heat20.json -o $OUT/r/cal-eager.json > $OUT/r/pytorch-kernels.txt 2>&1; echo "kernels rc=$?"; tail -3 $OUT/r/pytorch-kernels.txt
el kernels
# name hidden heads seq micro-batch
points=("base-mb1 4096 32 2048 1" "base-mb2 4096 32 2048 2" "base-mb4 4096 32 2048 4" "small-mb4 2048 16 1024 4" "large-mb1 5120 40 4096 1")
for pt in "${points[@]}"; do
  read -r n h a s mb <<< "$pt"
  py=(--mode dp --layers 8 --hidden $h --heads $a --seq $s --micro-batch $mb --microbatches 4 --steps 10 --warmup 3)
  for att in unfused sdpa; do
    echo "mpirun -np 1 python3 launch/pytorch_reference.py ${py[*]} --attention $att" >> $OUT/r/commands.txt
    timeout 120 mpirun -np 1 python3 launch/pytorch_reference.py "${py[@]}" --attention $att > $OUT/r/pytorch-$att-$n.txt 2>/tmp/err.txt; echo "pytorch $att $n rc=$?"; tail -1 /tmp/err.txt; tail -1 $OUT/r/pytorch-$att-$n.txt
  done
  case $n in base-*) ;; *)
    for fl in "--no-flash-attn" "--flash-attn"; do
      tag=fused; [ "$fl" = --flash-attn ] && tag=fused-flash
      args=(train --layers 8 --hidden $h --heads $a --seq $s --vocab 0 --micro-batch $mb --global-batch $((4 * mb)) $fl --steps 10 --warmup 3 --timing both -J $OUT/r/train-$tag-$n.json)
      echo "commscale ${args[*]}" >> $OUT/r/commands.txt
      timeout 100 $C "${args[@]}" > $OUT/r/train-$tag-$n.txt 2>&1; echo "train $tag $n rc=$?"; grep -E "^step time" $OUT/r/train-$tag-$n.txt
    done ;;
  esac
  el $n
done
tar czf $OUT/r20.tgz -C $OUT r && rm -rf $OUT/r
