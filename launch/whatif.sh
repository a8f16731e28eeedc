#!/usr/bin/env bash
#SBATCH --job-name=commscale-whatif
#SBATCH --ntasks=1
#SBATCH --time=00:30:00
#SBATCH --output=commscale-whatif-%j.out
# What if the cluster changed: one model and plan predicted on each of several clusters (`commscale
# predict`), then the model across the same clusters, each with its best plan (`commscale compare`).
# Needs no GPU and no MPI: run it anywhere, or submit it with sbatch as one task.
#
# usage: launch/whatif.sh --model NAME --global-batch N [OPTIONS] [-- PLAN ARGS...]
#   --model NAME        a preset (commscale plan --help lists them)
#   --global-batch N    sequences per step
#   --clusters A,B,...  clusters of topologies/clusters or files (default: hgx-h100,hgx-a100,hgx-h200,
#                       rtx4090-8x-roce100,rtx3090-4x-25gbe: all with a network between nodes)
#   --commscale PATH    the executable (COMMSCALE_BIN; default build/src/commscale of this repository)
#   --out DIR           results (COMMSCALE_RESULTS; default results/whatif-DATE)
#   PLAN ARGS           predict's plan flags, e.g. -- --tp 8 --pp 2 --dp 4 --micro-batch 1
# Writes predict-CLUSTER.{txt,json}, compare.{txt,json}, commands.txt. Exit status: 0 when every
# command ran (a plan that does not fit a cluster counts as ran), 2 on bad usage, else the last failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -n "${SLURM_SUBMIT_DIR:-}" ] && [ -z "${COMMSCALE_ROOT:-}" ]; then root="$SLURM_SUBMIT_DIR"; fi
root="${COMMSCALE_ROOT:-$root}"
commscale="${COMMSCALE_BIN:-$root/build/src/commscale}"
out="${COMMSCALE_RESULTS:-$root/results/whatif-$(date +%Y-%m-%d)}"
clusters="hgx-h100,hgx-a100,hgx-h200,rtx4090-8x-roce100,rtx3090-4x-25gbe"
model=""
batch=""

fail() {
  echo "whatif.sh: $*" >&2
  exit 2
}
need_value() { if [ "$2" -lt 2 ]; then fail "$1 needs a value"; fi; }
while [ $# -gt 0 ]; do
  case "$1" in
    --model) need_value "$1" "$#"; model="$2"; shift 2 ;;
    --global-batch) need_value "$1" "$#"; batch="$2"; shift 2 ;;
    --clusters) need_value "$1" "$#"; clusters="$2"; shift 2 ;;
    --commscale) need_value "$1" "$#"; commscale="$2"; shift 2 ;;
    --out) need_value "$1" "$#"; out="$2"; shift 2 ;;
    -h | --help) sed -n '/^# What if/,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
    --) shift; break ;;
    *) fail "unknown option $1 (see --help; plan flags go after --)" ;;
  esac
done
plan=("$@")
if [ -z "$model" ] || [ -z "$batch" ]; then fail "--model and --global-batch are required"; fi
if [ ! -x "$commscale" ]; then fail "--commscale $commscale is not an executable: build commscale first"; fi
commands=$("$commscale" --help 2>&1 || true)
for command in predict compare; do
  if ! grep -Eq "^ +$command( |$)" <<< "$commands"; then
    fail "$commscale has no '$command' command: build commscale from a version that has predict and compare"
  fi
done
IFS=, read -r -a cluster_list <<< "$clusters"
if [ ${#cluster_list[@]} -eq 0 ]; then fail "--clusters names no cluster"; fi
mkdir -p "$out"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $commscale" > "$out/commands.txt"

status=0
# run NAME COMMAND ARGS...: NAME.txt gets the output; the command line goes to commands.txt.
run() {
  local name="$1" rc=0
  shift
  echo "$*" >> "$out/commands.txt"
  echo "== $name: $*"
  "$@" > "$out/$name.txt" 2>&1 || rc=$?
  cat "$out/$name.txt"
  # predict and compare exit 1 when a plan does not fit: an answer, not a failure.
  if [ "$rc" -gt 1 ]; then status="$rc"; fi
}

for cluster in "${cluster_list[@]}"; do
  name=$(basename "$cluster" .json)
  run "predict-$name" "$commscale" predict --cluster "$cluster" --model "$model" --global-batch "$batch" \
    "${plan[@]}" -J "$out/predict-$name.json"
done
run compare "$commscale" compare --clusters "$clusters" --model "$model" --global-batch "$batch" \
  -J "$out/compare.json"
echo "whatif.sh: results in $out"
exit "$status"
