#!/bin/bash
# 1 x H200, issue 21: the calibration profile's new sections and the accuracy-by-regime grid, in one
# device call of at most ~9 minutes, build included. Run from the repository's root with $OUT set:
#
#   bash launch/regime-grid-device.sh                      on the GPU machine (~8 minutes)
#   OUT=/tmp/dry COMMSCALE_BIN=build-tests/src/commscale bash launch/regime-grid-device.sh --dry-run
#
# This was results/h200x1-2026-12-02b/run-2.sh (that folder holds what its runs measured); it moved
# here so that tests/launch/run2_dry.sh runs no file of results/. POINTS (default
# results/h200x1-2026-12-02b/points.jsonl, the grid it ran) names the train points; DRY_PROFILE (default
# results/h200x1-2026-12-01b/calibration/cal-heat20.json) the profile a dry run takes for calibrate's.
#
# In order (each step under `timeout`, the later ones within what is left of RUN2_LIMIT_S, default 530 s,
# so that the call ends before the device's 600 s; the most important first):
#   1. machine and versions                                    machine.txt
#   2. build commscale (Release, sm_90, target commscale)      ~80 s
#   3. calibrate --measure gemm,memory,host,interference       cal.json, calibrate.txt (~45 s)
#   4. launch/pytorch_kernels.py --base cal.json               cal-eager.json (eager rows, attention rows; ~40 s)
#   5. launch/pytorch_host.py --base cal-eager.json            cal-full.json (host rows; ~20 s)
#      and each profile checked by `commscale predict --calibration` (it loads, or says why not)
#   6. train at every point of points.jsonl (regime_grid.py)   train/train-*.json, traces (~140 s)
#   7. the PyTorch reference at the same points, one process   pytorch/grid.txt, pytorch-*.txt, prof-*.json (~90 s)
#   8. train --host-framework pytorch-eager at two points      train/hostfw-*.json (~20 s)
#   9. launch/pytorch_kernels.py --arch llama                  cal-full-llama.json (~30 s)
#  10. the table of step times
# Everything goes to /tmp/run2 and is tarred into $OUT/h200x1-run-2.tgz after each step (one file comes
# back even if the call is cut short).
#
# --dry-run runs the same steps on a machine without a GPU, and says so on every line it prints: the
# build is skipped when COMMSCALE_BIN names a binary; calibrate runs and must refuse (exit 2: no GPU);
# the PyTorch scripts check their inputs and list what they would time (--dry-run); the later steps take
# an earlier session's profile (DRY_PROFILE) with a host row
# marked as a fixture in place of the measured ones; the train points are checked by `commscale plan` and
# the first of each list is trained on the CPU backend at a reduced size. Nothing of a dry run is a
# measurement.
set -u
dry=0
if [ "${1:-}" = "--dry-run" ]; then dry=1; fi
: "${OUT:?set OUT to the folder the results go to}"
T0=$(date +%s)
# A dry run's steps run on a shared CPU machine: it is not held to the device call's limit.
if [ "$dry" = 1 ]; then LIMIT=${RUN2_LIMIT_S:-3000}; else LIMIT=${RUN2_LIMIT_S:-530}; fi
tag() { if [ "$dry" = 1 ]; then echo "DRY RUN "; fi; }
el() { echo "$(tag)[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
# budget MAX RESERVE: a step's timeout, at most MAX, leaving RESERVE seconds for what comes after it.
budget() {
  local b=$(( $(left) - $2 ))
  if [ "$b" -gt "$1" ]; then b=$1; fi
  if [ "$b" -lt 5 ]; then b=0; fi
  echo "$b"
}
points=${POINTS:-results/h200x1-2026-12-02b/points.jsonl}
dry_profile=${DRY_PROFILE:-results/h200x1-2026-12-01b/calibration/cal-heat20.json}
W=/tmp/run2
rm -rf "$W" && mkdir -p "$W/train" "$W/pytorch" "$OUT"
save() { tar czf "$OUT/h200x1-run-2.tgz.part" -C /tmp run2 && mv "$OUT/h200x1-run-2.tgz.part" "$OUT/h200x1-run-2.tgz"; }
export PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np 1 --bind-to none)
: > "$W/commands.txt"
cmd() { echo "$*" >> "$W/commands.txt"; }  # the command lines as run (W: the work folder)

