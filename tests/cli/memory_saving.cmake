# Memory-saving training (issue 35 item 2): adam8bit states, ZeRO-Offload of the optimizer and parameters,
# activation offload; their flags' bad values (exit 2 naming the flag); plan and predict show GPU and
# host memory; search falls back to them when no plan fits as asked, and says which it used.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# adam8bit: Llama-2-7B's optimizer state is 6 Psi + 8 ceil(Psi / 256) = 40641069184 bytes (37.85 GiB).
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model llama2-7b --optimizer adam8bit --recompute full --json)
string(JSON optimizer GET "${out}" memory_per_rank 0 optimizer_bytes)
expect_equal(${optimizer} 40641069184 "adam8bit optimizer bytes of Llama-2-7B")
string(JSON name GET "${out}" plan optimizer)
expect_equal(${name} adam8bit "plan.optimizer")

# Optimizer offload on one GPU (ZeRO 2): no optimizer state on the GPU, 12 + 4 bytes a parameter on the host.
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model llama2-7b --zero 2 --offload-optimizer cpu --recompute full
                                       --json)
string(JSON optimizer GET "${out}" memory_per_rank 0 optimizer_bytes)
expect_equal(${optimizer} 0 "GPU optimizer bytes with --offload-optimizer cpu")
string(JSON host GET "${out}" memory_per_rank 0 host total_bytes)
expect_equal(${host} 107814649856 "host bytes (16 x 6738415616)")
string(JSON offload GET "${out}" plan offload_optimizer)
expect_equal(${offload} cpu "plan.offload_optimizer")
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model llama2-7b --zero 2 --offload-optimizer cpu --recompute full)
expect_contains("${out}" "host memory per rank (offloaded), GiB")

# Bad values name their flag, exit 2.
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --optimizer adam9bit)
expect_contains("${err}" "--optimizer")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --zero 2 --offload-optimizer gpu)
expect_contains("${err}" "--offload-optimizer")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --offload-optimizer cpu)
expect_contains("${err}" "--offload-optimizer: cpu with --zero 0")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --zero 2 --offload-optimizer cpu --offload-params cpu)
expect_contains("${err}" "--offload-params: cpu with --zero 2")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --zero 3 --offload-params cpu)
expect_contains("${err}" "--offload-params: cpu without --offload-optimizer cpu")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --zero 1 --optimizer sgd --offload-optimizer cpu)
expect_contains("${err}" "--offload-optimizer: cpu with --optimizer sgd")
commscale_run(EXPECT 2 ERROR err ARGS search --cluster h200x1 --model tiny --global-batch 1 --optimizer adam9bit)
expect_contains("${err}" "--optimizer")

# predict checks the host's memory where the cluster gives it: 4 ranks of ZeRO-3 with everything offloaded
# hold 4 x 18 x 6738415616 / 4 bytes = 112.96 GiB of the node's 256 GiB (rtx3090-4x-nvlink-pairs, U).
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster rtx3090-4x-nvlink-pairs --model llama2-7b --dp 4 --zero 3
                                       --offload-optimizer cpu --offload-params cpu --recompute full)
expect_contains("${out}" "host memory fits: 4 ranks x 28.2 GiB")

# search: Llama-2-7B does not fit one A100 80GB with Adam in GPU memory; the search says which saving its
# plans use.
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-a100 --gpus 1 --model llama2-7b --global-batch 8
                                       --max-micro-batch 2 --json)
string(JSON saving GET "${out}" memory_saving 1)
expect_equal(${saving} adam8bit "search memory_saving on 1 A100")
commscale_run(EXPECT 1 OUTPUT out ARGS search --cluster hgx-a100 --gpus 1 --model llama2-7b --global-batch 8
                                       --max-micro-batch 2 --no-memory-saving)

