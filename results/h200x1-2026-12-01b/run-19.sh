#!/bin/bash
# launch/gpu-reliability.sh as committed (memcheck over every GPU test, racecheck over Gpu.*), 1 x H200.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
if [ ! -x /tmp/b/tests/commscale_gpu_tests ]; then
  cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1; echo "build rc=$?"
fi
el ready
echo "launch/gpu-reliability.sh BUILD OUT/reliability" > $OUT/r/commands.txt
timeout 300 bash launch/gpu-reliability.sh /tmp/b $OUT/r/reliability > $OUT/r/reliability.log 2>&1; echo "gpu-reliability rc=$?"; cat $OUT/r/reliability/summary.txt; grep -h "SUMMARY\|tests ran" $OUT/r/reliability/*check*.txt | head
el done
tar czf $OUT/r19.tgz -C $OUT r && rm -rf $OUT/r
