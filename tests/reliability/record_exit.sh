#!/usr/bin/env bash
# Runs one rank's command and records, for the reliability tests, its pid and how it ended:
#   record_exit.sh DIR COMMAND ARG...   writes DIR/pid.RANK at start and DIR/exit.RANK at the end.
# RANK comes from the launcher (OMPI_COMM_WORLD_RANK, PMIX_RANK or SLURM_PROCID).
set -u
dir=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}
"$@" &
child=$!
echo "$child" > "$dir/pid.$rank"
# A signal to this wrapper (the launcher ending the job) goes to the rank too.
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
wait "$child"
rc=$?
if [ "$rc" -gt 128 ] && kill -0 "$child" 2>/dev/null; then wait "$child"; rc=$?; fi
echo "$rc" > "$dir/exit.$rank"
exit "$rc"
