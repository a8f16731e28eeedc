#!/usr/bin/env bash
#SBATCH --job-name=commscale-doctor
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=00:20:00
#SBATCH --output=commscale-doctor-%j.out
# Cluster acceptance on N nodes, one task per GPU: `commscale doctor` checks every GPU (identity, PCIe
# link, NVLink, clocks, ECC, XID, a sustained GEMM), every node (NICs, GPU and host copies, all_reduce
# inside it), the job (all_reduce, all_gather), then ceil(log2 N) rounds of node pairs that name a
# slow node, NIC or link, each against what the cluster should deliver. The job's exit code is
# doctor's: 0 every check passed, 6 something is below expectation (doctor.txt names it).
#
# usage: sbatch [--nodes=N --ntasks-per-node=G --gpus-per-node=G] launch/slurm-doctor.sh [DOCTOR ARGS...]
#   e.g. sbatch --nodes=64 launch/slurm-doctor.sh --cluster hgx-h100
# Environment: COMMSCALE_CLUSTER (doctor's --cluster), COMMSCALE_BACKEND (--backend), and those of
# launch/slurm-lib.sh. Set NCCL_IB_HCA, NCCL_SOCKET_IFNAME and friends before sbatch: the job
# inherits them and doctor.json's context block records them. Writes nodes.txt, doctor.txt,
# doctor.json, doctor.jsonl and commands.txt.
set -euo pipefail

# shellcheck source=slurm-lib.sh source-path=SCRIPTDIR
source "${COMMSCALE_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}/launch/slurm-lib.sh"
commscale_slurm_setup

# What each node has, before anything can hang: GPUs, InfiniBand ports and their rates.
# shellcheck disable=SC2016 # expanded on each node
srun --ntasks-per-node=1 --ntasks="$SLURM_JOB_NUM_NODES" bash -c 'echo "# $(hostname): \
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}, GPUs: $(nvidia-smi -L 2>/dev/null | grep -c ^GPU), \
InfiniBand: $(for p in /sys/class/infiniband/*/ports/*; do [ -e "$p/rate" ] && \
printf "%s:%s %s " "$(basename "$(dirname "$(dirname "$p")")")" "$(basename "$p")" "$(cut -d" " -f1 "$p/rate")G"; done)"' |
  sort | tee "$commscale_out/nodes.txt"

args=(doctor)
if [ -n "${COMMSCALE_CLUSTER:-}" ]; then args+=(--cluster "$COMMSCALE_CLUSTER"); fi
if [ -n "${COMMSCALE_BACKEND:-}" ]; then args+=(--backend "$COMMSCALE_BACKEND"); fi
rc=0
commscale_srun doctor "${args[@]}" "$@" || rc=$?
case "$rc" in
  0) echo "# doctor: every check passed (exit 0)" ;;
  6) echo "# doctor: something is below expectation (exit 6): see the suspects in $commscale_out/doctor.txt" ;;
  *) echo "# doctor: did not finish (exit $rc): see $commscale_out/doctor.txt and the job's output" ;;
esac
exit "$rc"
