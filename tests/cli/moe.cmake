# Mixture of experts with expert parallelism (src/workload/MOE.md): plan and predict show the experts and
# their all-to-alls; train runs them on the CPU backend under mpirun with real MPI all-to-alls, as many and
# as large as the plan's program has; search and compare enumerate ep and predict each plan that fits in
# full; bad plans name their flag.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

set(plan_args --model tiny-moe --tp 2 --dp 2 --ep 4 --sp --global-batch 4)
commscale_run(EXPECT 0 OUTPUT out ARGS plan ${plan_args})
expect_contains("${out}" "experts  8 experts of F 256 in 7 of 8 layers, top 2, shared F 128, dropless")
expect_contains("${out}" "ep 4: 2 experts per rank, expert data parallel 1")
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan ${plan_args} --json)
string(JSON plan_ep GET "${plan_json}" plan ep)
expect_equal(${plan_ep} 4 "plan.ep")
string(JSON experts GET "${plan_json}" model moe experts)
expect_equal(${experts} 8 "model.moe.experts")
# The plan's all-to-alls per rank: 7 MoE layers x 2 microbatches x (dispatch + combine, forward and backward).
group_traffic("${plan_json}" ep planned_count planned_bytes)
expect_equal(${planned_count} 56 "the plan's all-to-alls per rank")
# Megatron-LM's --moe-grouped-gemm is what commscale runs anyway: accepted, the same plan.
commscale_run(EXPECT 0 OUTPUT grouped_json ARGS plan ${plan_args} --moe-grouped-gemm --json)
group_traffic("${grouped_json}" ep grouped_count grouped_bytes)
expect_equal("${grouped_count} ${grouped_bytes}" "${planned_count} ${planned_bytes}" "--moe-grouped-gemm's all-to-alls")
# So are its default dispatcher and MoE layer pattern (other values are refused by name: tests/bad_inputs).
commscale_run(EXPECT 0 OUTPUT megatron_moe_json ARGS plan ${plan_args} --moe-token-dispatcher-type alltoall
                                                     --moe-layer-freq 1 --json)
group_traffic("${megatron_moe_json}" ep megatron_moe_count megatron_moe_bytes)
expect_equal("${megatron_moe_count} ${megatron_moe_bytes}" "${planned_count} ${planned_bytes}"
             "--moe-token-dispatcher-type alltoall's all-to-alls")
string(JSON grouped_flops GET "${grouped_json}" hardware_flops_per_step)
string(JSON planned_flops GET "${plan_json}" hardware_flops_per_step)
expect_equal("${grouped_flops}" "${planned_flops}" "--moe-grouped-gemm's FLOPs per step")

# train on 4 CPU ranks: the same all-to-alls, counted over the ranks, of the same size.
commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS train --backend cpu ${plan_args} --steps 1 --warmup 1 -J train.json)
expect_contains("${out}" "ep         alltoall")
file(READ "${WORK_DIR}/train.json" train_json)
string(JSON rates LENGTH "${train_json}" comm_rates)
math(EXPR last "${rates} - 1")
set(trained_calls 0)
foreach(i RANGE ${last})
  string(JSON group GET "${train_json}" comm_rates ${i} group)
  if(group STREQUAL "ep")
    string(JSON trained_calls GET "${train_json}" comm_rates ${i} calls_per_step)
    string(JSON trained_size GET "${train_json}" comm_rates ${i} size_bytes)
  endif()
endforeach()
math(EXPR expected_calls "4 * ${planned_count}")
expect_equal(${trained_calls} ${expected_calls} "train's all-to-all calls (4 ranks)")
math(EXPR expected_size "${planned_bytes} / ${planned_count}")
expect_equal(${trained_size} ${expected_size} "train's all-to-all size")

# predict prices them on a cluster, and says what it assumed.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-a100 --model deepseek-v2-lite --world 8 --ep 8 --zero 1
                                       --global-batch 16)
expect_contains("${out}" "experts  64 experts of F 1408 in 26 of 27 layers, top 6, shared F 2816, dropless")
expect_contains("${out}" "ep 8: 8 experts per rank, expert data parallel 1")
expect_contains("${out}" "routing priced as balanced")
expect_contains("${out}" "ep              8      1  nvlink")

# Bad input names its flag, exit 2.
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny-moe --world 4 --ep 3)
expect_contains("${err}" "--ep: 3 does not divide the 8 experts")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --world 2 --ep 2)
expect_contains("${err}" "--ep: 2 for tiny, which has no experts")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny-moe --tp 2 --ep 2)
expect_contains("${err}" "--sp")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --experts 4 --top-k 8)
expect_contains("${err}" "--top-k")

