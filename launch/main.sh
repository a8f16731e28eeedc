#!/usr/bin/env bash
# The main job on this machine: installs missing packages, builds commscale, then runs
#   1. `commscale bench all`, one rank per GPU found (or 2 ranks on the CPU backend where no GPU is
#      visible), and, where GPUs exist, `commscale topo` and the `commscale p2p` matrix;
#   2. a training step (`commscale train`): a 1.3B GPT under data parallelism on the GPUs, or the
#      tiny model on 2 CPU ranks (about a minute on a laptop);
#   3. where the binary has them: `commscale predict` of the same step for the catalog cluster that
#      `commscale hw match` finds for the machine topo described (or the one COMMSCALE_CLUSTER names;
#      measured and predicted side by side), and `commscale compare` of an A100 node against
#      consumer-card clusters (RTX 3090, 4090, 5090) with a scaling sweep;
#   4. `commscale report` over all of it,
# writing results/<host>-<date>/ (launch/README.md describes the files) and printing where.
#
# Environment:
#   COMMSCALE_BUILD_DIR  build folder (default build/)
#   COMMSCALE_RESULTS    output folder (default results/<host>-<date>)
#   COMMSCALE_BIN        use this commscale executable: no package installation, no build
#   COMMSCALE_SIZE       full (default) or tiny: the smallest sweeps and steps, for tests
#   COMMSCALE_CLUSTER    a cluster of topologies/clusters/ describing this machine, for `predict`
#                        (default: the one topo's GPUs match; none on the CPU backend)
#   COMMSCALE_GPUS       GPUs to use (default: every GPU nvidia-smi lists; 0: the CPU backend)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="${COMMSCALE_BUILD_DIR:-$root/build}"
out="${COMMSCALE_RESULTS:-$root/results/$(hostname -s)-$(date +%Y-%m-%d)}"
size="${COMMSCALE_SIZE:-full}"
case "$size" in
  full | tiny) ;;
  *) echo "main.sh: COMMSCALE_SIZE=$size (expected full or tiny)" >&2; exit 2 ;;
esac

if [ -n "${COMMSCALE_BIN:-}" ]; then
  commscale="$COMMSCALE_BIN"
else
  "$root/launch/install-deps.sh" build
  # The main job needs the executable only: no GoogleTest (which a user's machine may lack), no tests to build.
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOMMSCALE_TESTS=OFF
  cmake --build "$build_dir" --target commscale
  commscale="$build_dir/src/commscale"
fi

gpus=0
if [ -n "${COMMSCALE_GPUS:-}" ]; then
  gpus=$COMMSCALE_GPUS
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L | grep -c '^GPU' || true)
fi
if [ "$gpus" -gt 0 ]; then
  ranks=$gpus
  backend=(--backend gpu)
  sweep=(-b 8 -e 1G -f 2)
  train=(--model gpt3-1.3b --dp "$ranks" --micro-batch 4 --global-batch $((ranks * 16)) --steps 5 --warmup 2)
else
  ranks=2
  backend=(--backend cpu)
  sweep=(-b 8 -e 16M -f 4)
  train=(--model tiny --dp 2 --micro-batch 1 --global-batch 8 --steps 3 --warmup 1)
fi
if [ "$size" = tiny ]; then
  sweep=(-b 1K -e 64K -f 16 -n 3 -w 1)
  train=(--model tiny --dp "$ranks" --micro-batch 1 --global-batch $((ranks * 2)) --steps 1 --warmup 1)
fi

mpirun_args=(-np "$ranks" --bind-to none)
if [ "$(id -u)" = 0 ]; then mpirun_args+=(--allow-run-as-root); fi
if [ "$ranks" -gt "$(nproc)" ]; then mpirun_args+=(--oversubscribe); fi

mkdir -p "$out"
log() { echo "commscale: $*"; }
# Under mpirun the ranks' stderr is a pipe: ask for the progress line when ours is a terminal.
progress=()
if [ -t 2 ]; then progress=(--progress); fi

