# What-if inputs that used to be accepted and change nothing, or fail on a README example (issue 35,
# items 3 and 4): --set transports.pcie_p2p, --set node.gpus, a --set or --sweep of the network on one
# node, a V100's bf16 and flash attention, and a global batch that no plan of the GPUs takes.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# The group of `name` ("tp", "dp") in a prediction's JSON: its link class, bus GB/s and busy seconds.
function(group_of json name out_link out_bw out_busy)
  string(JSON count LENGTH "${json}" groups)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON group GET "${json}" groups ${i} group)
    if(group STREQUAL name)
      string(JSON link GET "${json}" groups ${i} link)
      string(JSON bw GET "${json}" groups ${i} bus_bw_GBps)
      string(JSON busy GET "${json}" groups ${i} busy_s)
      set(${out_link} "${link}" PARENT_SCOPE)
      set(${out_bw} "${bw}" PARENT_SCOPE)
      set(${out_busy} "${busy}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "no group ${name} in\n${json}")
endfunction()

# --- A. transports.pcie_p2p=true (a P2P-enabled driver) makes the 4090s' paths PCIe P2P ---
set(plan --model gpt3-1.3b --tp 2 --dp 4 --global-batch 32 --json)
commscale_run(EXPECT 0 OUTPUT staged ARGS predict --cluster rtx4090-8x-pcie ${plan})
commscale_run(EXPECT 0 OUTPUT p2p ARGS predict --cluster rtx4090-8x-pcie ${plan} --set transports.pcie_p2p=true)
foreach(group tp dp)
  group_of("${staged}" ${group} staged_link staged_bw staged_busy)
  group_of("${p2p}" ${group} p2p_link p2p_bw p2p_busy)
  expect_equal("${staged_link}" host_staged "${group} without P2P")
  expect_equal("${p2p_link}" pcie "${group} with transports.pcie_p2p=true")
  if(NOT p2p_bw GREATER staged_bw OR NOT p2p_busy LESS staged_busy)
    message(FATAL_ERROR "${group} with P2P: ${p2p_bw} GB/s, ${p2p_busy} s; host-staged: ${staged_bw} GB/s, "
                        "${staged_busy} s")
  endif()
endforeach()
string(JSON staged_tps GET "${staged}" summary tokens_per_s)
string(JSON p2p_tps GET "${p2p}" summary tokens_per_s)
if(NOT p2p_tps GREATER staged_tps)
  message(FATAL_ERROR "P2P ${p2p_tps} tokens/s is not above host-staged ${staged_tps}")
endif()
# One all-reduce over the 8 GPUs: NCCL's 24 GB/s per gen4 x16 link (the published 6 x 4090 run: 24.5),
# where host-staged moves 24 x 27/48 = 13.5. --set reaches predict --collective too.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --collective all_reduce -b 32M -e 32M --cluster rtx4090-8x-pcie
              --set transports.pcie_p2p=true)
expect_contains("${out}" "inputs   what-if --set transports.pcie_p2p=true")
expect_contains("${out}" "group    pcie ring (8 per node): bus 24.0 GB/s")
# Against the published P2P-driver runs (shared/VALIDATION.md), all-reduce busbw at 32 MB: 8 x RTX 5090
# 45.7 GB/s, 6 x RTX 4090 24.5 GB/s. Predicted within 6% (44.8 and 23.3 at this writing).
foreach(check "rtx5090-8x-pcie;8;42.96;48.44" "rtx4090-8x-pcie;6;23.03;25.97")
  list(GET check 0 cluster)
  list(GET check 1 ranks)
  list(GET check 2 low)
  list(GET check 3 high)
  commscale_run(EXPECT 0 OUTPUT out ARGS predict --collective all_reduce -b 32M -e 32M --cluster ${cluster}
                --ranks ${ranks} --set transports.pcie_p2p=true --json)
  string(JSON busbw GET "${out}" results 0 busbw_GBps)
  if(busbw LESS low OR busbw GREATER high)
    message(FATAL_ERROR "${cluster}: ${busbw} GB/s predicted, outside ${low} to ${high} (6% of the measurement)")
  endif()
endforeach()
commscale_run(EXPECT 0 OUTPUT out ARGS hw show rtx4090-8x-pcie)
expect_contains("${out}" "PCIe P2P off (GPU catalog)")
# The catalog's P2P variants of the two boxes are the --set, as files: the same busbw.
foreach(box rtx4090-8x-pcie rtx5090-8x-pcie)
  commscale_run(EXPECT 0 OUTPUT set ARGS predict --collective all_reduce -b 32M -e 32M --cluster ${box}
                --set transports.pcie_p2p=true --json)
  commscale_run(EXPECT 0 OUTPUT file ARGS predict --collective all_reduce -b 32M -e 32M --cluster ${box}-p2p --json)
  string(JSON set_busbw GET "${set}" results 0 busbw_GBps)
  string(JSON file_busbw GET "${file}" results 0 busbw_GBps)
  expect_equal(${file_busbw} ${set_busbw} "${box}-p2p's busbw against --set transports.pcie_p2p=true")
endforeach()

# --- B. node.gpus=4 on 8-GPU clusters: the removed GPUs' links go, and a note says which ---
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-a100 --model gpt3-1.3b --tp 4 --global-batch 8
              --set node.gpus=4)
expect_contains("${out}" "cluster  hgx-a100: 1 node x 4 a100-sxm4-80gb")
expect_contains("${out}" "note     --set node.gpus=4 removes gpu4 to gpu7 and their links (the file's entries: "
                         "node.links[3], node.links[4] without them)")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster rtx4090-8x-pcie --model gpt3-1.3b --tp 4 --global-batch 8
              --set node.gpus=4)
