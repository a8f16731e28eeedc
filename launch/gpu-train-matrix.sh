#!/usr/bin/env bash
# The measured side of the predictor's accuracy and of train's speed checks on N GPUs of one machine:
# `commscale train` for every plan of the matrix below over each transport (NVLink or PCIe P2P as
# found, NCCL_P2P_DISABLE=1 host-staged, and sockets with NCCL_SHM_DISABLE=1 too); over the
# --pytorch-transports, beside the DP, TP and PP points, `train --flash-attn` and the PyTorch reference
# with SDPA (flash attention), side by side (launch/pytorch_reference.py, when python3 has torch; with
# --pytorch-compile also torch.compile'd PyTorch with unfused attention beside the unfused points);
# then launch/instep_vs_bench.py (each collective's bandwidth inside the DP, TP and PP steps against
# `bench` at the same size) and launch/predict_accuracy.py over every point. Builds nothing; every command line is written to
# OUT/commands.txt as run.
#
# usage: launch/gpu-train-matrix.sh --commscale BIN --out DIR [--np N] [--calibration FILE]
#            [--transports "nvlink p2p-off sockets"] [--micro-batches "1 2 4"]
#            [--pytorch-transports "nvlink"] [--pytorch-compile] [--dry-run]
#
# A run is 10-20 s of train (start, NCCL set-up, 13 steps) and 20-60 s of PyTorch (torch.compile adds
# ~40 s): the whole matrix on 2 GPUs is ~20 minutes, over one 10-minute device call. Split it, e.g.
#   --transports nvlink                                       (21 train + 9 flash + 9 PyTorch, ~8 min)
#   --transports "p2p-off sockets" --pytorch-transports ""    (42 train, ~8 min)
# --dry-run lists the commands of a choice without running them.
#
# The model is the GPT block stack of issue 5 (hidden 4096, 32 heads, seq 2048, 8 layers, bf16, no
# embedding). Plans for N GPUs: DP=N, TP=N, PP=N (GPipe, 4 microbatches per stage), and with N = 8
# DP2xTP2xPP2; ZeRO 1, 2 and 3 under DP=N; TP=N with sequence parallelism.
set -euo pipefail

commscale=""
out=""
np=2
calibration=""
transports="nvlink p2p-off sockets"
micro_batches="1 2 4"
pytorch_transports="nvlink"
pytorch_compile=0
dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --commscale) commscale="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --calibration) calibration="$2"; shift 2 ;;
    --transports) transports="$2"; shift 2 ;;
    --micro-batches) micro_batches="$2"; shift 2 ;;
    --pytorch-transports) pytorch_transports="$2"; shift 2 ;;
    --pytorch-compile) pytorch_compile=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    *) echo "gpu-train-matrix.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$commscale" ] || [ -z "$out" ]; then
  echo "usage: $0 --commscale BIN --out DIR [--np N] [--calibration FILE] [--transports LIST] [--dry-run]" >&2
  exit 2
fi
case "$np" in ''|*[!0-9]*) echo "gpu-train-matrix.sh: --np must be a number, not '$np'" >&2; exit 2 ;; esac
for transport in $transports $pytorch_transports; do  # checked here: transport_env runs in a subshell
  case "$transport" in
    nvlink|p2p-off|sockets) ;;
    *) echo "gpu-train-matrix.sh: unknown transport '$transport' (nvlink, p2p-off, sockets)" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out"

mpirun_args=(-np "$np" --bind-to none)
if [ "$(id -u)" = 0 ]; then mpirun_args+=(--allow-run-as-root); fi
block=(--model gpt3-6.7b --layers 8 --vocab 0)
failed=0

run() {  # run NAME ENV_ASSIGNMENTS... -- COMMAND...
  local name="$1"; shift
  local env_vars=()
  while [ "$1" != "--" ]; do env_vars+=("$1"); shift; done
  shift
  echo "$name: ${env_vars[*]} $*" >> "$out/commands.txt"
  if [ "$dry_run" = 1 ]; then echo "$name: ${env_vars[*]} $*"; return 0; fi
  if ! env "${env_vars[@]}" "$@" > "$out/$name.txt" 2>&1; then
    echo "gpu-train-matrix.sh: $name failed (see $out/$name.txt)" >&2
    failed=1
  fi
  grep -E '^step time|step_time_s' "$out/$name.txt" | head -n 1 | sed "s/^/$name: /" || true
}

