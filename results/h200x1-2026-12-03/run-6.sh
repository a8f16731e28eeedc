#!/bin/bash
# 1 x H200, one device call (~3 minutes), issue 21: how much eager PyTorch's host time varies on this
# machine. Run from the repository's root with $OUT set:
#
#   bash results/h200x1-2026-12-03/run-6.sh
#
#   1. launch/pytorch_host.py three times over run-5's profile (host-1..3.json, pytorch-host-1..3.json):
#      does the fit repeat?
#   2. eager PyTorch at the 8 host-bound runs of points.jsonl, twice, with 30 timed steps after 5
#      warm-up steps instead of 5 after 2 (pytorch/a30, pytorch/b30): do more steps make a run repeat?
set -u
: "${OUT:?set OUT to the folder the results go to}"
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
points=results/h200x1-2026-12-02b/points.jsonl
base=results/h200x1-2026-12-03/run-5/cal-eager-llama.json
W=/tmp/run6
rm -rf "$W" && mkdir -p "$W/pytorch/a30" "$W/pytorch/b30" "$OUT"
save() { tar czf "$OUT/h200x1-run-6.tgz.part" -C /tmp run6 && mv "$OUT/h200x1-run-6.tgz.part" "$OUT/h200x1-run-6.tgz"; }
export PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np 1 --bind-to none)
: > "$W/commands.txt"
cmd() { echo "$*" >> "$W/commands.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1 | tail -1
  nproc; uptime
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"

for i in 1 2 3; do
  el "1.$i pytorch_host.py"
  cmd "mpirun -np 1 python3 launch/pytorch_host.py --base $base -o W/host-$i.json --details W/pytorch-host-$i.json"
  timeout 90 "${mpi[@]}" python3 launch/pytorch_host.py --base "$base" -o "$W/host-$i.json" \
    --details "$W/pytorch-host-$i.json" > "$W/pytorch-host-$i.txt" 2>&1
  echo "rc=$?"; grep "^# pytorch-eager" "$W/pytorch-host-$i.txt"
  save
done

grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"
for s in a30 b30; do
  el "2.$s eager PyTorch, 30 steps"
  python3 launch/regime_grid.py pytorch-grid "$W/points-host-bound.jsonl" --out "$W/pytorch/$s" > /dev/null
  sed -i 's/"steps": 5, "warmup": 2/"steps": 30, "warmup": 5/' "$W/pytorch/$s/grid.jsonl"
  cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/$s/grid.jsonl  # steps 30, warmup 5"
  timeout 150 "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/$s/grid.jsonl" \
    > "$W/pytorch/$s/grid.txt" 2> "$W/pytorch/$s/grid.err"
  echo "rc=$?: $(grep -c '"steps": 30' "$W/pytorch/$s/grid.txt") points of 30 steps"
  python3 launch/regime_grid.py split-pytorch "$W/pytorch/$s/grid.txt" "$W/pytorch/$s"
  save
done
el "done"
