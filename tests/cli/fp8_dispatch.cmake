# --fp8-dispatch (src/workload/MOE.md, "FP8 dispatch"): the forward dispatch all-to-all moves 33/32 bytes an
# element instead of bf16's 2, in the plan's traffic and in train's real MPI all-to-alls; Megatron-LM's
# --moe-dispatch-fwd-dtype mxfp8 converts to it; refused without --fp8 or without experts (exit 2).
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

# Refusals name the flag.
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny-moe --tp 2 --dp 2 --ep 4 --sp --fp8-dispatch)
expect_contains("${err}" "--fp8-dispatch: without --fp8")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --fp8 delayed --fp8-dispatch)
expect_contains("${err}" "--fp8-dispatch")
commscale_run(EXPECT 2 ERROR err ARGS plan ${plan_args} --moe-dispatch-fwd-dtype fp4)
expect_contains("${err}" "--moe-dispatch-fwd-dtype")
