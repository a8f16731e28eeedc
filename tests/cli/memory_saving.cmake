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