log "mpirun ${mpirun_args[*]} $commscale bench all ${sweep[*]}"
mpirun "${mpirun_args[@]}" "$commscale" bench all "${sweep[@]}" "${backend[@]}" "${progress[@]}" \
  -J "$out/bench.json" --csv "$out/bench.csv" | tee "$out/bench.txt"

if [ "$gpus" -gt 0 ]; then
  log "$commscale topo and p2p"
  "$commscale" topo -J "$out/topo.json" --csv "$out/topo.csv" | tee "$out/topo.txt"
  "$commscale" p2p -J "$out/p2p.json" --csv "$out/p2p.csv" | tee "$out/p2p.txt"
fi

log "mpirun ${mpirun_args[*]} $commscale train ${train[*]}"
mpirun "${mpirun_args[@]}" "$commscale" train "${train[@]}" "${backend[@]}" "${progress[@]}" \
  -J "$out/train.json" --csv "$out/train.csv" --trace "$out/train-trace.json" | tee "$out/train.txt"

# `commscale X --help` prints the main help (and succeeds) when X is not a command: look for X's usage.
has_command() { "$commscale" "$1" --help 2>/dev/null | grep "commscale $1" >/dev/null; }

# The cluster to predict the trained step for: COMMSCALE_CLUSTER, else the catalog cluster that
# `commscale hw match` finds for the machine topo described (its GPUs' catalog match, their count).
cluster="${COMMSCALE_CLUSTER:-}"
why_no_cluster=""
if [ -n "$cluster" ]; then
  log "predicting for COMMSCALE_CLUSTER=$cluster"
elif [ "$gpus" -eq 0 ]; then
  why_no_cluster="no GPU here: the CPU backend is no catalog cluster (COMMSCALE_CLUSTER=NAME predicts the step for one)"
elif cluster=$("$commscale" hw match "$out/topo.json" 2>/dev/null); then
  log "topo's GPUs are the catalog cluster $cluster: predicting the trained step for it"
else
  # hw match says why on stderr (exit 1; 2 for a topo.json it cannot read).
  cluster=""
  why=$("$commscale" hw match "$out/topo.json" 2>&1 >/dev/null || true)
  why_no_cluster="${why#commscale: } (COMMSCALE_CLUSTER=NAME chooses one)"
fi

if [ -z "$cluster" ]; then
  log "no prediction of the trained step: $why_no_cluster"
elif has_command predict; then
  # The plan flags train took, without the step counts that only a run has.
  predict_args=()
  skip=0
  for arg in "${train[@]}"; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    case "$arg" in --steps | --warmup) skip=1; continue ;; esac
    predict_args+=("$arg")
  done
  # The step train ran is commscale's own executor's: predict it as that framework, not the default.
  predict_args+=(--framework commscale)
  log "$commscale predict ${predict_args[*]} --cluster $cluster"
  "$commscale" predict "${predict_args[@]}" --cluster "$cluster" -J "$out/predict.json" | tee "$out/predict.txt"
else
  log "this commscale has no predict command: skipping the prediction"
fi

if has_command compare; then
  if [ "$size" = tiny ]; then
    clusters="hgx-a100,rtx4090-8x-pcie"
    compare=(--model gpt3-125m --global-batch 16 --clusters "$clusters" --scaling hgx-a100 --scaling-max 16)
  else
    clusters="hgx-a100,rtx4090-8x-pcie,rtx4090-8x-roce100,rtx5090-8x-pcie,rtx3090-4x-nvlink-pairs"
    compare=(--model llama2-7b --global-batch 256 --clusters "$clusters" --scaling hgx-a100 --scaling-max 1024)
  fi
  log "$commscale compare ${compare[*]}"
  "$commscale" compare "${compare[@]}" -J "$out/compare.json" | tee "$out/compare.txt"
else
  log "this commscale has no compare command: skipping the what-if comparison of A100 and consumer cards"
fi

log "$commscale report $out"
"$commscale" report "$out" -o "$out/report.html" --title "commscale on $(hostname -s), $(date +%Y-%m-%d)"
log "results in $out (report.html; bench, train and the others as .txt, .json and .csv; train-trace.json opens in Perfetto)"
