#!/usr/bin/env bash
# Issue 6 item 7 on the GPU machine: for each run, predict it (commscale predict, no GPU), then measure
# it (commscale train under mpirun), then compare the two timelines (commscale diff-trace), and write
# one table line: predicted and measured step time, error, and both command lines.
#
# usage: launch/predict-accuracy.sh --commscale BIN --out DIR [--cases "1gpu nvlink-tp ..."]
#            [--model-flags "..."] [--train-args "..."]
#
# Cases (default all): 1gpu (h200x1, 1 rank); nvlink-{tp,dp,pp} (h200x2, 2 ranks); staged-{tp,dp,pp}
# (h200x2-nop2p, train under NCCL_P2P_DISABLE=1); sockets-{tp,dp,pp} (h200x2-sockets, train under
# NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1). --model-flags replaces the model and batch flags (default:
# GPT-3 6.7B cut to 8 layers without embedding, micro-batch 2, global batch 8); --train-args are added
# to train only (e.g. "--steps 20 --warmup 5", or "--backend cpu" to try the script without a GPU).
# Output in DIR: CASE.predict.json, CASE.predict-timeline.json, CASE.train.json,
# CASE.train-timeline.json, CASE.diff.txt, and accuracy.csv (plot-ready: one line per case).
set -euo pipefail

commscale=""
out=""
cases="1gpu nvlink-tp nvlink-dp nvlink-pp staged-tp staged-dp staged-pp sockets-tp sockets-dp sockets-pp"
model_flags="--model gpt3-6.7b --layers 8 --vocab 0 --micro-batch 2 --global-batch 8"
train_args=""

while [ $# -gt 0 ]; do
  case "$1" in
    --commscale) commscale="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --cases) cases="$2"; shift 2 ;;
    --model-flags) model_flags="$2"; shift 2 ;;
    --train-args) train_args="$2"; shift 2 ;;
    *) echo "predict-accuracy.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$commscale" ] || [ -z "$out" ]; then
  echo "usage: $0 --commscale BIN --out DIR [--cases \"...\"] [--model-flags \"...\"] [--train-args \"...\"]" >&2
  exit 2
fi
mkdir -p "$out"
read -ra model_args <<< "$model_flags"
read -ra extra_train_args <<< "$train_args"

# The cluster file, NCCL's variables and the plan flags of a case.
case_cluster() {
  case "$1" in
    1gpu) echo "h200x1" ;;
    nvlink-*) echo "h200x2" ;;
    staged-*) echo "h200x2-nop2p" ;;
    sockets-*) echo "h200x2-sockets" ;;
    *) echo "predict-accuracy.sh: unknown case '$1'" >&2; exit 2 ;;
  esac
}
case_env() {
  case "$1" in
    staged-*) echo "NCCL_P2P_DISABLE=1" ;;
    sockets-*) echo "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1" ;;
    *) echo "" ;;
  esac
}
case_plan() {
  case "$1" in
    *-tp) echo "--tp 2" ;;
    *-dp) echo "--dp 2" ;;
    *-pp) echo "--pp 2" ;;
    *) echo "" ;;
  esac
}

step_time() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["step_time_s"])' "$1"
}

csv="$out/accuracy.csv"
echo "case,cluster,env,ranks,predicted_step_s,measured_step_s,error_pct,predict_command,train_command" > "$csv"
for name in $cases; do
  cluster=$(case_cluster "$name")
  env_text=$(case_env "$name")
  read -ra env_args <<< "$env_text"
  read -ra plan_args <<< "$(case_plan "$name")"
  ranks=2
  if [ "$name" = "1gpu" ]; then ranks=1; fi
  mpirun_args=(-np "$ranks" --bind-to none)
  if [ "$(id -u)" = 0 ]; then mpirun_args+=(--allow-run-as-root); fi

  predict=("$commscale" predict --cluster "$cluster" "${model_args[@]}" "${plan_args[@]}"
           -J "$out/$name.predict.json" --timeline "$out/$name.predict-timeline.json")
  train=("$commscale" train "${model_args[@]}" "${plan_args[@]}" "${extra_train_args[@]}"
         -J "$out/$name.train.json" --timeline "$out/$name.train-timeline.json")
  echo "== $name: ${predict[*]}"
  "${predict[@]}" > "$out/$name.predict.txt"
  echo "== $name: $env_text mpirun ${mpirun_args[*]} ${train[*]}"
  env "${env_args[@]}" mpirun "${mpirun_args[@]}" "${train[@]}" > "$out/$name.train.txt" 2>&1
  "$commscale" diff-trace "$out/$name.train-timeline.json" "$out/$name.predict-timeline.json" \
    "${model_args[@]}" "${plan_args[@]}" > "$out/$name.diff.txt"

  predicted=$(step_time "$out/$name.predict.json")
  measured=$(step_time "$out/$name.train.json")
  error=$(python3 -c 'import sys; p, m = map(float, sys.argv[1:]); print(f"{100 * (p - m) / m:.2f}")' "$predicted" "$measured")
  echo "   predicted $predicted s, measured $measured s, error $error %"
  echo "$name,$cluster,$env_text,$ranks,$predicted,$measured,$error,\"${predict[*]}\",\"$env_text mpirun ${mpirun_args[*]} ${train[*]}\"" >> "$csv"
done
echo "table: $csv"
