#!/bin/bash
# 1 x H200, one device call (~6 minutes), issue 21: run-4 again with the memory kernel of before (run-4's
# four-loads-in-flight kernel ran the step's memory kernels 5-17% slower and was taken back), PyTorch's
# host costs fitted with an attention-call class where the tree has one, and eager PyTorch at the
# host-bound points three times pinned to one CPU core. Run from the repository's root with $OUT set:
#
#   bash results/h200x1-2026-12-03/run-5.sh
#
#   1. machine.txt; 2. build commscale (Release, sm_90, no tests)
#   3. calibrate --measure gemm,memory,host,interference --heat-ms 20           -> cal.json
#   4. launch/pytorch_kernels.py (GPT eager rows, SDPA rows), then --arch llama  -> cal-eager-llama.json
#   5. launch/pytorch_host.py (host rows pytorch-eager, megatron)                -> cal-full.json
#   6. train at the 17 runs of results/h200x1-2026-12-02b/points.jsonl (4 with --timeline)
#   7. eager PyTorch at the host-bound points of points.jsonl, three times, each under taskset -c 2
#      (pytorch/a, b, c): run-2 to run-4 varied up to 40% from one sample to the next, unpinned
#   8. train --kernels eager --flash-attn --host-framework pytorch-eager --calibration cal-full.json at
#      the points marked host_framework
# Every step runs under timeout within what is left of LIMIT (540 s); the work folder is tarred into
# $OUT/h200x1-run-5.tgz after each step.
set -u
: "${OUT:?set OUT to the folder the results go to}"
T0=$(date +%s)
LIMIT=${RUN5_LIMIT_S:-540}
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
budget() {  # budget MAX RESERVE: at most MAX seconds, leaving RESERVE for the steps after
  local b=$(( $(left) - $2 ))
  if [ "$b" -gt "$1" ]; then b=$1; fi
  if [ "$b" -lt 5 ]; then b=0; fi
  echo "$b"
}
points=results/h200x1-2026-12-02b/points.jsonl
W=/tmp/run5
rm -rf "$W" && mkdir -p "$W/train" "$W/pytorch/a" "$W/pytorch/b" "$W/pytorch/c" "$OUT"
save() { tar czf "$OUT/h200x1-run-5.tgz.part" -C /tmp run5 && mv "$OUT/h200x1-run-5.tgz.part" "$OUT/h200x1-run-5.tgz"; }
export PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np 1 --bind-to none)
: > "$W/commands.txt"
cmd() { echo "$*" >> "$W/commands.txt"; }  # the command lines as run (W: the work folder)

el "1. machine"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())" 2>&1 | tail -1
  g++ --version | head -1; cmake --version | head -1; nvcc --version 2>&1 | tail -1
  echo "commscale $(git rev-parse --short=12 HEAD 2>/dev/null)$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)"
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"

el "2. build"
bin=/tmp/b5/src/commscale
build="cmake -S . -B /tmp/b5 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_TESTS=OFF && cmake --build /tmp/b5 -j 16 --target commscale"
cmd "$build"
timeout 240 bash -c "$build" > "$W/build.log" 2>&1
echo "build rc=$?"; grep -ciE "warning:" "$W/build.log" | sed 's/^/compiler warnings: /'
if [ ! -x "$bin" ]; then tail -20 "$W/build.log"; save; echo "no commscale binary: stopping"; exit 1; fi
save

el "3. calibrate"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory,host,interference --heat-ms 20 --cluster h200x1"
timeout "$(budget 150 330)" "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory,host,interference \
  --heat-ms 20 --cluster h200x1 > "$W/calibrate.txt" 2>&1
rc=$?; echo "calibrate rc=$rc"; grep -E "^memory|^host" "$W/calibrate.txt" | tail -16
save

el "4. PyTorch's eager kernels and attention (GPT, then Llama)"
cmd "python3 launch/pytorch_kernels.py --base W/cal.json -o W/cal-eager.json"
timeout "$(budget 75 290)" python3 launch/pytorch_kernels.py --base "$W/cal.json" -o "$W/cal-eager.json" \
  > "$W/pytorch-kernels.txt" 2>&1
echo "pytorch_kernels rc=$?"; tail -1 "$W/pytorch-kernels.txt"
cmd "python3 launch/pytorch_kernels.py --arch llama --hidden 4096 --heads 32 --ffn 14336 --tokens 1024,4096,16384 --base W/cal-eager.json -o W/cal-eager-llama.json"
timeout "$(budget 60 260)" python3 launch/pytorch_kernels.py --arch llama --hidden 4096 --heads 32 --ffn 14336 \
  --tokens 1024,4096,16384 --base "$W/cal-eager.json" -o "$W/cal-eager-llama.json" > "$W/pytorch-kernels-llama.txt" 2>&1
echo "pytorch_kernels --arch llama rc=$?"; tail -1 "$W/pytorch-kernels-llama.txt"
save

el "5. PyTorch's host costs"
cmd "mpirun -np 1 python3 launch/pytorch_host.py --base W/cal-eager-llama.json -o W/cal-full.json --details W/pytorch-host.json"
timeout "$(budget 60 240)" "${mpi[@]}" python3 launch/pytorch_host.py --base "$W/cal-eager-llama.json" \
  -o "$W/cal-full.json" --details "$W/pytorch-host.json" > "$W/pytorch-host.txt" 2>&1
echo "pytorch_host rc=$?"; tail -4 "$W/pytorch-host.txt"
for profile in cal.json cal-full.json; do  # each profile must load where predict reads it
  "$bin" predict --layers 2 --hidden 1024 --heads 16 --seq 512 --vocab 0 --cluster h200x1 \
    --calibration "$W/$profile" > "$W/check-$profile.txt" 2>&1
  rc=$?; echo "predict --calibration $profile: rc=$rc $(if [ "$rc" != 0 ]; then tail -1 "$W/check-$profile.txt"; fi)"
done
save

el "6. train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
timeout "$(budget 200 90)" python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" \
  --budget-s "$(budget 185 100)"
save

el "7. eager PyTorch at the host-bound points, three times, pinned to CPU 2"
grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"
for s in a b c; do
  python3 launch/regime_grid.py pytorch-grid "$W/points-host-bound.jsonl" --out "$W/pytorch/$s" > /dev/null
  cmd "mpirun -np 1 taskset -c 2 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/$s/grid.jsonl"
  timeout "$(budget 60 40)" "${mpi[@]}" taskset -c 2 python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/$s/grid.jsonl" \
    > "$W/pytorch/$s/grid.txt" 2> "$W/pytorch/$s/grid.err"
  echo "pytorch grid $s rc=$?: $(grep -c step_time_s "$W/pytorch/$s/grid.txt") points"; tail -1 "$W/pytorch/$s/grid.err"
  python3 launch/regime_grid.py split-pytorch "$W/pytorch/$s/grid.txt" "$W/pytorch/$s"
  save
done
el "8. train at PyTorch's host costs"
cmd "python3 launch/regime_grid.py host-framework W/points-host-bound.jsonl --commscale commscale --out W/train --calibration W/cal-full.json"
timeout "$(budget 45 3)" python3 launch/regime_grid.py host-framework "$W/points-host-bound.jsonl" --commscale "$bin" \
  --out "$W/train" --calibration "$W/cal-full.json" --budget-s "$(budget 40 5)"
python3 launch/regime_grid.py table "$points" --train "$W/train" --pytorch "$W/pytorch/a" | tee "$W/table.txt"
save
el "done: $OUT/h200x1-run-5.tgz"
