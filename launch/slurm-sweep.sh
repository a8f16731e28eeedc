#!/usr/bin/env bash
#SBATCH --job-name=commscale-sweep
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --time=02:00:00
#SBATCH --output=commscale-sweep-%j.out
# A sweep in one allocation: `commscale bench` over the job's ranks once, then `commscale train` for
# each plan of a list (every plan first checked with `commscale plan`, which needs no GPU; a plan
# that is invalid or does not fit is recorded and skipped).
#
# usage: sbatch [SBATCH OPTIONS] launch/slurm-sweep.sh PLANS [MODEL ARGS...]
#   PLANS       a file with one plan per line: train's plan flags, e.g. "--tp 2 --pp 2 --global-batch 16"
#               (--dp defaults to the job's tasks / (tp x pp)); blank lines and # comments are skipped
#   MODEL ARGS  the model flags (default: --model llama2-7b --layers 8)
# Environment: COMMSCALE_BACKEND (auto, gpu or cpu: bench's and train's --backend), COMMSCALE_BENCH
# (bench's arguments, split at spaces; default "all -b 8 -e 1G -f 2"; "none" to skip it),
# COMMSCALE_TRAIN (more train arguments, e.g. "--steps 20"), and those of launch/slurm-lib.sh.
# Results: NAME.txt and NAME.json per run (bench, train-1, train-2, ...) and summary.tsv (plan, status).
set -euo pipefail

# shellcheck source=slurm-lib.sh source-path=SCRIPTDIR
source "${COMMSCALE_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}/launch/slurm-lib.sh"
if [ $# -lt 1 ]; then
  echo "usage: sbatch launch/slurm-sweep.sh PLANS [MODEL ARGS...]" >&2
  exit 2
fi
plans="$1"
shift
if [ ! -r "$plans" ]; then
  echo "$0: plans file $plans: cannot read it" >&2
  exit 2
fi
model=("$@")
if [ ${#model[@]} -eq 0 ]; then model=(--model llama2-7b --layers 8); fi
commscale_slurm_setup

backend=()
if [ -n "${COMMSCALE_BACKEND:-}" ]; then backend=(--backend "$COMMSCALE_BACKEND"); fi
read -r -a bench_args <<< "${COMMSCALE_BENCH:-all -b 8 -e 1G -f 2}"
read -r -a train_args <<< "${COMMSCALE_TRAIN:-}"
tasks="${SLURM_NTASKS:-1}"
summary="$commscale_out/summary.tsv"
printf 'run\tplan\tstatus\n' > "$summary"

if [ "${bench_args[0]}" != none ]; then
  status=ok
  commscale_srun bench bench "${bench_args[@]}" "${backend[@]}" || status="failed ($?)"
  printf 'bench\t%s\t%s\n' "${bench_args[*]}" "$status" >> "$summary"
fi

# flag_value FLAG DEFAULT ARGS...: the value given to FLAG in ARGS, or DEFAULT.
flag_value() {
  local flag="$1" value="$2"
  shift 2
  while [ $# -gt 0 ]; do
    if [ "$1" = "$flag" ] && [ $# -gt 1 ]; then value="$2"; fi
    shift
  done
  echo "$value"
}

n=0
# The plans come on descriptor 3: srun would hand the loop's standard input to its first task.
while IFS= read -r -u 3 line || [ -n "$line" ]; do
  line="${line%%#*}"
  read -r -a plan <<< "$line"
  if [ ${#plan[@]} -eq 0 ]; then continue; fi
  n=$((n + 1))
  tp=$(flag_value --tp 1 "${plan[@]}")
  pp=$(flag_value --pp 1 "${plan[@]}")
  echo "# plan $n: ${plan[*]}"
  status=ok
  if [ "$(flag_value --dp none "${plan[@]}")" = none ]; then
    if [ $((tasks % (tp * pp))) = 0 ]; then plan+=(--dp "$((tasks / (tp * pp)))"); fi
  fi
  if [ $((tasks % (tp * pp))) != 0 ]; then
    status="tp x pp = $((tp * pp)) does not divide the job's $tasks tasks"
    echo "# $status"
  elif ! "$commscale_bin" plan "${model[@]}" "${plan[@]}" > "$commscale_out/plan-$n.txt" 2>&1; then
    status="plan rejected it (see plan-$n.txt)"
    tail -n 3 "$commscale_out/plan-$n.txt"
  else
    commscale_srun "train-$n" train "${model[@]}" "${plan[@]}" "${backend[@]}" "${train_args[@]}" ||
      status="train failed ($?)"
  fi
  printf 'train-%s\t%s\t%s\n' "$n" "${plan[*]}" "$status" >> "$summary"
done 3< "$plans"
echo "# summary ($summary):"
column -t -s "$(printf '\t')" "$summary" 2>/dev/null || cat "$summary"