transport_env() {
  case "$1" in
    nvlink) echo "NCCL_P2P_DISABLE=0" ;;
    p2p-off) echo "NCCL_P2P_DISABLE=1" ;;
    sockets) echo "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1" ;;
  esac
}

plans=("dp:--dp $np" "tp:--tp $np" "pp:--pp $np --schedule gpipe" "tpsp:--tp $np --sp"
       "zero1:--dp $np --zero 1" "zero2:--dp $np --zero 2" "zero3:--dp $np --zero 3")
if [ "$np" = 8 ]; then plans+=("dp2tp2pp2:--dp 2 --tp 2 --pp 2"); fi

has_torch=0
if [ "$dry_run" = 1 ] || python3 -c 'import torch' 2>/dev/null; then has_torch=1; fi
points=()
for transport in $transports; do
  with_pytorch=0
  for t in $pytorch_transports; do [ "$t" = "$transport" ] && with_pytorch=1; done
  read -r -a env_vars <<< "$(transport_env "$transport")"
  x_args=()
  for assignment in "${env_vars[@]}"; do x_args+=(-x "${assignment%%=*}"); done
  for mb in $micro_batches; do
    for entry in "${plans[@]}"; do
      label="${entry%%:*}"
      read -r -a plan <<< "${entry#*:}"
      replicas=1  # 4 microbatches per replica and step
      case "$label" in dp|zero*) replicas=$np ;; dp2tp2pp2) replicas=2 ;; esac
      global=$((mb * 4 * replicas))
      name="train-$transport-$label-mb$mb"
      run "$name" "${env_vars[@]}" -- mpirun "${mpirun_args[@]}" "${x_args[@]}" "$commscale" train "${block[@]}" \
        "${plan[@]}" --micro-batch "$mb" --global-batch "$global" --steps 10 --warmup 3 --no-flash-attn -J "$out/$name.json"
      points+=("$out/$name.json")
      case "$label" in dp|tp|pp) ;; *) continue ;; esac
      [ "$with_pytorch" = 1 ] || continue
      name="train-$transport-$label-flash-mb$mb"
      run "$name" "${env_vars[@]}" -- mpirun "${mpirun_args[@]}" "${x_args[@]}" "$commscale" train "${block[@]}" \
        "${plan[@]}" --flash-attn --micro-batch "$mb" --global-batch "$global" --steps 10 --warmup 3 -J "$out/$name.json"
      points+=("$out/$name.json")
      [ "$has_torch" = 1 ] || continue
      reference=(python3 "$here/pytorch_reference.py" --mode "$label" --layers 8 --hidden 4096 --heads 32 --seq 2048
                 --micro-batch "$mb" --microbatches 4)
      name="pytorch-$transport-$label-sdpa-mb$mb"
      run "$name" "${env_vars[@]}" -- mpirun "${mpirun_args[@]}" "${x_args[@]}" "${reference[@]}" --attention sdpa
      points+=("$out/$name.txt")
      if [ "$pytorch_compile" = 1 ]; then
        name="pytorch-$transport-$label-compile-mb$mb"
        run "$name" "${env_vars[@]}" -- mpirun "${mpirun_args[@]}" "${x_args[@]}" "${reference[@]}" --compile
        points+=("$out/$name.txt")
      fi
    done
  done
done

if [ "$dry_run" = 0 ]; then
  instep=()
  for point in "${points[@]}"; do
    case "$point" in *-dp-mb*.json|*-tp-mb*.json|*-pp-mb*.json) instep+=("$point") ;; esac
  done
  if [ ${#instep[@]} -gt 0 ]; then
    python3 "$here/instep_vs_bench.py" --commscale "$commscale" --out "$out/instep-vs-bench" \
      --mpirun "mpirun --bind-to none $([ "$(id -u)" = 0 ] && echo --allow-run-as-root)" "${instep[@]}" || failed=1
  fi
  accuracy=(python3 "$here/predict_accuracy.py" --commscale "$commscale" --out "$out/accuracy")
  if [ -n "$calibration" ]; then accuracy+=(--calibration "$calibration"); fi
  "${accuracy[@]}" "${points[@]}" || failed=1
fi
exit "$failed"
