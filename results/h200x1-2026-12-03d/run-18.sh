#!/bin/bash
# 1 x H200, one device call (~6 minutes), issue 21, after run-17 (same session):
#   - host_busy.py (this folder): does an eager PyTorch launch cost the host less while the GPU is busy?
#   - torch.profiler's kernel times at three host-bound PyTorch points (launch/pytorch_reference.py
#     --profile), for their GPU time against the predicted (host_ladder.py's one profiled step ran 1.3-1.7x
#     the eager profile's GPU time);
#   - every GPU test on one rank, the calibrate test's expectations corrected after run-17 (its GEMM
#     row count was stale: calibrate's attention rows had grown).
# Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03d/run-18.sh
set -u
source launch/device-run.sh
device_run_start run-18 460
here=results/h200x1-2026-12-03d
mkdir -p "$W/busy"
device_run_machine

el "1. host time per launch, GPU idle and busy"
cmd "mpirun -np 1 python3 $here/host_busy.py --out W/busy --rounds 5 --budget-s 80"
within 110 280 "${mpi[@]}" python3 "$here/host_busy.py" --out "$W/busy" --rounds 5 --budget-s 80 \
  > "$W/busy/busy.txt" 2> "$W/busy/busy.err"
echo "host_busy rc=$?"; tail -2 "$W/busy/busy.err"; tail -3 "$W/busy/busy.txt"
save

el "2. kernel times at three host-bound PyTorch points"
mkdir -p "$W/prof"
python3 launch/regime_grid.py pytorch-grid <(grep '"regime": "host-bound"' results/h200x1-2026-12-02b/points.jsonl) \
  --out "$W/prof" > /dev/null
python3 - "$W/prof" <<'PY'
import json, sys
folder = sys.argv[1]
keep = ("g1024-s512-mb8-sdpa", "g2048-s1024-mb1-sdpa", "q05-s512-mb1-sdpa")
lines = [json.loads(l) for l in open(f"{folder}/grid.jsonl")]
with open(f"{folder}/grid-prof.jsonl", "w") as f:
    for line in lines:
        if line["id"] in keep:
            line.update(steps=10, warmup=3, profile=f"{folder}/prof-{line['id']}.json")
            f.write(json.dumps(line) + "\n")
PY
cmd "mpirun -np 1 python3 launch/pytorch_reference.py --mode dp --grid W/prof/grid-prof.jsonl"
within 60 220 "${mpi[@]}" python3 launch/pytorch_reference.py --mode dp --grid "$W/prof/grid-prof.jsonl" \
  > "$W/prof/grid.txt" 2> "$W/prof/grid.err"
echo "profiles rc=$?: $(find "$W/prof" -name "prof-*.json" | wc -l)"
save

el "3. build: commscale and the GPU tests"
build="cmake -S . -B /tmp/b18 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build /tmp/b18 -j 16 --target commscale commscale_gpu_tests"
cmd "$build"
within 150 160 bash -c "$build" > "$W/build.log" 2>&1
echo "build rc=$?"
if [ ! -x /tmp/b18/tests/commscale_gpu_tests ]; then tail -20 "$W/build.log"; save; exit 1; fi
save

el "4. every GPU test on one rank"
cmd "mpirun -np 1 /tmp/b18/tests/commscale_gpu_tests"
within 160 5 "${mpi[@]}" /tmp/b18/tests/commscale_gpu_tests > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "FAILED|Failure|PASSED|tests ran" "$W/gpu-tests.log" | head -20
save
el "done: $OUT/h200x1-run-18.tgz"