# search enumerates the expert-parallel sizes and predicts each plan that fits in full: its best plan's step
# is predict's for the same flags, exactly.
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-a100 --model tiny-moe --global-batch 16 --top 3
                                       -J search.json)
expect_contains("${out}" "each plan that fits predicted in full")
file(READ "${WORK_DIR}/search.json" search_json)
string(JSON moe_candidates GET "${search_json}" candidates)
commscale_run(EXPECT 0 OUTPUT dense_json ARGS search --cluster hgx-a100 --model tiny --global-batch 16 --json)
string(JSON dense_candidates GET "${dense_json}" candidates)
if(NOT moe_candidates GREATER dense_candidates)
  message(FATAL_ERROR "tiny-moe: ${moe_candidates} plans, no more than tiny's ${dense_candidates}: no ep enumerated")
endif()
string(JSON searched GET "${search_json}" top 0 step_time_s)
string(JSON best_ep ERROR_VARIABLE no_ep GET "${search_json}" top 0 plan ep)
if(no_ep)
  set(best_ep 1)  # written only when not 1
endif()
foreach(key dp tp pp micro_batch zero_stage recompute schedule chunks)
  string(JSON best_${key} GET "${search_json}" top 0 plan ${key})
endforeach()
set(best_flags --dp ${best_dp} --tp ${best_tp} --pp ${best_pp} --ep ${best_ep} --micro-batch ${best_micro_batch}
               --zero ${best_zero_stage} --recompute ${best_recompute} --schedule ${best_schedule}
               --chunks ${best_chunks})
string(JSON best_sp GET "${search_json}" top 0 plan sequence_parallel)
if(best_sp)
  list(APPEND best_flags --sp)
endif()
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-a100 --model tiny-moe --global-batch 16 ${best_flags}
                                       -J predict.json)
file(READ "${WORK_DIR}/predict.json" predict_json)
string(JSON predicted GET "${predict_json}" summary step_time_s)
expect_equal(${searched} ${predicted} "search's step time of its best plan against predict's")

# compare covers MoE models: Mixtral 8x7B on an A100 node and on RTX 4090s (which do not hold it).
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model mixtral-8x7b --global-batch 64
                                       --clusters hgx-a100,rtx4090-8x-pcie)
expect_contains("${out}" "ep 8")
expect_contains("${out}" "rtx4090-8x-pcie                  8  no plan fits")

# Expert tensor parallelism (--etp, Megatron-LM's --expert-tensor-parallel-size): each expert's fc1 and fc2 split
# over 2 ranks, the received rows all-gathered over the expert-tensor-parallel group before the experts and
# reduce-scattered after. tiny-moe without biases (Megatron-Core has none in MoE layers with etp > 1).
set(etp_args --model tiny-moe --disable-bias-linear --tp 2 --dp 2 --ep 2 --etp 2 --sp --global-batch 4)
commscale_run(EXPECT 0 OUTPUT out ARGS plan ${etp_args})
expect_contains("${out}" "ep 2: 4 experts per rank, each split over expert tensor parallel 2, expert data parallel 1")
commscale_run(EXPECT 0 OUTPUT plan_json ARGS plan ${etp_args} --json)
string(JSON plan_etp GET "${plan_json}" plan etp)
expect_equal(${plan_etp} 2 "plan.etp")
# Per rank: 7 MoE layers x 2 microbatches x (forward and backward) all-to-alls, two of each; one all-gather and
# one reduce-scatter over etp in each pass, of the gathered rows: 2 x T / t x top-k = 2 x 32 x 2 rows of h 128,
# bf16.
string(JSON rows LENGTH "${plan_json}" stages 0 traffic_per_step)
math(EXPR last "${rows} - 1")
foreach(i RANGE ${last})
  string(JSON group GET "${plan_json}" stages 0 traffic_per_step ${i} group)
  string(JSON kind GET "${plan_json}" stages 0 traffic_per_step ${i} kind)
  if(group STREQUAL "ep" OR group STREQUAL "etp")
    string(JSON planned_${group}_${kind}_count GET "${plan_json}" stages 0 traffic_per_step ${i} count)
    string(JSON planned_${group}_${kind}_bytes GET "${plan_json}" stages 0 traffic_per_step ${i} bytes)
  endif()
endforeach()
expect_equal(${planned_ep_alltoall_count} 56 "the etp plan's all-to-alls per rank")
expect_equal(${planned_etp_all_gather_count} 28 "the etp plan's all-gathers over etp per rank")
expect_equal(${planned_etp_reduce_scatter_count} 28 "the etp plan's reduce-scatters over etp per rank")
math(EXPR gathered_bytes "28 * 2 * 32 * 2 * 128 * 2")
expect_equal(${planned_etp_all_gather_bytes} ${gathered_bytes} "the etp plan's all-gather bytes per rank")
expect_equal(${planned_etp_reduce_scatter_bytes} ${gathered_bytes} "the etp plan's reduce-scatter bytes per rank")

