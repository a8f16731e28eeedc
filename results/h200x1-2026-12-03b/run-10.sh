#!/bin/bash
# 1 x H200, one device call (~7 minutes), issue 21, after run-9 (same session):
#   - why the executor's GEMMs run 8-12% faster in its step than calibrate's rows of the same shape:
#     run-9's probe ruled out clocks and L2 (launch/gemm_context.py: calibrate's context was the fastest);
#     left is what the operands hold (calibrate's pool keeps the fill pattern; in the step, values go
#     through GEMMs and memory kernels); the same probe over four operand patterns, and `train
#     --gemm-check` (each GEMM shape timed alone on the step's own buffers after the steps);
#   - Llama's eager SwiGLU rows timed as the block runs them (launch/pytorch_kernels.py: fc1's halves,
#     the whole autograd backward), PyTorch's host rows again, and the PyTorch grid with a kernel listing
#     (torch.profiler) of every run outside the host-bound regime.
# Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03b/run-10.sh
set -u
source launch/device-run.sh
device_run_start run-10 555
here=results/h200x1-2026-12-03b
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train" "$W/pytorch/a" "$W/pytorch/b"
device_run_machine

el "2. a GEMM over four operand patterns"
for data in randn commscale zeros nan; do
  cmd "python3 launch/gemm_context.py --data $data --shape 1024,8192,2048 --shape 4096,14336,4096 --contexts sustained-rotated,between-memory -o W/gemm-data-$data.json"
  within 30 470 python3 launch/gemm_context.py --data "$data" --shape 1024,8192,2048 --shape 4096,14336,4096 \
    --contexts sustained-rotated,between-memory -o "$W/gemm-data-$data.json" > "$W/gemm-data-$data.txt" 2>&1
  echo "gemm_context --data $data rc=$?"; grep -v "^#" "$W/gemm-data-$data.txt"
done
save
device_run_build /tmp/b10

el "4. train with --gemm-check"
g2048=(--layers 4 --hidden 2048 --heads 16 --kv-heads 16 --seq 1024 --vocab 0 --micro-batch 1 --global-batch 4)
cmd "mpirun -np 1 commscale train ${g2048[*]} --no-flash-attn --steps 5 --warmup 2 --gemm-check -J W/train/gemm-check-g2048-s1024-mb1-unfused.json"
within 30 380 "${mpi[@]}" "$bin" train "${g2048[@]}" --no-flash-attn --steps 5 --warmup 2 --gemm-check \
  -J "$W/train/gemm-check-g2048-s1024-mb1-unfused.json" > "$W/train/gemm-check-g2048-s1024-mb1-unfused.txt" 2>&1
echo "train --gemm-check rc=$?"; grep -i -A12 "alone\|gemm check" "$W/train/gemm-check-g2048-s1024-mb1-unfused.txt" | head -16
save

el "5. Llama's eager rows (SwiGLU as the block runs it)"
# shellcheck disable=SC2054  # --tokens takes a comma-separated list
llama=(--arch llama --hidden 4096 --heads 32 --ffn 14336 --tokens 1024,4096,16384)
cmd "python3 launch/pytorch_kernels.py ${llama[*]} --base $here/run-9/cal.json -o W/cal-eager-llama.json"
within 70 230 python3 launch/pytorch_kernels.py "${llama[@]}" --base "$here/run-9/cal.json" -o "$W/cal-eager-llama.json" \
  > "$W/pytorch-kernels-llama.txt" 2>&1
echo "pytorch_kernels --arch llama rc=$?"; tail -1 "$W/pytorch-kernels-llama.txt"
save

el "6. PyTorch's host costs, 3 repeats"
cmd "mpirun -np 1 python3 launch/pytorch_host.py --repeats 3 --base $here/run-9/cal-eager.json -o W/cal-full.json --details W/host.json"
within 60 200 "${mpi[@]}" python3 launch/pytorch_host.py --repeats 3 --base "$here/run-9/cal-eager.json" -o "$W/cal-full.json" \
  --details "$W/host.json" > "$W/pytorch-host.txt" 2>&1
echo "pytorch_host rc=$?"; grep "^# pytorch-eager" "$W/pytorch-host.txt"
cmd "python3 launch/pytorch_host.py --base W/cal-eager-llama.json -o W/cal-full-llama.json --fit-only W/host.json"
python3 launch/pytorch_host.py --base "$W/cal-eager-llama.json" -o "$W/cal-full-llama.json" --fit-only "$W/host.json" \
  > "$W/pytorch-host-llama.txt" 2>&1
echo "pytorch_host --fit-only rc=$?"
save

# points.jsonl with a kernel listing of every PyTorch run outside the host-bound regime.
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    p = json.loads(line)
    if p["regime"] != "host-bound":
        p["profile"] = p["pytorch"]
    print(json.dumps(p))' "$points" > "$W/points-profiled.jsonl"
grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"

pytorch_grid() {  # POINTS NAME MAX RESERVE: the PyTorch reference at every run of POINTS -> pytorch/NAME
  python3 launch/regime_grid.py pytorch-grid "$1" --out "$W/pytorch/$2" > /dev/null
  cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/$2/grid.jsonl"
  within "$3" "$4" "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/$2/grid.jsonl" \
    > "$W/pytorch/$2/grid.txt" 2> "$W/pytorch/$2/grid.err"
  echo "pytorch grid $2 rc=$?: $(grep -c step_time_s "$W/pytorch/$2/grid.txt") runs"; tail -1 "$W/pytorch/$2/grid.err"
  python3 launch/regime_grid.py split-pytorch "$W/pytorch/$2/grid.txt" "$W/pytorch/$2"
  save
}

el "7. the PyTorch reference at every point, kernel listings outside the host-bound regime"
pytorch_grid "$W/points-profiled.jsonl" a 230 45
el "8. the host-bound PyTorch runs again"
pytorch_grid "$W/points-host-bound.jsonl" b 60 3
el "done: $OUT/h200x1-run-10.tgz"
