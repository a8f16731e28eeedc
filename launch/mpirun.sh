#!/usr/bin/env bash
# Starts commscale under Open MPI's mpirun with one rank per GPU on every node (or a given count per
# node on the CPU backend), passing NCCL_*, UCX_* and COMMSCALE_* variables to every rank.
#
# usage: launch/mpirun.sh [OPTIONS] [--] COMMAND [ARGS...]
#   COMMAND ARGS      commscale's command line, e.g. bench all_reduce -b 8 -e 1G -f 2
# options (each also read from the environment variable in brackets):
#   --hosts LIST      comma-separated hosts (COMMSCALE_HOSTS); default: this host only
#   --hostfile FILE   an Open MPI hostfile instead of --hosts (COMMSCALE_HOSTFILE)
#   --per-node N      ranks per node (COMMSCALE_RANKS_PER_NODE); default: the GPUs nvidia-smi lists
#                     here, or 2 where it lists none (the CPU backend)
#   --pml NAME        ucx, ob1 or default (COMMSCALE_PML); ucx overrides Debian's "pml = ^ucx" in
#                     /etc/openmpi/openmpi-mca-params.conf (for this run only)
#   --bind MODE       none (default) or numa: each rank bound to the NUMA node it is mapped to (COMMSCALE_BIND)
#   --commscale PATH  the executable (COMMSCALE_BIN); default: build/src/commscale in this repository
#   --mpirun PATH     the mpirun to use (COMMSCALE_MPIRUN); default: mpirun on the PATH
#   --dry-run         print the mpirun command line and exit
#   --mpi-arg ARG     one more argument for mpirun (repeatable), e.g. --mpi-arg --tag-output
#
# The GPU count is taken on the host running this script: every node is assumed to be alike.
# As root, Open MPI's root allowance is added; --oversubscribe where there are more ranks than cores.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hosts="${COMMSCALE_HOSTS:-}"
hostfile="${COMMSCALE_HOSTFILE:-}"
per_node="${COMMSCALE_RANKS_PER_NODE:-}"
pml="${COMMSCALE_PML:-default}"
bind="${COMMSCALE_BIND:-none}"
commscale="${COMMSCALE_BIN:-$root/build/src/commscale}"
mpirun="${COMMSCALE_MPIRUN:-mpirun}"
dry_run=0
extra=()

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
fail() {
  echo "mpirun.sh: $*" >&2
  exit 2
}
need_value() { if [ "$2" -lt 2 ]; then fail "$1 needs a value"; fi; }

while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) need_value "$1" "$#"; hosts="$2"; shift 2 ;;
    --hostfile) need_value "$1" "$#"; hostfile="$2"; shift 2 ;;
    --per-node) need_value "$1" "$#"; per_node="$2"; shift 2 ;;
    --pml) need_value "$1" "$#"; pml="$2"; shift 2 ;;
    --bind) need_value "$1" "$#"; bind="$2"; shift 2 ;;
    --commscale) need_value "$1" "$#"; commscale="$2"; shift 2 ;;
    --mpirun) need_value "$1" "$#"; mpirun="$2"; shift 2 ;;
    --mpi-arg) need_value "$1" "$#"; extra+=("$2"); shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) fail "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then fail "no commscale command given, e.g. launch/mpirun.sh bench all_reduce"; fi
if [ -n "$hosts" ] && [ -n "$hostfile" ]; then fail "--hosts and --hostfile exclude each other"; fi
if [ -n "$hostfile" ] && [ ! -r "$hostfile" ]; then fail "--hostfile $hostfile: cannot read it"; fi
if [ "$dry_run" = 0 ] && [ ! -x "$commscale" ]; then
  fail "--commscale $commscale is not an executable: build commscale first (cmake --build build)"
fi

if [ -z "$per_node" ]; then
  per_node=0
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    per_node=$(nvidia-smi -L | grep -c '^GPU' || true)
  fi
  if [ "$per_node" = 0 ]; then per_node=2; fi
fi
case "$per_node" in
  '' | *[!0-9]* | 0) fail "--per-node $per_node: expected a positive number of ranks per node" ;;
esac

# Nodes: the hosts given, the hostfile's lines that name one, or this host.
nodes=1
if [ -n "$hosts" ]; then
  IFS=, read -r -a host_list <<< "$hosts"
  nodes=${#host_list[@]}
elif [ -n "$hostfile" ]; then
  nodes=$(grep -cv '^[[:space:]]*\(#.*\)\{0,1\}$' "$hostfile" || true)
  if [ "$nodes" = 0 ]; then fail "--hostfile $hostfile names no host"; fi
fi

args=(-np "$((nodes * per_node))" --map-by "ppr:$per_node:node")
if [ -n "$hosts" ]; then
  slots=()
  for h in "${host_list[@]}"; do slots+=("$h:$per_node"); done
  args+=(--host "$(IFS=,; echo "${slots[*]}")")
elif [ -n "$hostfile" ]; then
  args+=(--hostfile "$hostfile")
fi

case "$bind" in
  none) args+=(--bind-to none) ;;
  numa) args+=(--bind-to numa) ;;
  *) fail "--bind $bind: expected none or numa" ;;
esac
case "$pml" in
  default) ;;
  ob1) args+=(--mca pml ob1) ;;
  ucx)
    args+=(--mca pml ucx)
    # Open MPI 4.1's UCX PML only starts on Mellanox devices (pml_ucx_devices "mlx*") unless told
    # that any will do; without one here (a test machine, RoCE on another vendor), say so.
    if ! compgen -G '/sys/class/infiniband/mlx*' >/dev/null; then
      echo "mpirun.sh: no mlx* InfiniBand device here: letting UCX use any transport (pml_ucx_tls/devices any)" >&2
      args+=(--mca pml_ucx_tls any --mca pml_ucx_devices any)
    fi
    ;;
  *) fail "--pml $pml: expected ucx, ob1 or default" ;;
esac
if [ "$(id -u)" = 0 ]; then args+=(--allow-run-as-root); fi
if [ "$per_node" -gt "$(nproc)" ]; then args+=(--oversubscribe); fi

# Every variable that changes how NCCL, UCX or commscale behave reaches every rank on every node.
while IFS= read -r name; do
  case "$name" in NCCL_* | UCX_* | COMMSCALE_*) args+=(-x "$name") ;; esac
done < <(compgen -e)

cmd=("$mpirun" "${args[@]}" "${extra[@]}" "$commscale" "$@")
echo "mpirun.sh: ${cmd[*]}" >&2
if [ "$dry_run" = 1 ]; then exit 0; fi
exec "${cmd[@]}"
