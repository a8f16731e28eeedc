#!/bin/bash
# Second call: launch/pytorch_kernels.py after its fixes (kernels timed behind a spin kernel, not with
# the host's dispatch; the QKV gradient's cat and copy in the step's layouts; softmax of masked
# scores), then the PyTorch reference again at run-20's points, and one kernel profile of each
# attention at micro-batch 2. PyTorch only: nothing of commscale runs here (the predictions run on a
# CPU machine). 1 x H200.
set -u
export PYTHONUNBUFFERED=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee $OUT/r/machine.txt
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())" | tee -a $OUT/r/machine.txt
echo "commscale $(cat ../sha)" >> $OUT/r/machine.txt
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
    prof=()
    if [ "$n" = base-mb2 ]; then prof=(--profile $OUT/r/prof-$att-$n.json); fi
    echo "mpirun -np 1 python3 launch/pytorch_reference.py ${py[*]} --attention $att ${prof[*]/$OUT/OUT}" >> $OUT/r/commands.txt
    timeout 120 mpirun -np 1 python3 launch/pytorch_reference.py "${py[@]}" --attention $att "${prof[@]}" > $OUT/r/pytorch-$att-$n.txt 2>/tmp/err.txt; echo "pytorch $att $n rc=$?"; tail -1 /tmp/err.txt; tail -1 $OUT/r/pytorch-$att-$n.txt
  done
  el $n
done
tar czf $OUT/r21.tgz -C $OUT r && rm -rf $OUT/r