expect_contains("${out}" "node.links[1] dropped")
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster a100-pcie-8x-bridged --model gpt3-1.3b --global-batch 8
              --set node.gpus=3 --top 1)
expect_contains("${out}" "search   a100-pcie-8x-bridged on 3 GPUs")
expect_contains("${out}" "removes gpu3 to gpu7")
# More GPUs than the file's links name: refused, saying what to do; where the links name the GPUs by
# kind (gpu*), more GPUs join them.
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster hgx-a100 --model gpt3-1.3b --tp 8 --dp 2 --global-batch 16
              --set node.gpus=16)
expect_contains("${err}" "--set node.gpus=16: ")
expect_contains("${err}" "node.devices.gpu is 16 where the file has 8, and its links reach the new gpus only "
                         "through \"gpu*\" entries: use at most 8 gpus")
expect_contains("${err}" "`commscale hw show hgx-a100 --json`")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster rtx3090-6x-pcie --model gpt3-125m --dp 8 --global-batch 8
              --set node.gpus=8)
expect_contains("${out}" "1 node x 8 rtx3090")

# --- C. the network on one node: a warning naming the key and why ---
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100:8
              --sweep network.nic_rate_Gbps=100,400)
expect_contains("${out}" "warning  --sweep network.nic_rate_Gbps=100,400 changes nothing for hgx-a100:8: it runs on "
                         "one node of hgx-a100, so no traffic crosses the network")
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100:16
              --sweep network.nic_rate_Gbps=25,400)
string(FIND "${out}" "warning" at)
expect_equal(${at} -1 "a warning where the network carries the data-parallel traffic")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-a100 --model gpt3-1.3b --tp 8 --global-batch 8
              --set network.nic_rate_Gbps=400)
expect_contains("${out}" "warning  --set network.nic_rate_Gbps=400 changes nothing for this prediction")
# A swept key the prediction does not use, for no reason commscale knows by name: the rows say so.
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100:8
              --sweep node.links[0].note=x,y)
expect_contains("${out}" "warning  --sweep node.links[0].note=x,y: every value gives hgx-a100:8 the same row")

# --- D. a V100 has neither bf16 nor FlashAttention ---
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster dgx1-v100 --model gpt3-1.3b --tp 8 --global-batch 8)
expect_contains("${out}" "seq 2048, fp16")
expect_contains("${out}" "note     v100-sxm2-32gb has no bf16 rate (Volta, compute capability 7.0): trained "
                         "in fp16 instead of the default bf16 (--dtype fp16 to say so)")
expect_contains("${out}" "cannot run FlashAttention, which needs compute capability 8.0 or later: attention unfused")
string(FIND "${out}" ", flash attention" at)
expect_equal(${at} -1 "flash attention on a V100")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster dgx1-v100 --model gpt3-1.3b --tp 8 --global-batch 8
              --dtype bf16)
expect_contains("${err}" "--dtype: bf16 on v100-sxm2-32gb")
expect_contains("${err}" "(expected fp16 on this GPU (--dtype fp16))")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster dgx1-v100 --model gpt3-1.3b --tp 8 --global-batch 8
              --flash-attn)
expect_contains("${err}" "--flash-attn: fused (flash) attention on v100-sxm2-32gb")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster dgx1-v100 --model gpt3-1.3b --tp 8 --global-batch 8
              --dtype fp16 --no-flash-attn)
string(FIND "${out}" "note     v100" at)
expect_equal(${at} -1 "a note when the flags already say fp16 and no flash attention")
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster dgx1-v100 --model gpt3-1.3b --global-batch 8 --top 1)
expect_contains("${out}" "note     v100-sxm2-32gb has no bf16 rate")
string(FIND "${out}" " flash\n" at)
expect_equal(${at} -1 "a flash plan on a V100")
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 8 --clusters dgx1-v100,hgx-a100)
expect_contains("${out}" "note     dgx1-v100: v100-sxm2-32gb has no bf16 rate")
commscale_run(EXPECT 2 ERROR err ARGS compare --model gpt3-1.3b --global-batch 8 --clusters dgx1-v100,hgx-a100
              --dtype bf16)
expect_contains("${err}" "--dtype: bf16 on v100-sxm2-32gb")

# --- E. a global batch that no plan of the box's GPUs takes: the nearest ones that use them all ---
# llama2-7b: 32 layers and 32 heads leave tp and pp of 1 or 2 on 6 GPUs, so dp 3 or 6.
commscale_run(EXPECT 1 OUTPUT out ARGS search --cluster rtx3090-6x-pcie --model llama2-7b --global-batch 256)
expect_contains("${out}" "no valid plan: no dp x tp x pp of these GPUs divides the model and the global batch; the "
                         "nearest global batches that use all 6 GPUs: 255 (dp 3) or 258 (dp 3, 6) (--global-batch)")
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model llama2-7b --global-batch 256 --clusters rtx3090-6x-pcie)
expect_contains("${out}" "the nearest global batches that use all 6 GPUs: 255 (dp 3) or 258 (dp 3, 6)")
# gpt3-1.3b (24 layers, 16 heads) on 6 GPUs: dp 6 needs a multiple of 6; 64 forces dp 2 x pp 3, and says so.
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster rtx3090-6x-pcie --model gpt3-1.3b --global-batch 64 --top 1)
expect_contains("${out}" "note     global batch 64 does not split over dp 6, the most data parallelism 6 GPUs give "
                         "this model: its plans take more tensor or pipeline parallelism instead; 60 or 66 would")
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster rtx3090-6x-pcie --model gpt3-1.3b --global-batch 66 --top 1)
string(FIND "${out}" "does not split" at)
expect_equal(${at} -1 "a note when the batch splits over dp 6")
