#!/usr/bin/env bash
# `commscale doctor` on this GPU machine, in one command (issue 22): builds commscale and the GPU tests
# from this checkout (Release, for this machine's GPU architecture, in a folder outside the tree), runs
# the doctor GPU tests, then doctor itself, one rank per GPU, changing no setting of the machine:
#   healthy      every phase, expectations from the catalog cluster hw match finds: must exit 0;
#   sm-hog       the gpu phase with half of rank 0's SMs held by --inject-sm-hog's kernel while its
#                GEMM runs, as a second process on the GPU would: must exit 6 and name rank 0's GPU;
#   nchannels1   (2 GPUs or more) the job phase with NCCL_MAX_NCHANNELS=1, a narrower NCCL path:
#                must exit 6 and name the job's collectives;
# then `commscale report` over their JSON. Run it from the repository's root.
#
# usage: launch/gpu-doctor.sh [OUT]   (default $OUT, the device tool's output folder)
# Environment: COMMSCALE_BUILD (build folder, default /root/b), COMMSCALE_BIN (an already built
# commscale: no build, no GPU tests), CUDA_ARCH (default: this GPU's compute capability).
# Writes to OUT (at most 8 files, as the device tool brings back): summary.txt (exit codes, verdicts,
# suspects, times; also printed last), commands.txt, healthy.txt, healthy.json, sm-hog.txt,
# sm-hog.json, report.html, and doctor-gpu.tgz with everything (build log, GPU test log, JSON Lines,
# machine facts, the nchannels1 run).
# Exit code: 0 when the build, the tests and every run ended as they must; 1 otherwise.
set -uo pipefail

out="${1:-${OUT:-}}"
if [ -z "$out" ]; then
  echo "usage: $0 OUT (or set OUT)" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$gpus" = 0 ]; then
  echo "gpu-doctor.sh: nvidia-smi lists no GPU here" >&2
  exit 2
fi
work="$out/r"
mkdir -p "$work"
summary="$work/summary.txt"
: > "$summary"
failed=0
start_s=$(date +%s)
note() { echo "[$(($(date +%s) - start_s)) s] $*" | tee -a "$summary"; }

{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,pcie.link.gen.max,pcie.link.width.max \
    --format=csv
  git -C "$root" rev-parse HEAD 2>/dev/null
  g++ --version | head -1
  cmake --version | head -1
} > "$work/machine.txt" 2>&1

build="${COMMSCALE_BUILD:-/root/b}"
commscale="${COMMSCALE_BIN:-}"
if [ -z "$commscale" ]; then
  arch="${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')}"
  note "build (CUDA architecture $arch) in $build"
  if cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    > "$work/build.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target commscale commscale_gpu_tests >> "$work/build.log" 2>&1; then
    grep -E "GPU backend" "$work/build.log" | head -1 | tee -a "$summary"
  else
    note "build FAILED (build.log)"
    tail -20 "$work/build.log"
    tar czf "$out/doctor-gpu.tgz" -C "$out" r
    exit 1
  fi
  commscale="$build/src/commscale"
  note "GPU tests: GpuDoctor.* on one rank"
  rc=0
  timeout 300 mpirun --allow-run-as-root -np 1 "$build/tests/commscale_gpu_tests" --gtest_filter='GpuDoctor.*' \
    > "$work/gpu-tests.log" 2>&1 || rc=$?
  grep -aE "^\[  (PASSED|FAILED|SKIPPED) |OK \]|Failure" "$work/gpu-tests.log" | tee -a "$summary"
  if [ "$rc" != 0 ]; then failed=1; fi
fi

mpirun=(mpirun -np "$gpus" --bind-to none)
if [ "$(id -u)" = 0 ]; then mpirun+=(--allow-run-as-root); fi

# doctor NAME WANT [ENV=VALUE...] -- DOCTOR ARGS...: runs doctor, records its command line and time,
# and checks its exit code against WANT.
doctor() {
  local name="$1" want="$2"
  shift 2
  local env=()
  while [ "$1" != -- ]; do
    env+=("$1")
    shift
  done
  shift
  local cmd=(env "${env[@]}" "${mpirun[@]}" "$commscale" doctor "$@" -J "$work/$name.json")
  printf '%q ' "${cmd[@]}" >> "$work/commands.txt"
  echo >> "$work/commands.txt"
  local began rc=0
  began=$(date +%s%N)
  "${cmd[@]}" > "$work/$name.txt" 2>&1 || rc=$?
  local ms=$((($(date +%s%N) - began) / 1000000))
  printf '%s: exit %s (want %s) in %d.%03d s\n' "$name" "$rc" "$want" $((ms / 1000)) $((ms % 1000)) | tee -a "$summary"
  if [ "$rc" != "$want" ]; then failed=1; fi
  grep -E '^## (verdict|time)' "$work/$name.txt" | tee -a "$summary"
  sed -n '/^## suspects/,/^## time/p' "$work/$name.txt" | grep -v '^## time' | tee -a "$summary"
}

note "doctor: $gpus rank(s), one per GPU"
doctor healthy 0 NCCL_DEBUG=WARN -- --pairs ranks
doctor sm-hog 6 NCCL_DEBUG=WARN -- --skip node,job,pairs --inject-sm-hog 0:0.5
if ! grep -q '^gpu .*rank 0 GPU 0 .*gemm:' "$work/sm-hog.txt"; then
  echo "sm-hog: rank 0's GPU is not named" | tee -a "$summary"
  failed=1
fi
if [ "$gpus" -ge 2 ]; then
  doctor nchannels1 6 NCCL_MAX_NCHANNELS=1 -- --skip gpu,node,pairs
fi
if ! "$commscale" report "$work"/*.json -o "$work/report.html" > "$work/report.txt" 2>&1; then
  echo "report failed (report.txt)" | tee -a "$summary"
  failed=1
fi
note "done: $([ "$failed" = 0 ] && echo "every run ended as it must" || echo "SOMETHING FAILED")"

# The healthy run's per-GPU table, for the reply's tail.
sed -n '/^## gpu:/,/^## gpu: [0-9.]* s/p' "$work/healthy.txt"
for f in summary.txt commands.txt healthy.txt healthy.json sm-hog.txt sm-hog.json report.html; do
  [ -f "$work/$f" ] && cp "$work/$f" "$out/$f"
done
tar czf "$out/doctor-gpu.tgz" -C "$out" r && rm -rf "$work"
cat "$out/summary.txt"
exit "$failed"
