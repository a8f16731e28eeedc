#!/bin/bash
# 1 x H200, one device call (~3 minutes), issue 21: SDPA attention rows with GPT's dropout, and eager
# PyTorch's GPT SDPA runs that are not host-bound, in the same call. Run from the repository's root with
# $OUT set:
#
#   bash results/h200x1-2026-12-03/run-7.sh
#
#   1. launch/pytorch_kernels.py --base run-5/cal.json (GPT eager rows; SDPA rows without and with
#      dropout_p=0.1)                                                          -> cal-eager.json
#   2. eager PyTorch at the GPT SDPA runs of points.jsonl outside the host-bound regime (pytorch/)
set -u
: "${OUT:?set OUT to the folder the results go to}"
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
points=results/h200x1-2026-12-02b/points.jsonl
W=/tmp/run7
rm -rf "$W" && mkdir -p "$W/pytorch" "$OUT"
save() { tar czf "$OUT/h200x1-run-7.tgz.part" -C /tmp run7 && mv "$OUT/h200x1-run-7.tgz.part" "$OUT/h200x1-run-7.tgz"; }
export PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np 1 --bind-to none)
: > "$W/commands.txt"
cmd() { echo "$*" >> "$W/commands.txt"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1 | tail -1
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"

el "1. PyTorch's eager GPT kernels and SDPA rows, with and without dropout"
cmd "python3 launch/pytorch_kernels.py --base results/h200x1-2026-12-03/run-5/cal.json -o W/cal-eager.json"
timeout 200 python3 launch/pytorch_kernels.py --base results/h200x1-2026-12-03/run-5/cal.json -o "$W/cal-eager.json" \
  > "$W/pytorch-kernels.txt" 2>&1
echo "pytorch_kernels rc=$?"; tail -1 "$W/pytorch-kernels.txt"
save

el "2. eager PyTorch, GPT SDPA runs outside the host-bound regime"
grep -v '"regime": "host-bound"' "$points" | grep -v '"arch": "llama"' > "$W/points-gpt.jsonl"
python3 launch/regime_grid.py pytorch-grid "$W/points-gpt.jsonl" --out "$W/pytorch" > /dev/null
grep '"attention": "sdpa"' "$W/pytorch/grid.jsonl" > "$W/pytorch/grid-sdpa.jsonl"
cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/grid-sdpa.jsonl"
timeout 200 "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/grid-sdpa.jsonl" \
  > "$W/pytorch/grid.txt" 2> "$W/pytorch/grid.err"
echo "pytorch grid rc=$?: $(grep -c step_time_s "$W/pytorch/grid.txt") points"; tail -1 "$W/pytorch/grid.err"
python3 launch/regime_grid.py split-pytorch "$W/pytorch/grid.txt" "$W/pytorch"
save
el "done"
