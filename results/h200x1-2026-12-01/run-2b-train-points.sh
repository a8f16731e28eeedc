#!/bin/bash
# 1 x H200: train on a spread of models and plans (points for the predictor's accuracy table; none
# of them was used to fit anything: the calibration profile is a generic GEMM grid).
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
cd .device/tree
mkdir -p $OUT/r
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=/usr -DCOMMSCALE_GIT_SHA=$(cat ../sha) > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 --target commscale >> /tmp/build.log 2>&1; echo "build rc=$?"; grep -E "error" /tmp/build.log | head -5
el built
C=/tmp/b/src/commscale
i=0
point() {
  i=$((i+1)); local name="p$(printf %02d $i)"
  echo "$name commscale train $* --steps 5 --warmup 2 -J OUT/$name.json --timeline OUT/$name-timeline.json" >> $OUT/r/commands.txt
  timeout 100 $C train "$@" --steps 5 --warmup 2 -J $OUT/r/$name.json --timeline $OUT/r/$name-timeline.json > $OUT/r/$name.txt 2>&1
  echo "$name rc=$? $* : $(grep -E '^step time' $OUT/r/$name.txt)"
}
point --no-flash-attn --model gpt3-125m --micro-batch 8 --global-batch 32
point --no-flash-attn --model gpt3-350m --micro-batch 8 --global-batch 32
point --no-flash-attn --model gpt3-1.3b --micro-batch 2 --global-batch 8
point --no-flash-attn --model gpt3-2.7b --micro-batch 2 --global-batch 8
point --no-flash-attn --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch 1 --global-batch 4 --recompute full
point --no-flash-attn --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch 2 --global-batch 8 --recompute selective
point --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch 2 --global-batch 8 --flash-attn
point --no-flash-attn --model gpt3-13b --layers 4 --vocab 0 --micro-batch 2 --global-batch 8
point --no-flash-attn --model llama2-7b --layers 8 --micro-batch 1 --global-batch 4
point --no-flash-attn --model llama3-8b --layers 4 --micro-batch 1 --global-batch 4
point --no-flash-attn --layers 12 --hidden 1024 --heads 16 --seq 1024 --vocab 0 --micro-batch 8 --global-batch 32
point --no-flash-attn --model gpt3-6.7b --layers 8 --vocab 0 --micro-batch 2 --global-batch 8 --dtype fp16
point --no-flash-attn --model gpt3-1.3b --micro-batch 4 --global-batch 16 --zero 1
el done
rm -f $OUT/r/*-timeline.json.keep
tar czf $OUT/h200x1-c.tgz -C $OUT r && rm -rf $OUT/r
