#!/usr/bin/env bash
#SBATCH --job-name=commscale-multi
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=00:30:00
#SBATCH --output=commscale-%j.out
# Several nodes, one task per GPU on each: by default all_reduce and all_gather across every GPU of
# the job (inter-node busbw), then the same within each node at once (--split consecutive:GPUS), so
# the two can be told apart. Or any commscale command given as arguments.
#
# usage: sbatch [--nodes=N --ntasks-per-node=G --gpus-per-node=G] launch/slurm-multi-node.sh [COMMAND ARGS...]
# Environment: COMMSCALE_BENCH_SIZES (default "-b 8 -e 4G -f 2"), COMMSCALE_BACKEND (bench's --backend),
# and those of launch/slurm-lib.sh. Set NCCL_IB_HCA, NCCL_SOCKET_IFNAME and friends before sbatch: Slurm passes the submitting
# environment to the job, and the context block of every result records them.
set -euo pipefail

# shellcheck source=slurm-lib.sh source-path=SCRIPTDIR
source "${COMMSCALE_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}/launch/slurm-lib.sh"
commscale_slurm_setup

# Where the job's GPUs and network are, once per node, before anything can hang.
# shellcheck disable=SC2016 # expanded on each node
srun --ntasks-per-node=1 --ntasks="$SLURM_JOB_NUM_NODES" bash -c 'echo "# $(hostname): \
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}, GPUs: $(nvidia-smi -L 2>/dev/null | grep -c ^GPU), \
InfiniBand: $(ls /sys/class/infiniband 2>/dev/null | tr "\n" " ")"' | sort | tee "$commscale_out/nodes.txt"

if [ $# -gt 0 ]; then
  commscale_srun "$1" "$@"
  exit 0
fi
per_node="${SLURM_NTASKS_PER_NODE%%(*}"
read -r -a sizes <<< "${COMMSCALE_BENCH_SIZES:--b 8 -e 4G -f 2}"
backend=()
if [ -n "${COMMSCALE_BACKEND:-}" ]; then backend=(--backend "$COMMSCALE_BACKEND"); fi
for collective in all_reduce all_gather; do
  commscale_srun "$collective-job" bench "$collective" "${sizes[@]}" "${backend[@]}"
  commscale_srun "$collective-node" bench "$collective" "${sizes[@]}" "${backend[@]}" --split "consecutive:$per_node"
done
