#!/bin/bash
# The per-op tables of results/h200x1-2026-12-03b/README.md, from the committed timelines (no GPU): for
# each point with a timeline, run-5's executor (results/h200x1-2026-12-03/run-5) against run-8's (the
# activation kernels before and after), and run-8's against the prediction with run-8's profile. Run from
# the repository's root:
#
#   bash launch/studies/diff-traces.sh build-tests/src/commscale [FOLDER [OUT]]
#
# FOLDER: results/h200x1-2026-12-03b (default); OUT: FOLDER/diff-trace (default). The timelines and the
# profile are read as FILE or FILE.gz (results/ keeps bulky files compressed; a .gz is unpacked into a
# temporary folder for commscale). This script was results/h200x1-2026-12-03b/diff-traces.sh.
set -euo pipefail
commscale=${1:?usage: diff-traces.sh COMMSCALE [FOLDER [OUT]]}
here=${2:-results/h200x1-2026-12-03b}
out=${3:-$here/diff-trace}
before=$here/../h200x1-2026-12-03/run-5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plain() {  # FILE: FILE, or FILE.gz unpacked into tmp (under a name of its own)
  if [ -e "$1" ]; then echo "$1"; return; fi
  local copy
  copy="$tmp/$(echo "$1" | tr '/' '_')"
  gzip -dc "$1.gz" > "$copy"
  echo "$copy"
}
mkdir -p "$out"
declare -A flags=(
  [l8b-s4096-mb1-flash]="--model llama2-7b --layers 4 --hidden 4096 --heads 32 --kv-heads 8 --seq 4096 --vocab 0 --ffn 14336 --micro-batch 1 --global-batch 4 --flash-attn"
  [g4096-s2048-mb1-flash]="--layers 8 --hidden 4096 --heads 32 --kv-heads 32 --seq 2048 --vocab 0 --micro-batch 1 --global-batch 4 --flash-attn"
  [g2048-s1024-mb1-unfused]="--layers 4 --hidden 2048 --heads 16 --kv-heads 16 --seq 1024 --vocab 0 --micro-batch 1 --global-batch 4 --no-flash-attn"
)
profile=$(plain "$here/run-8/cal.json")
for point in "${!flags[@]}"; do
  read -ra f <<< "${flags[$point]}"
  measured=$(plain "$here/run-8/train/timeline-$point.json")
  "$commscale" diff-trace "$(plain "$before/train/timeline-$point.json")" "$measured" "${f[@]}" --top 40 \
    > "$out/run-5-vs-run-8-$point.txt"
  "$commscale" predict "${f[@]}" --cluster h200x1 --calibration "$profile" --timeline "$out/predicted-$point.json" \
    > /dev/null
  "$commscale" diff-trace "$measured" "$out/predicted-$point.json" "${f[@]}" --top 40 > "$out/run-8-vs-predicted-$point.txt"
  rm "$out/predicted-$point.json"
done
ls "$out"
