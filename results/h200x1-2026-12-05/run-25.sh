#!/bin/bash
# 1 x H200 (or H100), one device call (~4 minutes), issue 34: every GPU test on one rank at this session's commit
# (QueuedBehindSpin, which calibrate, the host probes and the kernel floor share, was refactored without a GPU), and
# the main job's training step on this GPU predicted as `--framework commscale`. Run from the repository's root with
# $OUT set:
#
#   COMMSCALE_TREE=$(git rev-parse --short=12 HEAD) bash results/h200x1-2026-12-05/run-25.sh
set -u
source launch/device-run.sh
device_run_start run-25 420
device_run_machine

el "1. build: commscale and the GPU tests (-Werror)"
build="cmake -S . -B /tmp/b25 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCOMMSCALE_WERROR=ON && cmake --build /tmp/b25 -j 16 --target commscale commscale_gpu_tests"
cmd "$build"
within 220 150 bash -c "$build" > "$W/build.log" 2>&1
echo "build rc=$?"
if [ ! -x /tmp/b25/tests/commscale_gpu_tests ]; then tail -20 "$W/build.log"; save; exit 1; fi
save

el "2. every GPU test, one rank"
cmd "mpirun -np 1 /tmp/b25/tests/commscale_gpu_tests"
within 200 60 "${mpi[@]}" /tmp/b25/tests/commscale_gpu_tests > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\S*\[  (PASSED|FAILED) |FAILED \]|SKIPPED \]" "$W/gpu-tests.log" | tail -25
save

el "3. a GPT-3 1.3B step (4 layers) measured, then predicted as the framework that ran it"
flags=(--model gpt3-1.3b --layers 4 --micro-batch 2 --global-batch 8)
cmd "mpirun -np 1 commscale train ${flags[*]} --steps 5 --warmup 2 -J train.json"
within 60 20 "${mpi[@]}" /tmp/b25/src/commscale train "${flags[@]}" --steps 5 --warmup 2 -J "$W/train.json" \
  > "$W/train.txt" 2>&1
for fw in commscale megatron-lm; do
  cmd "commscale predict --cluster h200x1 ${flags[*]} --framework $fw"
  /tmp/b25/src/commscale predict --cluster h200x1 "${flags[@]}" --framework "$fw" -J "$W/predict-$fw.json" \
    > "$W/predict-$fw.txt" 2>&1
done
grep -E "^# step|step time" "$W/train.txt" | head -3
grep -E "^step " "$W"/predict-*.txt
save
el "done: $OUT/h200x1-run-25.tgz"
