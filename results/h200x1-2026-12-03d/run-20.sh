#!/bin/bash
# 1 x H200, one device call (~2 minutes), issue 21, after run-19 (same session): an SDPA call's host
# time by shape, dropout and GQA (sdpa_host.py, this folder).
# Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03d/run-20.sh
set -u
source launch/device-run.sh
device_run_start run-20 110
here=results/h200x1-2026-12-03d
mkdir -p "$W/sdpa"
device_run_machine
el "SDPA host time per call by shape"
cmd "python3 $here/sdpa_host.py --out W/sdpa --rounds 8 --budget-s 80"
within 100 3 python3 "$here/sdpa_host.py" --out "$W/sdpa" --rounds 8 --budget-s 80 > "$W/sdpa/sdpa.txt" 2> "$W/sdpa/sdpa.err"
echo "sdpa_host rc=$?"; tail -2 "$W/sdpa/sdpa.err"; grep -c "^r" "$W/sdpa/sdpa.txt"
save
el "done: $OUT/h200x1-run-20.tgz"