# LoRA (workload/lora.hpp): Llama-2-7B, r 8 on q and v, two data-parallel replicas. The adapters are
# 32 x 2 x 8 x (4096 + 4096) = 4194304 parameters; the data-parallel all-reduce carries their gradients only,
# in fp32 as Megatron-LM (the default framework) reduces bf16 training's main gradients, 16777216 bytes;
# model FLOPs for 2 sequences are 2 x 1.3474171401e14 (flops.hpp: the base's weight
# gradients dropped, the adapters' GEMMs added).
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model llama2-7b --dp 2 --global-batch 2 --lora-rank 8 --json)
string(JSON trainable GET "${out}" memory_per_rank 0 trainable_parameters)
expect_equal(${trainable} 4194304 "LoRA trainable parameters (r 8 on q, v)")
string(JSON bytes GET "${out}" stages 0 traffic_per_step 0 bytes)
expect_equal(${bytes} 16777216 "LoRA data-parallel all-reduce bytes")
string(JSON group GET "${out}" stages 0 traffic_per_step 0 group)
expect_equal(${group} dp "LoRA's only collective group")
string(JSON flops GET "${out}" model_flops_per_step)
expect_contains("${flops}" "269483428020224")
string(JSON rank GET "${out}" plan lora_rank)
expect_equal(${rank} 8 "plan.lora_rank")
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model llama2-7b --lora-rank 8)
expect_contains("${out}" "optimizer adam; LoRA r 8 on qv, 16-bit base")
expect_contains("${out}" "(Megatron-LM formula for LoRA, the MFU basis)")

# QLoRA: the blocks' linear weights in NF4 (32 x 104399104 bytes: 0.5 + 1/64 + 4/16384 bytes a weight), the
# norms, embedding, output layer and final norm in bf16 (2 x 262410240), the adapters in bf16 (2 x 4194304).
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model llama2-7b --lora-rank 8 --lora-base-bits 4 --json)
string(JSON weights GET "${out}" memory_per_rank 0 weights_bytes)
expect_equal(${weights} 3873980416 "QLoRA weight bytes of Llama-2-7B")
string(JSON bits GET "${out}" plan lora_base_bits)
expect_equal(${bits} 4 "plan.lora_base_bits")

# predict, search and compare take LoRA: the plan line says so, search's plans and next command carry it.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster rtx4090-8x-pcie --world 1 --model llama2-7b --lora-rank 16
                                       --lora-base-bits 4 --lora-targets all --recompute full)
expect_contains("${out}" "LoRA r 16 on all, NF4 base")
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster rtx4090-8x-pcie --gpus 1 --model llama2-7b --global-batch 8
                                       --max-micro-batch 2 --lora-rank 16 --lora-base-bits 4)
expect_contains("${out}" "lora r16 nf4")
expect_contains("${out}" "--lora-rank 16 --lora-base-bits 4 --lora-targets qv")
commscale_run(EXPECT 0 OUTPUT out ARGS compare --clusters rtx4090-8x-pcie:1 --model llama2-7b --global-batch 8
                                       --max-micro-batch 2 --lora-rank 16 --lora-base-bits 4 --json)
expect_contains("${out}" "\"lora_rank\": 16")

# LoRA's bad values name their flag, exit 2.
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --lora-rank 0)
expect_contains("${err}" "--lora-rank: 0")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --lora-rank 8 --lora-base-bits 8)
expect_contains("${err}" "--lora-base-bits: 8")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --lora-rank 8 --lora-targets foo)
expect_contains("${err}" "--lora-targets")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --lora-base-bits 4)
expect_contains("${err}" "--lora-base-bits: given without --lora-rank")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --dp 2 --global-batch 2 --zero 3 --lora-rank 8)
expect_contains("${err}" "--lora-rank: 8 with --zero 3")
commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --tp 2 --lora-rank 8)
expect_contains("${err}" "--lora-rank: 8 with --tp 2")
commscale_run(EXPECT 2 ERROR err ARGS search --cluster h200x1 --model tiny --global-batch 1 --lora-rank -1)
expect_contains("${err}" "--lora-rank: -1")

# train runs offload (tests/cli/train_offload.cmake checks its ops); the plan's offload rules still hold there.
commscale_run(EXPECT 0 OUTPUT out ARGS train --model tiny --zero 2 --offload-optimizer cpu --steps 1 --warmup 0)
expect_contains("${out}" "step time")
commscale_run(EXPECT 2 ERROR err ARGS train --model tiny --zero 3 --offload-params cpu)
expect_contains("${err}" "--offload-params: cpu without --offload-optimizer cpu")

# train runs a QLoRA step program on the CPU backend (adapters' GEMMs, dequantize kernels as copies).
commscale_run(EXPECT 0 OUTPUT out ARGS train --model tiny --lora-rank 4 --lora-base-bits 4 --lora-targets all
                                       --steps 1 --warmup 0)
expect_contains("${out}" "step time")

