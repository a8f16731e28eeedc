#!/bin/bash
# 1 x H200 after the merges: GPU tests, the main job (bench, topo, p2p, train, predict, compare,
# report), compute-sanitizer over the GPU tests.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
timeout 200 mpirun -np 1 /tmp/b/tests/commscale_gpu_tests > $OUT/r/gpu-tests-np1.log 2>&1; echo "gpu tests rc=$?"; grep -E "FAILED|Failure" $OUT/r/gpu-tests-np1.log | head -20; tail -3 $OUT/r/gpu-tests-np1.log
el tests
(cd /tmp/b && timeout 120 ctest -R "report_browser" --output-on-failure > $OUT/r/report-browser.log 2>&1; echo "report_browser rc=$?")
el browser
COMMSCALE_BIN=/tmp/b/src/commscale COMMSCALE_CLUSTER=h200x1 COMMSCALE_RESULTS=$OUT/r/main timeout 300 bash launch/main.sh > $OUT/r/main.log 2>&1; echo "main.sh rc=$?"; tail -15 $OUT/r/main.log; ls $OUT/r/main
el main
tar czf $OUT/h200x1-e.tgz -C $OUT r && rm -rf $OUT/r
