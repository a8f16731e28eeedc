# --fp8-dispatch (src/workload/MOE.md, "FP8 dispatch"): the forward dispatch all-to-all moves 33/32 bytes an
# element instead of bf16's 2, in the plan's traffic and in train's real MPI all-to-alls; Megatron-LM's
# --moe-dispatch-fwd-dtype mxfp8 converts to it; search and compare give it to every plan (where the GPU trains in
# FP8), search's best plan file keeps it and --fp8 for predict; refused without --fp8 or without experts (exit 2).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

set(plan_args --model tiny-moe --tp 2 --dp 2 --ep 4 --sp --global-batch 4 --fp8 delayed)

commscale_run(EXPECT 0 OUTPUT bf16_json ARGS plan ${plan_args} --json)
group_traffic("${bf16_json}" ep bf16_count bf16_bytes)
commscale_run(EXPECT 0 OUTPUT fp8_json ARGS plan ${plan_args} --fp8-dispatch --json)
group_traffic("${fp8_json}" ep fp8_count fp8_bytes)
string(JSON flag GET "${fp8_json}" plan fp8_dispatch)
expect_equal(${flag} ON "plan.fp8_dispatch")
expect_equal(${fp8_count} ${bf16_count} "all-to-alls per rank")
# 7 MoE layers x 2 microbatches x 4 all-to-alls (dispatch and combine, forward and backward) of S bytes each in
# bf16; the 14 forward dispatches move S x 33/64 with FP8 dispatch.
math(EXPR size "${bf16_bytes} / ${bf16_count}")
math(EXPR expected "42 * ${size} + 14 * ${size} * 33 / 64")
expect_equal(${fp8_bytes} ${expected} "ep bytes with FP8 dispatch")

# Megatron-LM's flag converts.
commscale_run(EXPECT 0 OUTPUT megatron_json ARGS plan ${plan_args} --moe-dispatch-fwd-dtype mxfp8 --json)
group_traffic("${megatron_json}" ep megatron_count megatron_bytes)
expect_equal(${megatron_bytes} ${fp8_bytes} "ep bytes with --moe-dispatch-fwd-dtype mxfp8")

# train on 4 CPU ranks moves the FP8 dispatches' size for real.
commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS train --backend cpu ${plan_args} --fp8-dispatch --steps 1 --warmup 1
                                                -J train.json)
file(READ "${WORK_DIR}/train.json" train_json)
math(EXPR fp8_size "${size} * 33 / 64")
string(FIND "${train_json}" "\"size_bytes\": ${fp8_size}" at)
if(at LESS 0)
  string(FIND "${train_json}" "\"size_bytes\":${fp8_size}" at)
endif()
if(at LESS 0)
  message(FATAL_ERROR "train ran no all-to-all of ${fp8_size} bytes (the FP8 dispatch):\n${train_json}")
endif()

# search: every plan dispatches in FP8, the best plan's flags and plan file say so, and predict reads it back.
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-h100 --model tiny-moe --global-batch 64 --fp8 delayed
                                       --fp8-dispatch --top 1 --best-plan-file best.json -J search.json)
expect_contains("${out}" "--fp8 delayed --fp8-dispatch")
file(READ "${WORK_DIR}/search.json" search_json)
string(JSON searched GET "${search_json}" top 0 plan fp8_dispatch)
expect_equal(${searched} ON "search's best plan.fp8_dispatch")
file(READ "${WORK_DIR}/best.json" plan_file)
string(JSON file_fp8 GET "${plan_file}" plan fp8)
expect_equal("${file_fp8}" "delayed" "the best plan file's plan.fp8")
string(JSON file_dispatch GET "${plan_file}" plan fp8_dispatch)
expect_equal(${file_dispatch} ON "the best plan file's plan.fp8_dispatch")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --plan-file best.json --json)
string(JSON read_back GET "${out}" plan fp8_dispatch)
expect_equal(${read_back} ON "predict --plan-file's plan.fp8_dispatch")
string(JSON read_back GET "${out}" plan fp8)
expect_equal("${read_back}" "delayed" "predict --plan-file's plan.fp8")
# A flag beside the file overrides its key, and says so.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --plan-file best.json --fp8 current)
expect_contains("${out}" "overridden by the flags given: --fp8")
# compare: FP8 dispatch where the GPU trains in FP8; the A100's plan has neither.
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model tiny-moe --global-batch 64 --clusters hgx-a100,hgx-h100
                                       --fp8 delayed --fp8-dispatch --json)
string(JSON a100_dispatch ERROR_VARIABLE a100_none GET "${out}" clusters 0 best plan fp8_dispatch)
if(NOT a100_none)
  message(FATAL_ERROR "compare --fp8-dispatch: the A100's plan has fp8_dispatch ${a100_dispatch}")
endif()
string(JSON h100_dispatch GET "${out}" clusters 1 best plan fp8_dispatch)
expect_equal(${h100_dispatch} ON "compare --fp8-dispatch: the H100's plan")

# Refusals name the flag.
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny-moe --tp 2 --dp 2 --ep 4 --sp --fp8-dispatch)
expect_contains("${err}" "--fp8-dispatch: without --fp8")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --fp8 delayed --fp8-dispatch)
expect_contains("${err}" "--fp8-dispatch")
commscale_run(EXPECT 2 ERROR err ARGS search --cluster hgx-h100 --model tiny-moe --global-batch 64 --fp8-dispatch)
expect_contains("${err}" "--fp8-dispatch: without --fp8")
commscale_run(EXPECT 2 ERROR err ARGS compare --model tiny --global-batch 64 --clusters hgx-h100 --fp8 delayed
                                       --fp8-dispatch)
expect_contains("${err}" "--fp8-dispatch: for tiny, which has no experts")
commscale_run(EXPECT 2 ERROR err ARGS plan ${plan_args} --moe-dispatch-fwd-dtype fp4)
expect_contains("${err}" "--moe-dispatch-fwd-dtype")
