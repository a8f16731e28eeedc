#!/bin/bash
# 1 x H200, one device call (~5 minutes): doctor's SM-hog case after its GEMM is timed by wall clock
# (issue 22), and eager PyTorch's host costs taken behind a spin kernel (issue 21), each beside what it
# is checked against. Run from the repository's root with $OUT set:
#
#   bash results/h200x1-2026-12-02c/run-3.sh
#
#   1. launch/gpu-doctor.sh OUT/doctor: builds commscale and the GPU tests (Release, /root/b), the
#      GpuDoctor tests, doctor healthy (must exit 0) and --inject-sm-hog 0:0.5 (must exit 6)
#   2. launch/pytorch_host.py --base results/h200x1-2026-12-02b/run-2/cal-eager.json (the profile of
#      the previous call: GEMM, memory, eager and attention rows) -> cal-full.json with new host rows
#   3. the PyTorch reference at the host-bound points of results/h200x1-2026-12-02b/points.jsonl
#   4. train --kernels eager --flash-attn --host-framework pytorch-eager --calibration cal-full.json at
#      the points marked host_framework, right after 3 (the same GPU state)
# Everything is tarred into $OUT/h200x1-run-3.tgz after each step.
set -u
: "${OUT:?set OUT to the folder the results go to}"
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
here=results/h200x1-2026-12-02b
W=/tmp/run3
rm -rf "$W" && mkdir -p "$W/train" "$W/pytorch" "$OUT"
save() { tar czf "$OUT/h200x1-run-3.tgz.part" -C /tmp run3 && mv "$OUT/h200x1-run-3.tgz.part" "$OUT/h200x1-run-3.tgz"; }
export PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np 1 --bind-to none)
: > "$W/commands.txt"
cmd() { echo "$*" >> "$W/commands.txt"; }

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1 | tail -1
  g++ --version | head -1; cmake --version | head -1
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"

el "1. doctor"
cmd "COMMSCALE_BUILD=/root/b launch/gpu-doctor.sh OUT/doctor"
COMMSCALE_BUILD=/root/b timeout 300 launch/gpu-doctor.sh "$OUT/doctor" > "$W/gpu-doctor.txt" 2>&1
echo "gpu-doctor rc=$?"; tail -25 "$W/gpu-doctor.txt"
bin=/root/b/src/commscale
save

el "2. PyTorch's host costs behind a spin kernel"
cmd "mpirun -np 1 python3 launch/pytorch_host.py --base $here/run-2/cal-eager.json -o W/cal-full.json --details W/pytorch-host.json"
timeout 120 "${mpi[@]}" python3 launch/pytorch_host.py --base "$here/run-2/cal-eager.json" -o "$W/cal-full.json" \
  --details "$W/pytorch-host.json" > "$W/pytorch-host.txt" 2>&1
echo "pytorch_host rc=$?"; tail -8 "$W/pytorch-host.txt"
save

el "3. PyTorch at the host-bound points"
grep '"regime": "host-bound"' "$here/points.jsonl" > "$W/points.jsonl"
python3 launch/regime_grid.py pytorch-grid "$W/points.jsonl" --out "$W/pytorch" > /dev/null
cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/grid.jsonl"
timeout 150 "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/grid.jsonl" \
  > "$W/pytorch/grid.txt" 2> "$W/pytorch/grid.err"
echo "pytorch grid rc=$?: $(grep -c step_time_s "$W/pytorch/grid.txt") points"; tail -2 "$W/pytorch/grid.err"
python3 launch/regime_grid.py split-pytorch "$W/pytorch/grid.txt" "$W/pytorch"
save

el "4. train at PyTorch's host costs"
if [ -x "$bin" ] && [ -s "$W/cal-full.json" ]; then
  cmd "python3 launch/regime_grid.py host-framework W/points.jsonl --commscale commscale --out W/train --calibration W/cal-full.json"
  timeout 90 python3 launch/regime_grid.py host-framework "$W/points.jsonl" --commscale "$bin" \
    --out "$W/train" --calibration "$W/cal-full.json" --budget-s 80
fi
python3 launch/regime_grid.py table "$W/points.jsonl" --train "$W/train" --pytorch "$W/pytorch" | tee "$W/table.txt"
save
el "done: $OUT/h200x1-run-3.tgz"
