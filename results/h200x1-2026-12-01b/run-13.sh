#!/bin/bash
# Where the PyTorch reference's step goes: kernel profiles (eager and compiled) at micro-batch 1 and 2.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
common=(--mode dp --layers 8 --hidden 4096 --heads 32 --seq 2048 --microbatches 4 --steps 10 --warmup 3)
for mb in 1 2; do
  timeout 150 mpirun -np 1 python3 launch/pytorch_reference.py "${common[@]}" --micro-batch $mb --profile $OUT/r/prof-eager-mb$mb.json 2>&1 | tail -3
  el eager mb$mb
done
timeout 240 mpirun -np 1 python3 launch/pytorch_reference.py "${common[@]}" --micro-batch 2 --compile --profile $OUT/r/prof-compile-mb2.json 2>&1 | tail -3
el compile
timeout 150 mpirun -np 1 python3 launch/pytorch_reference.py "${common[@]}" --micro-batch 2 --attention sdpa --profile $OUT/r/prof-sdpa-mb2.json 2>&1 | tail -3
el sdpa
tar czf $OUT/prof.tgz -C $OUT r && rm -rf $OUT/r
