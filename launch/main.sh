#!/usr/bin/env bash
# The main job on this machine: installs missing packages, builds commscale, and runs `commscale bench`
# for every collective, one rank per GPU found (or 2 ranks on the CPU backend where no GPU is
# visible), writing results/<host>-<date>/bench.{txt,json,csv}.
#
# Environment: COMMSCALE_BUILD_DIR (default build/), COMMSCALE_RESULTS (default results/<host>-<date>).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="${COMMSCALE_BUILD_DIR:-$root/build}"
out="${COMMSCALE_RESULTS:-$root/results/$(hostname -s)-$(date +%Y-%m-%d)}"

"$root/launch/install-deps.sh" build
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir"

gpus=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L | grep -c '^GPU' || true)
fi
if [ "$gpus" -gt 0 ]; then
  ranks=$gpus
  sweep=(-b 8 -e 1G -f 2)
else
  ranks=2
  sweep=(-b 8 -e 16M -f 4)
fi

mpirun_args=(-np "$ranks" --bind-to none)
if [ "$(id -u)" = 0 ]; then mpirun_args+=(--allow-run-as-root); fi
if [ "$ranks" -gt "$(nproc)" ]; then mpirun_args+=(--oversubscribe); fi

mkdir -p "$out"
echo "commscale: mpirun ${mpirun_args[*]} $build_dir/src/commscale bench all ${sweep[*]}"
mpirun "${mpirun_args[@]}" "$build_dir/src/commscale" bench all "${sweep[@]}" \
  -J "$out/bench.json" --csv "$out/bench.csv" | tee "$out/bench.txt"
echo "commscale: results in $out (bench.txt, bench.json, bench.csv)"