# Where no memory-saving plan fits either, search reports the plans as asked (the closest of them) and says
# the savings were tried: GPT-3 175B on one H200 needs 2931.6 GiB of host memory with everything offloaded.
commscale_run(EXPECT 1 OUTPUT out ARGS search --cluster h200x1 --model gpt3-175b --global-batch 8)
expect_contains("${out}" "no plan of 1 GPU fits with 8-bit optimizer states or offload to host memory either")
expect_contains("${out}" "the plan that needs the least memory (dp 1 tp 1 pp 1 1f1b mb 1 zero 0 recompute full flash)")

# Optimizer offload's step time: the update runs on the host after the backward, the GPU's optimizer kernel
# gone. GPT-3 1.3B, dp 8 ZeRO 2 on 8 x RTX 4090: a 164,706,816-parameter shard per rank, 24.9 ms of PCIe
# copies and 90.1 ms of CPU Adam (1.83 G parameters/s a rank), against about 6 ms for Adam on the GPU.
commscale_run(EXPECT 0 OUTPUT gpu ARGS predict --cluster rtx4090-8x-pcie --model gpt3-1.3b --dp 8 --zero 2
                                       --global-batch 64 --micro-batch 4 --json)
commscale_run(EXPECT 0 OUTPUT host ARGS predict --cluster rtx4090-8x-pcie --model gpt3-1.3b --dp 8 --zero 2
                                        --global-batch 64 --micro-batch 4 --offload-optimizer cpu --json)
string(JSON gpu_s GET "${gpu}" summary step_time_s)
string(JSON host_s GET "${host}" summary step_time_s)
if(NOT host_s GREATER gpu_s)
  message(FATAL_ERROR "optimizer offload's step (${host_s} s) is not longer than Adam on the GPU's (${gpu_s} s)")
endif()
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster rtx4090-8x-pcie --model gpt3-1.3b --dp 8 --zero 2
                                       --global-batch 64 --micro-batch 4 --offload-optimizer cpu)
expect_contains("${out}" "offload: 26.5 GB/s each way over PCIe (26.5 GB/s for copies during the step), CPU Adam at "
                         "1.83 G parameters/s a rank (8.0 cores and 51.2 GB/s of host memory a rank)")
# A host with no cores gives an offloaded update nothing to run on: refused as the file's error, exit 2.
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster rtx4090-8x-pcie --model gpt3-1.3b --dp 8 --zero 2
                                      --global-batch 64 --offload-optimizer cpu --set host_cpu_cores=0)
expect_contains("${err}" "host_cpu_cores.value: is 0 (expected more than 0)")

# Parameter and activation offload's copies in the step: on one RTX 3090, GPT-3 1.3B with ZeRO-Infinity
# (ZeRO-3, the optimizer and the parameters offloaded) and the activations offloaded, the "offload" group
# carries the copies over PCIe at 26.5 GB/s, and the step is longer than with the optimizer offloaded alone.
set(one_3090 predict --cluster rtx3090-4x-nvlink-pairs --world 1 --model gpt3-1.3b --global-batch 8 --micro-batch 2)
commscale_run(EXPECT 0 OUTPUT optimizer_only ARGS ${one_3090} --zero 1 --offload-optimizer cpu --json)
commscale_run(EXPECT 0 OUTPUT everything ARGS ${one_3090} --zero 3 --offload-optimizer cpu --offload-params cpu
                                              --offload-activations --json)
string(JSON groups LENGTH "${optimizer_only}" groups)
expect_equal(${groups} 0 "groups of a one-GPU step without offload's copies")
string(JSON group GET "${everything}" groups 0 group)
expect_equal(${group} offload "the copies' group")
string(JSON copy_rate GET "${everything}" groups 0 bus_bw_GBps)
string(JSON busy GET "${everything}" groups 0 busy_s)
string(JSON alone_s GET "${optimizer_only}" summary step_time_s)
string(JSON all_s GET "${everything}" summary step_time_s)
if(NOT copy_rate GREATER 26.45 OR NOT copy_rate LESS 26.47 OR NOT busy GREATER 1.0 OR NOT all_s GREATER alone_s)
  message(FATAL_ERROR "offload's copies: ${copy_rate} GB/s, busy ${busy} s; step ${all_s} s against ${alone_s} s "
                      "with the optimizer offloaded alone")
endif()
