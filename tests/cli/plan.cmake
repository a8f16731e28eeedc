# `commscale plan`: a valid plan that fits (0), one that does not fit (1), an invalid plan (2), and the
# JSON summary and program dump.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 0 OUTPUT out ARGS plan --model gpt3-175b --tp 8 --pp 16 --dp 8 --global-batch 512 --gpu-memory-gib 80)
expect_contains("${out}" "deadlock-free")
expect_contains("${out}" "fits")

commscale_run(EXPECT 1 OUTPUT out ARGS plan --model gpt3-175b --tp 8 --pp 2 --gpu-memory-gib 80)

commscale_run(EXPECT 2 ERROR err ARGS plan --model llama2-70b --tp 3)
expect_contains("${err}" "--tp: 3 does not divide the 64 attention heads")

commscale_run(EXPECT 2 ERROR err ARGS plan --model no-such-model)
expect_contains("${err}" "no-such-model")

commscale_run(EXPECT 0 OUTPUT out ARGS plan --model tiny --tp 2 --pp 2 --json --dump-program program.json)
string(JSON flops GET "${out}" model_flops_per_step)
if(NOT flops GREATER 0)
  message(FATAL_ERROR "model_flops_per_step is ${flops}")
endif()
string(JSON stages LENGTH "${out}" memory_per_rank)
expect_equal(${stages} 2 "memory_per_rank entries (one per pipeline stage)")
file(READ "${WORK_DIR}/program.json" program)
string(JSON ranks LENGTH "${program}" ranks)
expect_equal(${ranks} 4 "ranks in the dumped program")

# The framework line names the type of the data-parallel reduction: Megatron-LM reduces bf16 gradients in fp32
# (twice the bytes that train, commscale's executor, moves in bf16).
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model tiny --dp 2)
expect_contains("${out}" "framework megatron-lm: ")
expect_contains("${out}" "data-parallel reduction in fp32")
expect_contains("${out}" "all_reduce             1       6.08 MiB")
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model tiny --dp 2 --framework commscale)
expect_contains("${out}" "data-parallel reduction in bf16")
expect_contains("${out}" "all_reduce             1       3.04 MiB")
