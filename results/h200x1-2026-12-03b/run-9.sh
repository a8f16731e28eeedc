#!/bin/bash
# 1 x H200, one device call (~8 minutes), issue 21: the whole one-GPU accuracy grid on one machine,
# after calibrate gained flash attention's causal products (the shapes `train --flash-attn` runs) and
# pytorch_host.py its repeats: commscale's side, both PyTorch profiles, PyTorch's host rows and every
# PyTorch run of the grid in the same call, so that the host rows are this machine's host. Run from the
# repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03b/run-9.sh
#
#   1. machine.txt; 1b. launch/gemm_context.py: four GEMM shapes of the steps, in the contexts of a step
#      and of calibrate (clock or L2: why the unfused steps' GEMMs beat their rows)  -> gemm-context.json
#   2. build commscale (Release, sm_90, no tests)
#   3. calibrate --measure gemm,memory,host,interference --heat-ms 20               -> cal.json
#   4. train at the 17 runs of results/h200x1-2026-12-02b/points.jsonl (4 with --timeline)
#   5. launch/pytorch_kernels.py, GPT over cal.json -> cal-eager.json; --arch llama -> cal-eager-llama.json
#   6. launch/pytorch_host.py --repeats 3 over cal-eager.json -> cal-full.json (host.json: the stacks),
#      and the same fit (--fit-only) over cal-eager-llama.json -> cal-full-llama.json
#   7. the PyTorch reference at the 19 runs of points.jsonl, one process (host-bound points: 30 steps
#      after 5, the others 5 after 2: launch/regime_grid.py)                     -> pytorch/a
#   8. train --kernels eager --host-framework pytorch-eager at the points marked host_framework
#   9. the 8 host-bound PyTorch runs once more                                   -> pytorch/b
set -u
source launch/device-run.sh
device_run_start run-9 555
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train" "$W/pytorch/a" "$W/pytorch/b"
device_run_machine
el "1b. GEMMs in a step's contexts"
shapes=(--shape 1024,8192,2048 --shape 1024,2048,8192 --shape 1024,6144,2048 --shape 4096,14336,4096)
cmd "python3 launch/gemm_context.py ${shapes[*]} -o W/gemm-context.json"
within 60 480 python3 launch/gemm_context.py "${shapes[@]}" -o "$W/gemm-context.json" > "$W/gemm-context.txt" 2>&1
echo "gemm_context rc=$?"; cat "$W/gemm-context.txt"
save
device_run_build /tmp/b9

el "3. calibrate"
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory,host,interference --heat-ms 20 --cluster h200x1"
within 120 380 "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory,host,interference \
  --heat-ms 20 --cluster h200x1 > "$W/calibrate.txt" 2>&1
echo "calibrate rc=$?: $(grep -c '"m":' "$W/cal.json") GEMM rows"
save

el "4. train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
within 90 300 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s 75 | tail -3
echo "train: $(ls "$W"/train/train-*.json 2>/dev/null | wc -l) runs"
save

el "5. PyTorch's eager kernels and attention, GPT and Llama"
cmd "python3 launch/pytorch_kernels.py --base W/cal.json -o W/cal-eager.json"
within 75 250 python3 launch/pytorch_kernels.py --base "$W/cal.json" -o "$W/cal-eager.json" > "$W/pytorch-kernels.txt" 2>&1
echo "pytorch_kernels rc=$?"; tail -1 "$W/pytorch-kernels.txt"
llama=(--arch llama --hidden 4096 --heads 32 --ffn 14336 --tokens 1024,4096,16384)
cmd "python3 launch/pytorch_kernels.py ${llama[*]} --base W/cal.json -o W/cal-eager-llama.json"
within 60 230 python3 launch/pytorch_kernels.py "${llama[@]}" --base "$W/cal.json" -o "$W/cal-eager-llama.json" \
  > "$W/pytorch-kernels-llama.txt" 2>&1
echo "pytorch_kernels --arch llama rc=$?"; tail -1 "$W/pytorch-kernels-llama.txt"
save

el "6. PyTorch's host costs, 3 repeats"
cmd "mpirun -np 1 python3 launch/pytorch_host.py --repeats 3 --base W/cal-eager.json -o W/cal-full.json --details W/host.json"
within 90 170 "${mpi[@]}" python3 launch/pytorch_host.py --repeats 3 --base "$W/cal-eager.json" -o "$W/cal-full.json" \
  --details "$W/host.json" > "$W/pytorch-host.txt" 2>&1
echo "pytorch_host rc=$?"; grep "^# pytorch-eager" "$W/pytorch-host.txt"
cmd "python3 launch/pytorch_host.py --base W/cal-eager-llama.json -o W/cal-full-llama.json --fit-only W/host.json"
python3 launch/pytorch_host.py --base "$W/cal-eager-llama.json" -o "$W/cal-full-llama.json" --fit-only "$W/host.json" \
  > "$W/pytorch-host-llama.txt" 2>&1
echo "pytorch_host --fit-only rc=$?"
save

pytorch_grid() {  # POINTS NAME MAX RESERVE: the PyTorch reference at every run of POINTS -> pytorch/NAME
  python3 launch/regime_grid.py pytorch-grid "$1" --out "$W/pytorch/$2" > /dev/null
  cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/pytorch/$2/grid.jsonl"
  within "$3" "$4" "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/pytorch/$2/grid.jsonl" \
    > "$W/pytorch/$2/grid.txt" 2> "$W/pytorch/$2/grid.err"
  echo "pytorch grid $2 rc=$?: $(grep -c step_time_s "$W/pytorch/$2/grid.txt") runs"; tail -1 "$W/pytorch/$2/grid.err"
  python3 launch/regime_grid.py split-pytorch "$W/pytorch/$2/grid.txt" "$W/pytorch/$2"
  save
}

el "7. the PyTorch reference at every point"
pytorch_grid "$points" a 200 45

el "8. train at PyTorch's host costs"
grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"
cmd "python3 launch/regime_grid.py host-framework W/points-host-bound.jsonl --commscale commscale --out W/train --calibration W/cal-full.json"
within 30 15 python3 launch/regime_grid.py host-framework "$W/points-host-bound.jsonl" --commscale "$bin" \
  --out "$W/train" --calibration "$W/cal-full.json" --budget-s 20
save

el "9. the host-bound PyTorch runs again"
pytorch_grid "$W/points-host-bound.jsonl" b 60 3
python3 launch/regime_grid.py table "$points" --train "$W/train" --pytorch "$W/pytorch/a" > "$W/table.txt" 2>&1
save
el "done: $OUT/h200x1-run-9.tgz"
