#!/usr/bin/env bash
# Functions the Slurm batch scripts share (sourced, not run). A batch script runs from a copy in
# Slurm's spool directory, so the repository is found from COMMSCALE_ROOT or the submit directory.
#
# Environment read:
#   COMMSCALE_ROOT       the repository (default: SLURM_SUBMIT_DIR, i.e. where sbatch was run)
#   COMMSCALE_BIN        the executable (default: COMMSCALE_ROOT/build/src/commscale)
#   COMMSCALE_RESULTS    the folder for this job's results (default: COMMSCALE_ROOT/results/slurm-JOBID)
#   COMMSCALE_SRUN_MPI   srun's --mpi plugin (default: pmix; `srun --mpi=list` shows those built)
#   COMMSCALE_SRUN_ARGS  more srun arguments, split at spaces (e.g. "--cpu-bind=cores")

# Sets commscale_root, commscale_bin, commscale_out and srun_args; prints the job's layout.
# shellcheck disable=SC2034 # commscale_out and commscale_root are for the scripts that source this
commscale_slurm_setup() {
  if [ -z "${SLURM_JOB_ID:-}" ]; then
    echo "$0: not inside a Slurm job: submit it with sbatch" >&2
    exit 2
  fi
  commscale_root="${COMMSCALE_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}"
  commscale_bin="${COMMSCALE_BIN:-$commscale_root/build/src/commscale}"
  commscale_out="${COMMSCALE_RESULTS:-$commscale_root/results/slurm-$SLURM_JOB_ID}"
  if [ ! -x "$commscale_bin" ]; then
    echo "$0: $commscale_bin is not an executable: build commscale, or set COMMSCALE_BIN" >&2
    exit 2
  fi
  local more=()
  read -r -a more <<< "${COMMSCALE_SRUN_ARGS:-}"
  srun_args=(--mpi="${COMMSCALE_SRUN_MPI:-pmix}" "${more[@]}")
  mkdir -p "$commscale_out"
  echo "# job $SLURM_JOB_ID: ${SLURM_JOB_NUM_NODES:-1} node(s) [${SLURM_JOB_NODELIST:-?}]," \
    "${SLURM_NTASKS:-?} tasks (${SLURM_NTASKS_PER_NODE:-?} per node), GPUs per node: ${SLURM_GPUS_PER_NODE:-none}"
  echo "# results in $commscale_out"
}

# commscale_srun NAME COMMAND ARGS...: runs commscale COMMAND on every task of the job, its text in
# NAME.txt and, for bench, train and doctor without -J of their own, its JSON in NAME.json. Returns
# commscale's exit code.
commscale_srun() {
  local name="$1"
  shift
  local args=("$@")
  case "$1" in
    bench | train | doctor)
      local a has_json=0
      for a in "${args[@]}"; do
        case "$a" in -J | --output_file | --json | -J=* | --output_file=* | --json=*) has_json=1 ;; esac
      done
      if [ "$has_json" = 0 ]; then args+=(-J "$commscale_out/$name.json"); fi
      ;;
  esac
  local cmd=(srun "${srun_args[@]}" "$commscale_bin" "${args[@]}")
  echo "# ${cmd[*]}" | tee -a "$commscale_out/commands.txt"
  "${cmd[@]}" | tee "$commscale_out/$name.txt"
}