el "1. machine"
{
  if [ "$dry" = 1 ]; then
    echo "DRY RUN on $(hostname): no GPU is used; every figure in this folder is from the CPU backend or a stand-in, none is a measurement"
  fi
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())" 2>&1 | tail -1
  g++ --version | head -1; cmake --version | head -1; nvcc --version 2>&1 | tail -1
  echo "commscale $(git rev-parse --short=12 HEAD 2>/dev/null)$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)"
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"

el "2. build"
if [ -n "${COMMSCALE_BIN:-}" ]; then
  bin=$COMMSCALE_BIN
  echo "$(tag)using COMMSCALE_BIN=$bin (no build)"
else
  bin=/tmp/b2/src/commscale
  cmd "cmake -S . -B /tmp/b2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_TESTS=OFF && cmake --build /tmp/b2 -j 16 --target commscale"
  timeout 240 bash -c "cmake -S . -B /tmp/b2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_TESTS=OFF && cmake --build /tmp/b2 -j 16 --target commscale" > "$W/build.log" 2>&1
  echo "build rc=$?"; grep -ciE "warning:" "$W/build.log" | sed 's/^/compiler warnings: /'
fi
if [ ! -x "$bin" ]; then tail -20 "$W/build.log"; save; echo "no commscale binary: stopping"; exit 1; fi
save

el "3. calibrate"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory,host,interference --heat-ms 20 --cluster h200x1"
timeout "$(budget 120 300)" "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory,host,interference \
  --heat-ms 20 --cluster h200x1 > "$W/calibrate.txt" 2>&1
rc=$?; echo "$(tag)calibrate rc=$rc"
if [ "$rc" = 0 ]; then grep -E "^host|^probe|^#" "$W/calibrate.txt" | tail -30
else grep -m 1 "^commscale:" "$W/calibrate.txt" || tail -3 "$W/calibrate.txt"; fi  # its own message, not mpirun's
if [ "$dry" = 1 ]; then
  cp "$dry_profile" "$W/cal.json"
  echo "DRY RUN: calibrate cannot measure without a GPU (it must exit 2, above); the next steps take $dry_profile, an earlier session's profile, as cal.json"
fi
save

el "4. PyTorch's eager kernels and attention"
dryflag=(); if [ "$dry" = 1 ]; then dryflag=(--dry-run); fi
cmd "python3 launch/pytorch_kernels.py --base W/cal.json -o W/cal-eager.json"
timeout "$(budget 75 300)" python3 launch/pytorch_kernels.py --base "$W/cal.json" -o "$W/cal-eager.json" "${dryflag[@]}" \
  > "$W/pytorch-kernels.txt" 2>&1
rc=$?; echo "$(tag)pytorch_kernels rc=$rc"; tail -2 "$W/pytorch-kernels.txt"
if [ "$dry" = 1 ]; then cp "$W/cal.json" "$W/cal-eager.json"; fi
save

el "5. PyTorch's host costs"
cmd "mpirun -np 1 python3 launch/pytorch_host.py --base W/cal-eager.json -o W/cal-full.json --details W/pytorch-host.json"
if [ "$dry" = 1 ]; then
  python3 - "$W/cal-eager.json" "$W/cal-full.json" <<'PY'
import json, sys
profile = json.load(open(sys.argv[1]))
costs = {"gemm": 20.0, "kernel": 20.0, "collective": 30.0, "p2p": 30.0}
profile["host"] = [{"framework": "pytorch-eager", "source": "DRY RUN fixture written by run-2.sh --dry-run: not a measurement",
                    "issue_us": costs, "step_us": 100.0, "sync": "none"}]
json.dump(profile, open(sys.argv[2], "w"), indent=1)
PY
  echo "DRY RUN: pytorch_host.py needs a GPU; cal-full.json has a fixture host row (20 us per op), not a measurement"
