#!/usr/bin/env bash
#SBATCH --job-name=commscale
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --time=00:30:00
#SBATCH --output=commscale-%j.out
# One node, one task per GPU: `commscale bench` (or any command) under srun --mpi=pmix.
#
# usage: sbatch [SBATCH OPTIONS] launch/slurm-single-node.sh [COMMAND ARGS...]
#   COMMAND ARGS  commscale's command line (default: bench all -b 8 -e 1G -f 2)
# Where GPUs are generic resources, ask for them: sbatch --gpus-per-node=8 launch/slurm-single-node.sh
# (tasks and GPUs per node should be equal: commscale refuses two ranks on one GPU). On the CPU
# backend: sbatch --ntasks-per-node=2 launch/slurm-single-node.sh bench all --backend cpu -e 16M -f 4
# Results: COMMSCALE_RESULTS (default results/slurm-JOBID/) gets NAME.txt, NAME.json, commands.txt.
# Environment: see launch/slurm-lib.sh.
set -euo pipefail

# shellcheck source=slurm-lib.sh source-path=SCRIPTDIR
source "${COMMSCALE_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}/launch/slurm-lib.sh"
commscale_slurm_setup

if [ $# -eq 0 ]; then set -- bench all -b 8 -e 1G -f 2; fi
commscale_srun "$1" "$@"
