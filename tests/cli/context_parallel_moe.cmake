# Context parallelism with experts (src/workload/MOE.md, "Context parallelism"): plan shows both; train runs the
# plan's all-to-alls over the ep group and its key-value exchanges over the cp group on the CPU backend under
# mpirun (4 ranks: cp 2 x dp 2, ep 2), as many and as large as the plan's program has; predict prices
# DeepSeek-V2-Lite at 32K tokens with cp 2 and ep 8; search enumerates ep over tp x cp x dp; an ep that does not
# divide it names --ep.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

set(plan_args --model tiny-moe --seq 256 --cp 2 --dp 2 --ep 2 --global-batch 4 --flash-attn)
commscale_run(EXPECT 0 OUTPUT out ARGS plan ${plan_args})
expect_contains("${out}" "4 ranks = dp 2 x tp 1 x pp 1 x cp 2")
# edp = tp 1 x cp 2 x dp 2 / ep 2 = 2: Megatron-Core's expert layout folds cp in.
expect_contains("${out}" "ep 2: 4 experts per rank, expert data parallel 2")
expect_contains("${out}" "context  cp 2 (p2p): 128 of 256 tokens of each sequence per rank")
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan ${plan_args} --json)
# Per rank: 7 MoE layers x 2 microbatches x 4 all-to-alls (dispatch and combine, forward and backward), each of the
# rank's own tokens: 128 (seq / cp) x top-k 2 x h 128 x 2 bytes.
planned_calls("${plan_json}" ep alltoall)
expect_equal(${planned_count} 56 "the plan's all-to-alls per rank")
math(EXPR alltoall_bytes "56 * 128 * 2 * 128 * 2")
expect_equal(${planned_bytes} ${alltoall_bytes} "the plan's all-to-all bytes per rank")
set(ep_count ${planned_count})
set(ep_bytes ${planned_bytes})
# The cp ring as in a dense model: 8 layers x 2 microbatches x 3 exchanges of a KV block.
planned_calls("${plan_json}" cp sendrecv)
expect_equal(${planned_count} 48 "the plan's sendrecv calls per rank")
set(cp_count ${planned_count})
set(cp_bytes ${planned_bytes})
planned_calls("${plan_json}" edp all_reduce)
expect_equal(${planned_count} 1 "the plan's expert gradient all-reduces per rank")

commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS train --backend cpu ${plan_args} --steps 1 --warmup 1 -J train.json)
expect_contains("${out}" "ep         alltoall")
expect_contains("${out}" "cp         sendrecv")
file(READ "${WORK_DIR}/train.json" train_json)
foreach(pair "ep;alltoall;${ep_count};${ep_bytes}" "cp;sendrecv;${cp_count};${cp_bytes}")
  list(GET pair 0 group)
  list(GET pair 1 kind)
  list(GET pair 2 count)
  list(GET pair 3 bytes)
  trained_calls("${train_json}" ${group} ${kind})
  math(EXPR expected_calls "4 * ${count}")
  expect_equal(${trained_calls} ${expected_calls} "train's ${group} ${kind} calls (4 ranks)")
  math(EXPR expected_size "${bytes} / ${count}")
  expect_equal(${trained_size} ${expected_size} "train's ${group} ${kind} size")
endforeach()
trained_calls("${train_json}" edp all_reduce)
expect_equal(${trained_calls} 4 "train's expert gradient all-reduces (4 ranks)")

# predict: DeepSeek-V2-Lite at 32K tokens on an H100 node, cp 2 x dp 4 with ep 8 (edp 1), gradients over dp x cp.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-h100 --model deepseek-v2-lite --seq 32768 --cp 2 --dp 4
                                       --ep 8 --global-batch 8 --zero 1 --recompute full)
expect_contains("${out}" "ep 8: 8 experts per rank, expert data parallel 1")
expect_contains("${out}" "context  cp 2 (p2p): 16384 of 32768 tokens of each sequence per rank")
expect_contains("${out}" "ep              8      1  nvlink")
expect_contains("${out}" "dp              8      1  nvlink")

# search --cp 1,2 enumerates plans with both, among them ep 2 over cp 2 with tp x dp 1 (cp folded into the
# experts' ranks), and predicts them in full.
commscale_run(EXPECT 0 OUTPUT search_json ARGS search --cluster hgx-a100 --gpus 2 --model tiny-moe --seq 1024
                                                 --global-batch 4 --cp 1,2 --top 100 --json)
string(JSON tops LENGTH "${search_json}" top)
math(EXPR last "${tops} - 1")
set(found OFF)
foreach(i RANGE ${last})
  string(JSON cp ERROR_VARIABLE no_cp GET "${search_json}" top ${i} plan cp)
  string(JSON ep ERROR_VARIABLE no_ep GET "${search_json}" top ${i} plan ep)
  if(NOT no_cp AND NOT no_ep AND cp EQUAL 2 AND ep EQUAL 2)
    set(found ON)
  endif()
endforeach()
if(NOT found)
  message(FATAL_ERROR "search --cp 1,2 on 2 GPUs: no plan with cp 2 and ep 2 among ${tops}")
endif()

# ep divides tp x cp x dp, named so.
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny-moe --seq 256 --cp 2 --dp 1 --ep 4 --flash-attn)
expect_contains("${err}" "--ep: 4 does not divide tp 1 x cp 2 x dp 1")
# Still refused with cp: eager kernels (by name).
commscale_run(EXPECT 2 ERROR err ARGS plan ${plan_args} --kernels eager)
expect_contains("${err}" "--kernels")
