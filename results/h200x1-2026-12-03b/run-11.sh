#!/bin/bash
# 1 x H200, one device call (~4 minutes), issue 21, after run-10 (same session): the eager profiles with
# PyTorch's own GEMMs and fused AdamW (launch/pytorch_kernels.py --gemms; optimizer rows), and the
# PyTorch reference again at every point outside the host-bound regime, on the same machine. No
# commscale build: the predictions are made afterwards from the committed outputs. Run from the
# repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03b/run-11.sh
set -u
source launch/device-run.sh
device_run_start run-11 330
here=results/h200x1-2026-12-03b
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/pytorch/a"
device_run_machine

el "2. GPT's eager rows, PyTorch's GEMMs and AdamW"
cmd "python3 launch/pytorch_kernels.py --gemms --base $here/run-9/cal.json -o W/cal-eager.json"
within 130 170 python3 launch/pytorch_kernels.py --gemms --base "$here/run-9/cal.json" -o "$W/cal-eager.json" \
  > "$W/pytorch-kernels.txt" 2>&1
echo "pytorch_kernels --gemms rc=$?"; tail -1 "$W/pytorch-kernels.txt"; grep -E "optimizer|  8192 x   8192 x   8192" "$W/pytorch-kernels.txt"
save

el "3. Llama's eager rows over it"
# shellcheck disable=SC2054  # --tokens takes a comma-separated list
llama=(--arch llama --hidden 4096 --heads 32 --ffn 14336 --tokens 1024,4096,16384)
cmd "python3 launch/pytorch_kernels.py ${llama[*]} --base W/cal-eager.json -o W/cal-eager-llama.json"
within 60 135 python3 launch/pytorch_kernels.py "${llama[@]}" --base "$W/cal-eager.json" -o "$W/cal-eager-llama.json" \
  > "$W/pytorch-kernels-llama.txt" 2>&1
echo "pytorch_kernels --arch llama rc=$?"; tail -1 "$W/pytorch-kernels-llama.txt"
save

el "4. the PyTorch reference outside the host-bound regime"
grep -v '"regime": "host-bound"' "$points" > "$W/points-gpu-bound.jsonl"
python3 launch/regime_grid.py pytorch-grid "$W/points-gpu-bound.jsonl" --out "$W/pytorch/a" > /dev/null
cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/a/grid.jsonl"
within 200 3 "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/a/grid.jsonl" \
  > "$W/pytorch/a/grid.txt" 2> "$W/pytorch/a/grid.err"
echo "pytorch grid rc=$?: $(grep -c step_time_s "$W/pytorch/a/grid.txt") runs"
python3 launch/regime_grid.py split-pytorch "$W/pytorch/a/grid.txt" "$W/pytorch/a"
save
el "done: $OUT/h200x1-run-11.tgz"
