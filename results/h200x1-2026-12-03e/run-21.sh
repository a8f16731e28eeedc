#!/bin/bash
# 1 x H200, one device call (~8 minutes), issue 21: eager PyTorch's host time per microbatch and per
# layer measured apart (host_layers.py: pytorch_host.py's four block stacks at 1-8 layers and 1-4
# microbatches, a GPT SDPA stack without dropout, and the 8 host-bound runs, interleaved rounds), and
# whether calibrate's tiny-GEMM times are the GPU's or the host's (gemm_spin.py).
# Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03e/run-21.sh
set -u
source launch/device-run.sh
device_run_start run-21 560
here=results/h200x1-2026-12-03e
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/layers"
device_run_machine

el "tiny GEMMs from an idle GPU and behind a spin"
cmd "python3 $here/gemm_spin.py"
within 60 480 python3 "$here/gemm_spin.py" > "$W/gemm_spin.txt" 2>&1
echo "gemm_spin rc=$?"; cat "$W/gemm_spin.txt"
save

el "host stacks by layers and microbatches, host-bound runs, interleaved rounds"
grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"
python3 launch/regime_grid.py pytorch-grid "$W/points-host-bound.jsonl" --out "$W/layers" > /dev/null
cmd "mpirun -np 1 python3 $here/host_layers.py --grid W/layers/grid.jsonl --out W/layers --rounds 40 --budget-s 400"
within 460 10 "${mpi[@]}" python3 "$here/host_layers.py" --grid "$W/layers/grid.jsonl" --out "$W/layers" \
  --rounds 40 --budget-s 400 > "$W/layers/layers.txt" 2> "$W/layers/layers.err"
echo "host_layers rc=$?"; tail -2 "$W/layers/layers.err"; grep -c "^r" "$W/layers/layers.txt"
save
el "done: $OUT/h200x1-run-21.tgz"
