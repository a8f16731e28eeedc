#!/bin/bash
# 1 x H200, one device call (~7 minutes), issue 21, after runs 17 and 18 (same session): eager PyTorch's
# host stacks and the 8 host-bound runs in as many interleaved rounds as the call allows
# (host_ladder.py --no-ladder), so that the medians of many rounds can be held against each other and
# each round's spread read.
# Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03d/run-19.sh
set -u
source launch/device-run.sh
device_run_start run-19 400
here=results/h200x1-2026-12-03d
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/ladder"
device_run_machine

el "host stacks and host-bound runs, interleaved rounds"
grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"
python3 launch/regime_grid.py pytorch-grid "$W/points-host-bound.jsonl" --out "$W/ladder" > /dev/null
cmd "mpirun -np 1 python3 $here/host_ladder.py --grid W/ladder/grid.jsonl --out W/ladder --no-ladder --rounds 40 --budget-s 340"
within 390 5 "${mpi[@]}" python3 "$here/host_ladder.py" --grid "$W/ladder/grid.jsonl" --out "$W/ladder" \
  --no-ladder --rounds 40 --budget-s 340 > "$W/ladder/ladder.txt" 2> "$W/ladder/ladder.err"
echo "host_ladder rc=$?"; tail -2 "$W/ladder/ladder.err"; grep -c "^r" "$W/ladder/ladder.txt"
save
el "done: $OUT/h200x1-run-19.tgz"
