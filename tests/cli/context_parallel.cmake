# Context parallelism (src/workload/CONTEXT_PARALLEL.md): plan shows the split and the key-value exchanges over
# the cp group; train runs them on the CPU backend under mpirun (4 ranks: cp 2 x dp 2) with real MPI sendrecv
# (p2p) or all-gathers and reduce-scatters (all_gather), as many and as large as the plan's program has;
# predict prices a 32K-token Llama 2 7B with cp 2; search enumerates cp only when asked.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

set(plan_args --model tiny --seq 256 --cp 2 --dp 2 --global-batch 4 --flash-attn)
commscale_run(EXPECT 0 OUTPUT out ARGS plan ${plan_args})
expect_contains("${out}" "4 ranks = dp 2 x tp 1 x pp 1 x cp 2")
expect_contains("${out}" "context  cp 2 (p2p): 128 of 256 tokens of each sequence per rank")
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan ${plan_args} --json)
string(JSON plan_cp GET "${plan_json}" plan cp)
expect_equal(${plan_cp} 2 "plan.cp")
# p2p: 8 layers x 2 microbatches x (1 exchange forward + 2 backward), each a KV block of 128 tokens x 2 x 4 KV
# heads x 16 x 2 bytes.
planned_calls("${plan_json}" cp sendrecv)
expect_equal(${planned_count} 48 "the plan's sendrecv calls per rank")
expect_equal(${planned_bytes} 1572864 "the plan's sendrecv bytes per rank")

commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS train --backend cpu ${plan_args} --steps 1 --warmup 1 -J train.json)
file(READ "${WORK_DIR}/train.json" train_json)
trained_calls("${train_json}" cp sendrecv)
math(EXPR expected_calls "4 * ${planned_count}")
expect_equal(${trained_calls} ${expected_calls} "train's sendrecv calls (4 ranks)")
math(EXPR expected_size "${planned_bytes} / ${planned_count}")
expect_equal(${trained_size} ${expected_size} "train's sendrecv size")

# all_gather: K and V gathered forward and backward (4 calls), dK and dV reduce-scattered (2), the whole sequence's.
set(gather_args --model tiny --seq 256 --cp 2 --dp 2 --global-batch 4 --flash-attn --cp-comm-type all_gather)
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan ${gather_args} --json)
commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS train --backend cpu ${gather_args} --steps 1 --warmup 1
                                               -J train_ag.json)
file(READ "${WORK_DIR}/train_ag.json" train_json)
foreach(kind all_gather reduce_scatter)
  planned_calls("${plan_json}" cp ${kind})
  trained_calls("${train_json}" cp ${kind})
  math(EXPR expected_calls "4 * ${planned_count}")
  expect_equal(${trained_calls} ${expected_calls} "train's ${kind} calls (4 ranks)")
  math(EXPR expected_size "${planned_bytes} / ${planned_count}")
  expect_equal(${trained_size} ${expected_size} "train's ${kind} size")
endforeach()
expect_equal(${planned_count} 32 "the plan's reduce_scatter calls per rank")

# predict: Llama 2 7B at 32K tokens on an H100 node with cp 2.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-h100 --model llama2-7b --seq 32768 --world 8 --tp 4
                                       --cp 2 --sp --global-batch 4 --zero 1)
expect_contains("${out}" "context  cp 2 (p2p): 16384 of 32768 tokens of each sequence per rank")

# search enumerates cp only when asked, and then predicts those plans in full.
commscale_run(EXPECT 0 OUTPUT plain_json ARGS search --cluster hgx-a100 --model tiny --seq 1024 --global-batch 16
                                              --json)
string(JSON plain_candidates GET "${plain_json}" candidates)
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-a100 --model tiny --seq 1024 --global-batch 16 --cp 1,2,4
                                       -J search.json)
expect_contains("${out}" "plans with it predicted in full")
file(READ "${WORK_DIR}/search.json" search_json)
string(JSON cp_candidates GET "${search_json}" candidates)
string(JSON cp_method GET "${search_json}" method)
expect_contains("${cp_method}" "full simulation of each plan with it")
string(JSON plain_method GET "${plain_json}" method)
expect_contains("${plain_method}" "stage model (src/predict/stage_model.hpp)")
if(NOT cp_candidates GREATER plain_candidates)
  message(FATAL_ERROR "--cp 1,2,4: ${cp_candidates} plans, no more than ${plain_candidates} without: no cp enumerated")
endif()