else
  timeout "$(budget 75 280)" "${mpi[@]}" python3 launch/pytorch_host.py --base "$W/cal-eager.json" -o "$W/cal-full.json" \
    --details "$W/pytorch-host.json" > "$W/pytorch-host.txt" 2>&1
  echo "pytorch_host rc=$?"; tail -6 "$W/pytorch-host.txt"
fi
for profile in cal.json cal-eager.json cal-full.json; do  # each profile must load where predict reads it
  "$bin" predict --layers 2 --hidden 1024 --heads 16 --seq 512 --vocab 0 --cluster h200x1 \
    --calibration "$W/$profile" > "$W/check-$profile.txt" 2>&1
  rc=$?; echo "$(tag)predict --calibration $profile: rc=$rc $(if [ "$rc" != 0 ]; then tail -1 "$W/check-$profile.txt"; fi)"
done
save

el "6. train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
timeout "$(budget 200 150)" python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" \
  --budget-s "$(budget 180 160)" "${dryflag[@]}"
save

el "7. PyTorch at every point"
python3 launch/regime_grid.py pytorch-grid "$points" --out "$W/pytorch" > /dev/null
cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/grid.jsonl"
if [ "$dry" = 1 ]; then
  python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/grid.jsonl" --dry-run > "$W/pytorch/grid.txt" 2>&1
  echo "DRY RUN pytorch_reference --dry-run rc=$?: $(grep -c dry_run "$W/pytorch/grid.txt") points listed, none run"
else
  timeout "$(budget 160 70)" "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/grid.jsonl" \
    > "$W/pytorch/grid.txt" 2> "$W/pytorch/grid.err"
  echo "pytorch grid rc=$?: $(grep -c step_time_s "$W/pytorch/grid.txt") points"; tail -2 "$W/pytorch/grid.err"
fi
python3 launch/regime_grid.py split-pytorch "$W/pytorch/grid.txt" "$W/pytorch"
save

el "8. train at PyTorch's host costs"
cmd "python3 launch/regime_grid.py host-framework $points --commscale commscale --out W/train --calibration W/cal-full.json"
timeout "$(budget 70 40)" python3 launch/regime_grid.py host-framework "$points" --commscale "$bin" \
  --out "$W/train" --calibration "$W/cal-full.json" --budget-s "$(budget 60 45)" "${dryflag[@]}"
save

el "9. Llama's eager kernels"
# From 1024 tokens, as the GPT rows: smaller rows can sit in L2 and time faster than HBM allows, which a
# profile refuses.
cmd "python3 launch/pytorch_kernels.py --arch llama --hidden 4096 --heads 32 --ffn 14336 --tokens 1024,4096,16384 --base W/cal-full.json -o W/cal-full-llama.json"
timeout "$(budget 60 10)" python3 launch/pytorch_kernels.py --arch llama --hidden 4096 --heads 32 --ffn 14336 \
  --tokens 1024,4096,16384 --base "$W/cal-full.json" -o "$W/cal-full-llama.json" "${dryflag[@]}" \
  > "$W/pytorch-kernels-llama.txt" 2>&1
rc=$?; echo "$(tag)pytorch_kernels --arch llama rc=$rc"; tail -1 "$W/pytorch-kernels-llama.txt"
if [ -s "$W/cal-full-llama.json" ]; then
  "$bin" predict --layers 2 --hidden 1024 --heads 16 --seq 512 --vocab 0 --cluster h200x1 \
    --calibration "$W/cal-full-llama.json" > "$W/check-cal-full-llama.json.txt" 2>&1
  rc=$?; echo "predict --calibration cal-full-llama.json: rc=$rc $(if [ "$rc" != 0 ]; then tail -1 "$W/check-cal-full-llama.json.txt"; fi)"
fi
save

el "10. table"
grep -E "^host|kernel floor" "$W/calibrate.txt" | head -3
grep -E "^# (pytorch-eager|megatron)" "$W/pytorch-host.txt" 2>/dev/null
python3 launch/regime_grid.py table "$points" --train "$W/train" --pytorch "$W/pytorch" | tee "$W/table.txt"
save
el "done: $OUT/h200x1-run-2.tgz"
