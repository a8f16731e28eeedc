#!/bin/bash
# 1 x H200, one device call (~8 minutes), issue 21: commscale's own step after the memory kernel keeps
# several loads in flight, a profile whose attention GEMM grid reaches 8192, and a second and third
# sample of eager PyTorch at the host-bound points. Run from the repository's root with $OUT set:
#
#   bash results/h200x1-2026-12-03/run-4.sh
#
#   1. machine.txt; 2. build commscale (Release, sm_90, no tests)
#   3. calibrate --measure gemm,memory,host,interference --heat-ms 20           -> cal.json
#   4. launch/pytorch_kernels.py (GPT eager rows, SDPA rows), then --arch llama  -> cal-eager-llama.json
#   5. launch/pytorch_host.py (host rows pytorch-eager, megatron)                -> cal-full.json
#   6. train at the 17 runs of results/h200x1-2026-12-02b/points.jsonl (4 with --timeline)
#   7. eager PyTorch at the host-bound points of points.jsonl, twice (pytorch/a, pytorch/b)
# Every step runs under timeout within what is left of LIMIT (540 s); the work folder is tarred into
# $OUT/h200x1-run-4.tgz after each step.
set -u
: "${OUT:?set OUT to the folder the results go to}"
T0=$(date +%s)
LIMIT=${RUN4_LIMIT_S:-540}
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
budget() {  # budget MAX RESERVE: at most MAX seconds, leaving RESERVE for the steps after
  local b=$(( $(left) - $2 ))
  if [ "$b" -gt "$1" ]; then b=$1; fi
  if [ "$b" -lt 5 ]; then b=0; fi
  echo "$b"
}
points=results/h200x1-2026-12-02b/points.jsonl
W=/tmp/run4
rm -rf "$W" && mkdir -p "$W/train" "$W/pytorch/a" "$W/pytorch/b" "$OUT"
save() { tar czf "$OUT/h200x1-run-4.tgz.part" -C /tmp run4 && mv "$OUT/h200x1-run-4.tgz.part" "$OUT/h200x1-run-4.tgz"; }
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
bin=/tmp/b4/src/commscale
build="cmake -S . -B /tmp/b4 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_TESTS=OFF && cmake --build /tmp/b4 -j 16 --target commscale"
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

el "7. eager PyTorch at the host-bound points, twice"
grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"
for s in a b; do
  python3 launch/regime_grid.py pytorch-grid "$W/points-host-bound.jsonl" --out "$W/pytorch/$s" > /dev/null
  cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/$s/grid.jsonl"
  timeout "$(budget 60 5)" "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/$s/grid.jsonl" \
    > "$W/pytorch/$s/grid.txt" 2> "$W/pytorch/$s/grid.err"
  echo "pytorch grid $s rc=$?: $(grep -c step_time_s "$W/pytorch/$s/grid.txt") points"; tail -1 "$W/pytorch/$s/grid.err"
  python3 launch/regime_grid.py split-pytorch "$W/pytorch/$s/grid.txt" "$W/pytorch/$s"
  save
done
python3 launch/regime_grid.py table "$points" --train "$W/train" --pytorch "$W/pytorch/a" | tee "$W/table.txt"
save
el "done: $OUT/h200x1-run-4.tgz"
