#!/bin/bash
# 1 x H200, one device call (~8 minutes), issue 21:
#   - calibrate's GEMM probes with outputs in their own part of the pool (src/runtime/cuda/probe_timing.cpp)
#     against the same binary with the pool of before (outputs over the operand sets, which later shapes
#     read: run-13-probe-before.patch applied to a copy of the tree), beside launch/gemm_context.py's
#     PyTorch GEMMs on randn, on commscale's fill and on NaN at two shapes; the 17 `train` runs;
#   - eager PyTorch's host time: launch/pytorch_host.py's stacks timed behind a spin kernel and from an
#     idle GPU, and the 8 host-bound PyTorch runs timing their own host phases (pytorch_reference.py's
#     host_s), twice, alternating.
# Run from the repository's root with $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-03c/run-13.sh
set -u
source launch/device-run.sh
device_run_start run-13 560
here=results/h200x1-2026-12-03c
prev=results/h200x1-2026-12-03b
points=results/h200x1-2026-12-02b/points.jsonl
mkdir -p "$W/train"
device_run_machine

el "1. the tree before the probe change, built beside this one"
before=/tmp/tree-before
rm -rf "$before" && mkdir -p "$before" && cp -r CMakeLists.txt src kernels topologies tests "$before/"
cmd "cp -r CMakeLists.txt src kernels topologies tests /tmp/tree-before && patch -d /tmp/tree-before -p1 < $here/run-13-probe-before.patch"
patch -d "$before" -p1 < "$here/run-13-probe-before.patch" || (cd "$before" && git apply "$OLDPWD/$here/run-13-probe-before.patch")
build_before="cmake -S $before -B /tmp/b13-before -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_TESTS=OFF && cmake --build /tmp/b13-before -j 8 --target commscale"
cmd "$build_before"
timeout 300 bash -c "$build_before" > "$W/build-before.log" 2>&1 &
building=$!
device_run_build /tmp/b13
wait "$building"; echo "build before rc=$?"
bin_before=/tmp/b13-before/src/commscale
[ -x "$bin_before" ] || tail -5 "$W/build-before.log"

el "2. PyTorch's GEMMs on three operand patterns"
for data in randn commscale-signed nan; do
  cmd "python3 launch/gemm_context.py --data $data --shape 8192,8192,8192 --shape 4096,14336,4096 --contexts sustained-rotated -o W/gemm-data-$data.json"
  within 25 420 python3 launch/gemm_context.py --data "$data" --shape 8192,8192,8192 --shape 4096,14336,4096 \
    --contexts sustained-rotated -o "$W/gemm-data-$data.json" > "$W/gemm-data-$data.txt" 2>&1
  echo "gemm_context --data $data rc=$?"; grep -v "^#" "$W/gemm-data-$data.txt" | tail -2
done
save

el "3. calibrate, the probes of before and of now"
cmd "mpirun -np 1 commscale(before) calibrate -o W/cal-before.json --measure gemm --heat-ms 20 --cluster h200x1"
within 75 330 "${mpi[@]}" "$bin_before" calibrate -o "$W/cal-before.json" --measure gemm --heat-ms 20 --cluster h200x1 \
  > "$W/calibrate-before.txt" 2>&1
echo "calibrate (before) rc=$?"; grep -E "8192 x   8192 x   8192|4096 x  14336 x   4096" "$W/calibrate-before.txt" | head -3
cmd "mpirun -np 1 commscale calibrate -o W/cal.json --measure gemm,memory --heat-ms 20 --cluster h200x1"
within 85 240 "${mpi[@]}" "$bin" calibrate -o "$W/cal.json" --measure gemm,memory --heat-ms 20 --cluster h200x1 \
  > "$W/calibrate.txt" 2>&1
echo "calibrate rc=$?"; grep -E "8192 x   8192 x   8192|4096 x  14336 x   4096" "$W/calibrate.txt" | head -3
save

el "4. train at every point"
cmd "python3 launch/regime_grid.py train $points --commscale commscale --out W/train"
within 60 175 python3 launch/regime_grid.py train "$points" --commscale "$bin" --out "$W/train" --budget-s 55 | tail -2
echo "train: $(find "$W/train" -name "train-*.json" | wc -l) runs"
save

el "5. eager PyTorch's host: stacks (spin and idle GPU), the 8 host-bound runs, twice"
grep '"regime": "host-bound"' "$points" > "$W/points-host-bound.jsonl"
for pass in a b; do
  cmd "mpirun -np 1 python3 launch/pytorch_host.py --repeats 2 --base $prev/run-11/cal-eager.json -o W/cal-full-$pass.json --details W/host-$pass.json"
  within 60 40 "${mpi[@]}" python3 launch/pytorch_host.py --repeats 2 --base "$prev/run-11/cal-eager.json" \
    -o "$W/cal-full-$pass.json" --details "$W/host-$pass.json" > "$W/pytorch-host-$pass.txt" 2>&1
  echo "pytorch_host $pass rc=$?"; grep "^# pytorch-eager" "$W/pytorch-host-$pass.txt"
  save
  device_run_pytorch_grid "$W/points-host-bound.jsonl" "$pass" 50 5
done
el "done: $OUT/h200x1-run-13.tgz"
