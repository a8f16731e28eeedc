#!/bin/bash
# 1 x H200, one device call (~6 minutes), issue 21: commscale's side of the accuracy grid again after
# the step's memory kernel stopped being compute-bound (its GELU used an IEEE-rounded reciprocal, and
# every value read was transformed, the up projection's and the gradient's too: the executor's
# activations ran at 2.2 TB/s, predicted 35-40% fast; run-5's timelines), and PyTorch's kernel rows
# of both blocks, each into a profile of its own. Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03b/run-8.sh
#
#   1. machine.txt; 2. build commscale (Release, sm_90, no tests)
#   3. calibrate --measure gemm,memory,host,interference --heat-ms 20             -> cal.json
#   4. launch/pytorch_kernels.py (GPT eager rows, SDPA rows with and without dropout) -> cal-eager.json
#      and --arch llama over cal.json                                             -> cal-eager-llama.json
#   5. train at the 17 runs of results/h200x1-2026-12-02b/points.jsonl (4 with --timeline)
set -u
source launch/device-run.sh
device_run_start run-8 540
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train"
device_run_machine
device_run_build /tmp/b8

el "3. calibrate"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory,host,interference --heat-ms 20 --cluster h200x1"
within 150 330 "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory,host,interference \
  --heat-ms 20 --cluster h200x1 > "$W/calibrate.txt" 2>&1
echo "calibrate rc=$?"; grep -E "^memory|^host" "$W/calibrate.txt" | tail -16
save

el "4. PyTorch's eager kernels and attention, GPT and Llama"
cmd "python3 launch/pytorch_kernels.py --base W/cal.json -o W/cal-eager.json"
within 75 260 python3 launch/pytorch_kernels.py --base "$W/cal.json" -o "$W/cal-eager.json" > "$W/pytorch-kernels.txt" 2>&1
echo "pytorch_kernels rc=$?"; tail -1 "$W/pytorch-kernels.txt"
llama=(--arch llama --hidden 4096 --heads 32 --ffn 14336 --tokens 1024,4096,16384)
cmd "python3 launch/pytorch_kernels.py ${llama[*]} --base W/cal.json -o W/cal-eager-llama.json"
within 60 220 python3 launch/pytorch_kernels.py "${llama[@]}" --base "$W/cal.json" -o "$W/cal-eager-llama.json" \
  > "$W/pytorch-kernels-llama.txt" 2>&1
echo "pytorch_kernels --arch llama rc=$?"; tail -1 "$W/pytorch-kernels-llama.txt"
save

el "5. train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
runs_s=$(( $(left) - 25 )); if [ "$runs_s" -gt 200 ]; then runs_s=200; fi  # start no run after this
within 230 5 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s "$runs_s"
echo "train rc=$?: $(ls "$W"/train/train-*.json 2>/dev/null | wc -l) runs"
save
el "done: $OUT/h200x1-run-8.tgz"
