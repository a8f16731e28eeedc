# FP8 training (--fp8 RECIPE, src/predict/FP8.md): the plan keeps the recipe and its JSON says so (a plan
# without says nothing new); Megatron-LM's --fp8-format and --fp8-recipe convert; predict and search refuse
# it on a GPU without FP8 tensor cores (A100, RTX 3090) and price it on one with (H100), an MoE model's experts
# included; LoRA with it is refused; train on the CPU backend runs its GEMMs in fp32 and says so.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan --model tiny --tp 2 --sp --fp8 delayed --json)
string(JSON recipe GET "${plan_json}" plan fp8)
expect_equal("${recipe}" "delayed" "plan.fp8")
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan --model tiny --tp 2 --sp --json)
string(JSON recipe ERROR_VARIABLE absent GET "${plan_json}" plan fp8)
if(NOT absent)
  message(FATAL_ERROR "a plan without --fp8 has plan.fp8 (${recipe})")
endif()
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan --model tiny --fp8-format hybrid --fp8-recipe tensorwise --json)
string(JSON recipe GET "${plan_json}" plan fp8)
expect_equal("${recipe}" "current" "plan.fp8 from --fp8-recipe tensorwise")
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan --model tiny --fp8-format e4m3 --json)
string(JSON recipe GET "${plan_json}" plan fp8)
expect_equal("${recipe}" "delayed" "plan.fp8 from --fp8-format alone")

commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --fp8 fast)
expect_contains("${err}" [[--fp8: unknown FP8 recipe "fast" (expected none, delayed, current or block)]])
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --fp8-recipe delayed)
expect_contains("${err}" "--fp8-recipe: given without --fp8-format")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --fp8-format hybrid --fp8 block)
expect_contains("${err}" "--fp8: block given with Megatron-LM's --fp8-format (recipe delayed)")
commscale_run(EXPECT 0 OUTPUT moe_json ARGS plan --model tiny-moe --fp8 delayed --json)
string(JSON moe_fp8 GET "${moe_json}" plan fp8)
expect_equal("${moe_fp8}" "delayed" "plan.fp8 of an MoE plan")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --lora-rank 8 --fp8 delayed)
expect_contains("${err}" "--fp8: delayed with --lora-rank 8")

# GPUs without FP8 tensor cores: refused, naming the flag and the GPU.
set(llama --model llama2-7b --tp 2 --sp --global-batch 64)
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster hgx-a100 ${llama} --fp8 delayed)
expect_contains("${err}" "--fp8: delayed on a100-sxm4-80gb")
expect_contains("${err}" "no FP8 tensor cores")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster rtx3090-4x-nvlink-pairs --model llama2-7b --fp8 current)
expect_contains("${err}" "--fp8: current on rtx3090")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster hgx-a100 ${llama} --fp8-format hybrid)
expect_contains("${err}" "no FP8 tensor cores")
commscale_run(EXPECT 2 ERROR err ARGS search --cluster hgx-a100 --model llama2-7b --global-batch 64 --fp8 delayed)
expect_contains("${err}" "--fp8: delayed on a100-sxm4-80gb")
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-h100 --model tiny-moe --global-batch 64 --fp8 delayed)
expect_contains("${out}" "fp8 delayed")
# compare asks which hardware: FP8 where the GPU has it, bf16 on the A100 with a note.
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100,hgx-h100
                                       --fp8 delayed --json)
string(JSON a100_plan ERROR_VARIABLE a100_bf16 GET "${out}" clusters 0 best plan fp8)  # no key: no FP8
if(NOT a100_bf16)
  message(FATAL_ERROR "compare --fp8 delayed: the A100's plan has fp8 ${a100_plan}")
endif()
string(JSON h100_plan GET "${out}" clusters 1 best plan fp8)
expect_equal("${h100_plan}" "delayed" "compare --fp8 delayed: the H100's plan")
string(JSON a100_notes GET "${out}" clusters 0 notes)
expect_contains("${a100_notes}" "has no FP8 tensor cores: trained in bf16, not FP8")

# H100: priced, faster than bf16.
commscale_run(EXPECT 0 OUTPUT bf16_json ARGS predict --cluster hgx-h100 ${llama} --json)
commscale_run(EXPECT 0 OUTPUT fp8_json ARGS predict --cluster hgx-h100 ${llama} --fp8 delayed --json)
string(JSON bf16_s GET "${bf16_json}" summary step_time_s)
string(JSON fp8_s GET "${fp8_json}" summary step_time_s)
if(NOT fp8_s LESS bf16_s)
  message(FATAL_ERROR "predict --fp8 delayed on hgx-h100: ${fp8_s} s, not faster than bf16's ${bf16_s} s")
endif()
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-h100 --model llama2-7b --global-batch 64 --top 3
                                       --fp8 current)
expect_contains("${out}" "fp8 current")

# train on the CPU backend: the FP8 GEMMs run in fp32 at their shapes, and the report says so.
commscale_run(EXPECT 0 OUTPUT out ARGS train --backend cpu --model tiny --fp8 delayed --steps 1 --warmup 0)
expect_contains("${out}" "FP8 GEMMs (--fp8) ran in fp32")
