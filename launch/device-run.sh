# The frame of one call on a lent GPU machine (the run tool: one command, ten minutes, a fresh machine
# each time), sourced by the scripts under results/ that such calls ran:
#
#   source launch/device-run.sh
#   device_run_start run-8 540        # work folder /tmp/run-8, every step within 540 s
#   device_run_machine                # machine.txt: GPU, driver, clocks, torch, compilers, commit
#   device_run_build /tmp/b8          # commscale (Release, sm_90, no tests) -> $bin, or stop
#   device_run_build /tmp/b8 commscale_gpu_tests   # ... and the GPU tests
#   el "3. calibrate"; cmd "commscale calibrate ..."; within 150 300 "$bin" calibrate ...; save
#   device_run_pytorch_grid POINTS a 120 60   # launch/pytorch_reference.py at every PyTorch run of POINTS
#   device_run_train_predict qwen 60 40 --model qwen1.5-moe-a2.7b --layers 4   # train and predict one plan
#   device_run_table qwen ...         # their measured and predicted steps side by side -> W/table.txt
#
# el: a line with the seconds since the start; cmd: a command line into commands.txt as run (W/ is
# the work folder); within MAX RESERVE COMMAND...: runs it under timeout, for at most MAX seconds and
# leaving RESERVE of the call's LIMIT to the steps after it, or skips it (exit 124) when fewer than 5
# seconds are left for it; save: the work folder tarred into $OUT/h200x1-NAME.tgz, so that one file
# comes back whatever happens after.
# shellcheck shell=bash

device_run_start() {  # NAME LIMIT_S
  : "${OUT:?set OUT to the folder the results go to}"
  RUN_NAME=$1
  LIMIT=$2
  T0=$(date +%s)
  W=/tmp/$RUN_NAME
  rm -rf "$W" && mkdir -p "$W" "$OUT"
  : > "$W/commands.txt"
  export PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # shellcheck disable=SC2034  # for the scripts that source this
  mpi=(mpirun -np 1 --bind-to none)
}

el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
within() {  # MAX RESERVE COMMAND...
  local max=$1 b=$(( $(left) - $2 ))
  shift 2
  if [ "$b" -gt "$max" ]; then b=$max; fi
  if [ "$b" -lt 5 ]; then echo "skipped, no time left: $*"; return 124; fi
  timeout "$b" "$@"
}
cmd() { echo "$*" >> "$W/commands.txt"; }
save() {
  tar czf "$OUT/h200x1-$RUN_NAME.tgz.part" -C /tmp "$RUN_NAME" && mv "$OUT/h200x1-$RUN_NAME.tgz.part" "$OUT/h200x1-$RUN_NAME.tgz"
}

device_run_machine() {
  el "machine"
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1
    python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())" 2>&1 | tail -1
    g++ --version | head -1; cmake --version | head -1; nvcc --version 2>&1 | tail -1
    # The device's copy of the tree can carry another checkout's git metadata: the caller says which
    # commit it sent (COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/.../run-N.sh).
    echo "commscale tree ${COMMSCALE_TREE:-not given}; the copy's git says $(git rev-parse --short=12 HEAD 2>/dev/null)$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)"
    nproc; uptime
  } > "$W/machine.txt" 2>&1
  cat "$W/machine.txt"
}

device_run_pytorch_grid() {  # POINTS NAME MAX RESERVE: the PyTorch reference at every run of POINTS -> W/pytorch/NAME
  mkdir -p "$W/pytorch/$2"
  python3 launch/regime_grid.py pytorch-grid "$1" --out "$W/pytorch/$2" > /dev/null
  cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/$2/grid.jsonl"
  within "$3" "$4" "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/$2/grid.jsonl" \
    > "$W/pytorch/$2/grid.txt" 2> "$W/pytorch/$2/grid.err"
  echo "pytorch grid $2 rc=$?: $(grep -c step_time_s "$W/pytorch/$2/grid.txt") runs"; tail -1 "$W/pytorch/$2/grid.err"
  python3 launch/regime_grid.py split-pytorch "$W/pytorch/$2/grid.txt" "$W/pytorch/$2"
  save
}

# BUILD_DIR [TARGET...]: commscale, and the test targets named (e.g. commscale_gpu_tests) with the tests
# configured; sets bin, or saves and stops the call.
device_run_build() {
  el "build${2:+ (with ${*:2})}"
  bin=$1/src/commscale
  local tests=OFF limit=240
  if [ $# -gt 1 ]; then tests=ON limit=300; fi
  local build="cmake -S . -B $1 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_TESTS=$tests && cmake --build $1 -j 16 --target commscale ${*:2}"
  cmd "$build"
  timeout "$limit" bash -c "$build" > "$W/build.log" 2>&1
  echo "build rc=$?"; grep -ciE "warning:" "$W/build.log" | sed 's/^/compiler warnings: /'
  if [ ! -x "$bin" ]; then tail -20 "$W/build.log"; save; echo "no commscale binary: stopping"; exit 1; fi
  save
}

# NAME MAX RESERVE FLAG...: `commscale train FLAG... --steps 5 --warmup 2` on this GPU (within MAX seconds,
# leaving RESERVE) and `commscale predict FLAG...` for this machine: the catalog's cluster of this GPU cut to one
# GPU with the lease's 16 host cores, `--framework commscale` -> W/train/NAME.{json,txt}, W/predict/NAME.{json,txt}.
device_run_train_predict() {
  local name=$1 max=$2 reserve=$3 cluster
  shift 3
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
    *H200*) cluster=hgx-h200 ;;
    *) cluster=hgx-h100 ;;
  esac
  local machine=(--cluster "$cluster" --set node.gpus=1 --set host_cpu_cores=16 --framework commscale)
  mkdir -p "$W/train" "$W/predict"
  el "train $name"
  cmd "commscale train $* --steps 5 --warmup 2 -J W/train/$name.json"
  within "$max" "$reserve" "${mpi[@]}" "$bin" train "$@" --steps 5 --warmup 2 -J "$W/train/$name.json" \
    > "$W/train/$name.txt" 2>&1 || echo "train $name failed: $(tail -2 "$W/train/$name.txt")"
  cmd "commscale predict ${machine[*]} $* -J W/predict/$name.json"
  "$bin" predict "${machine[@]}" "$@" -J "$W/predict/$name.json" > "$W/predict/$name.txt" 2>&1 ||
    echo "predict $name failed: $(tail -2 "$W/predict/$name.txt")"
  save
}

# NAME...: the measured and predicted step of each plan device_run_train_predict ran, and the error
# (predicted / measured - 1) -> W/table.txt, printed.
device_run_table() {
  python3 - "$W" "$@" > "$W/table.txt" <<'PY'
import json, os, sys
w, names = sys.argv[1], sys.argv[2:]
print(f"{'plan':<20}{'measured s':>12}{'predicted s':>13}{'error':>8}")
for name in names:
    try:
        measured = json.load(open(os.path.join(w, "train", name + ".json")))["summary"]["step_time_s"]
        predicted = json.load(open(os.path.join(w, "predict", name + ".json")))["summary"]["step_time_s"]
        print(f"{name:<20}{measured:>12.4f}{predicted:>13.4f}{100 * (predicted / measured - 1):>+7.1f}%")
    except (OSError, KeyError, ValueError) as e:
        print(f"{name:<20} missing: {e}")
PY
  save
  cat "$W/table.txt"
}
