#!/usr/bin/env bash
# Runs `commscale bench` and nccl-tests side by side on this machine, alternating between them so both
# see the same machine state, for each transport (NVLink/PCIe P2P as found, NCCL_P2P_DISABLE=1
# host-staged, and P2P+SHM disabled sockets). nccl-tests must already be built with MPI=1 (its README
# says how); this script only runs it. Summarize the output with launch/compare_nccl_tests.py.
#
# usage: launch/compare-nccl-tests.sh --commscale BIN --nccl-tests DIR --out DIR [--np N]
#            [--transports "nvlink p2p-off sockets"] [--collectives "all_reduce ..."]
#            [--sweep-min SIZE] [--reps N] [--small-reps N]
#
# Per transport: the largest size, the iterations, the repetitions of the full sweep, and of the
# small-message sweep (8 B - 4 KiB, 100 iterations), which alternate tool by tool. --reps and
# --small-reps override the repetitions; --sweep-min starts the full sweep higher (e.g. 64M, to
# spend the time on repetitions of the sizes a bandwidth comparison needs).
set -euo pipefail

commscale=""
nccl_tests=""
out=""
np=2
transports="nvlink p2p-off sockets"
collectives="all_reduce all_gather reduce_scatter alltoall sendrecv"
sweep_min=8
reps_override=""
small_reps_override=""

while [ $# -gt 0 ]; do
  case "$1" in
    --commscale) commscale="$2"; shift 2 ;;
    --nccl-tests) nccl_tests="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --transports) transports="$2"; shift 2 ;;
    --collectives) collectives="$2"; shift 2 ;;
    --sweep-min) sweep_min="$2"; shift 2 ;;
    --reps) reps_override="$2"; shift 2 ;;
    --small-reps) small_reps_override="$2"; shift 2 ;;
    *) echo "compare-nccl-tests.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$commscale" ] || [ -z "$nccl_tests" ] || [ -z "$out" ]; then
  echo "usage: $0 --commscale BIN --nccl-tests DIR --out DIR [--np N] [--transports ...] [--collectives ...]" >&2
  exit 2
fi
# The lists are split on blanks into arrays, never globbed.
read -r -a collective_list <<< "$collectives"
read -r -a transport_list <<< "$transports"
for c in "${collective_list[@]}"; do
  if [ ! -x "$nccl_tests/${c}_perf" ]; then
    echo "compare-nccl-tests.sh: $nccl_tests/${c}_perf not found: build nccl-tests with MPI=1 first" >&2
    exit 2
  fi
done
mkdir -p "$out"

mpirun_args=(-np "$np" --bind-to none)
if [ "$(id -u)" = 0 ]; then mpirun_args+=(--allow-run-as-root); fi

# Per transport: "environment|max size|iterations|warmup|sweep repetitions|small-message repetitions".
# Slower paths get smaller sweeps so the whole comparison fits in minutes.
transport_settings() {
  case "$1" in
    nvlink) echo "|4G|20|5|2|6" ;;
    p2p-off) echo "NCCL_P2P_DISABLE=1|1G|20|5|1|1" ;;
    sockets) echo "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1|256M|10|2|1|1" ;;
    *) echo "compare-nccl-tests.sh: unknown transport '$1'" >&2; exit 2 ;;
  esac
}

# run NAME ENV -- COMMAND...: runs one sweep, keeping its output and the exact command line.
run() {
  local name="$1" env_text="$2"
  shift 3
  local -a env_args=()
  read -r -a env_args <<< "$env_text"
  echo "# $env_text mpirun ${mpirun_args[*]} $*" > "$out/$name.txt"
  env "${env_args[@]}" mpirun "${mpirun_args[@]}" "$@" >> "$out/$name.txt" 2>&1 || echo "# exit code $?" >> "$out/$name.txt"
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader 2>/dev/null || true
  nvidia-smi topo -m 2>/dev/null || true
  echo "commscale: $("$commscale" --version)"
  echo "mpirun: $(mpirun --version | head -n 1)"
} > "$out/machine.txt"

for transport in "${transport_list[@]}"; do
  settings=$(transport_settings "$transport") || exit 2
  IFS='|' read -r env_text max iters warmup reps small_reps <<< "$settings"
  reps=${reps_override:-$reps}
  small_reps=${small_reps_override:-$small_reps}
  for c in "${collective_list[@]}"; do
    for rep in $(seq 1 "$reps"); do
      run "cs-$transport-$c-$rep" "$env_text" -- "$commscale" bench "$c" -b "$sweep_min" -e "$max" -f 2 -n "$iters" \
        -w "$warmup" -J "$out/cs-$transport-$c-$rep.json"
      run "nt-$transport-$c-$rep" "$env_text" -- "$nccl_tests/${c}_perf" -b "$sweep_min" -e "$max" -f 2 -n "$iters" -w "$warmup"
    done
  done
  # Small messages: many short alternating runs, so a difference of a microsecond is not noise.
  for rep in $(seq 1 "$small_reps"); do
    for c in "${collective_list[@]}"; do
      run "small-cs-$transport-$c-$rep" "$env_text" -- "$commscale" bench "$c" -b 8 -e 4K -f 2 -n 100 -w 20
      run "small-nt-$transport-$c-$rep" "$env_text" -- "$nccl_tests/${c}_perf" -b 8 -e 4K -f 2 -n 100 -w 20
    done
  done
done
echo "compare-nccl-tests.sh: results in $out"