# train on 4 CPU ranks runs them over MPI: as many calls (over the ranks) and of the same size as the program's.
commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS train --backend cpu ${etp_args} --steps 1 --warmup 1 -J train_etp.json)
file(READ "${WORK_DIR}/train_etp.json" train_json)
string(JSON rates LENGTH "${train_json}" comm_rates)
math(EXPR last "${rates} - 1")
foreach(i RANGE ${last})
  string(JSON group GET "${train_json}" comm_rates ${i} group)
  string(JSON call GET "${train_json}" comm_rates ${i} call)
  if(group STREQUAL "ep" OR group STREQUAL "etp")
    string(JSON trained_${group}_${call}_calls GET "${train_json}" comm_rates ${i} calls_per_step)
    string(JSON trained_${group}_${call}_size GET "${train_json}" comm_rates ${i} size_bytes)
  endif()
endforeach()
foreach(pair "ep;alltoall" "etp;all_gather" "etp;reduce_scatter")
  list(GET pair 0 group)
  list(GET pair 1 kind)
  math(EXPR expected_calls "4 * ${planned_${group}_${kind}_count}")
  expect_equal(${trained_${group}_${kind}_calls} ${expected_calls} "train's ${group} ${kind} calls (4 ranks)")
  math(EXPR expected_size "${planned_${group}_${kind}_bytes} / ${planned_${group}_${kind}_count}")
  expect_equal(${trained_${group}_${kind}_size} ${expected_size} "train's ${group} ${kind} size")
endforeach()

# Refused by name: etp x ep not dividing tp x dp, biases, FP8, a dense model.
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny-moe --disable-bias-linear --tp 2 --dp 2 --ep 4 --etp 2 --sp)
expect_contains("${err}" "--etp: 2 x ep 4 does not divide tp 2 x dp 2")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny-moe --tp 2 --dp 2 --ep 2 --etp 2 --sp)
expect_contains("${err}" "--etp: 2 for tiny-moe, whose linear layers have biases")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --world 2 --etp 2)
expect_contains("${err}" "--etp: 2 for tiny, which has no experts")

# search enumerates etp only when asked: --etp 1,2 adds plans with etp 2; without it none has one.
commscale_run(EXPECT 0 OUTPUT etp_search ARGS search --cluster hgx-a100 --model tiny-moe --disable-bias-linear
                                             --global-batch 16 --etp 1,2 --json)
commscale_run(EXPECT 0 OUTPUT plain_search ARGS search --cluster hgx-a100 --model tiny-moe --disable-bias-linear
                                               --global-batch 16 --json)
string(JSON etp_candidates GET "${etp_search}" candidates)
string(JSON plain_candidates GET "${plain_search}" candidates)
if(NOT etp_candidates GREATER plain_candidates)
  message(FATAL_ERROR "--etp 1,2: ${etp_candidates} plans, no more than ${plain_candidates} without it")
endif()
string(FIND "${plain_search}" "\"etp\"" plain_etp)
expect_equal(${plain_etp} -1 "a search without --etp has no plan with etp")

# An all-to-all whose elements do not split into ep equal chunks is padded to them (layer_dims.hpp, whole_chunks):
# Qwen1.5-MoE's 60 experts over ep 60, 4096 x 4 rows x 2048 = 33554432 elements a dispatch, go as 60 x 559241 =
# 33554460 (67108920 bytes), 96 all-to-alls a step (24 layers x dispatch and combine, forward and backward). The step
# program's check refused them (exit 3, a report per rank), and so it did an FP8 dispatch's and a load imbalance's
# rounded bytes over ep 3; train runs the padded exchange.
commscale_run(EXPECT 0 OUTPUT qwen_json ARGS plan --model qwen1.5-moe-a2.7b --world 60 --ep 60 --json)
group_traffic("${qwen_json}" ep qwen_count qwen_bytes)
expect_equal("${qwen_count} ${qwen_bytes}" "96 6442456320" "Qwen1.5-MoE's all-to-alls over ep 60")
commscale_run(EXPECT 0 RANKS 3 OUTPUT out ARGS train --backend cpu --model tiny-moe --experts 6 --ep 3 --dp 3
                                               --global-batch 3 --fp8 delayed --fp8-dispatch --load-imbalance 1.3
                                               --steps 1 --warmup 0)
expect_contains("${out}" "ep         alltoall")
