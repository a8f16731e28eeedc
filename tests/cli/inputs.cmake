# The user's languages (issue 23): Hugging Face configs, Megatron-LM's flag names, plan files, what-if
# overrides (--set, compare --sweep) and costs on one basis. Bad inputs are in tests/bad_inputs/cases.txt.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
set(hf "${CMAKE_CURRENT_LIST_DIR}/../data/hf")

# A Hugging Face config by --model-file (told apart by its keys) and by --hf-config: the same model.
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model-file ${hf}/llama-2-7b.json --tp 2 --json)
string(JSON params GET "${out}" parameters)
expect_equal(${params} 6738415616 "Llama-2-7B's parameters from its config")
commscale_run(EXPECT 0 OUTPUT out ARGS plan --hf-config ${hf}/mistral-7b.json --seq 2048)
expect_contains("${out}" "32 layers, hidden 4096, 32 heads (8 KV), MLP 14336 swiglu, vocab 32000, seq 2048")
expect_contains("${out}" "7.242 B parameters")

# A Megatron-LM launch line pasted: its names give the same plan as commscale's.
commscale_run(EXPECT 0 OUTPUT megatron ARGS plan --num-layers 32 --hidden-size 4096 --num-attention-heads 32
              --ffn-hidden-size 11008 --seq-length 4096 --max-position-embeddings 4096 --vocab-size 32000 --swiglu
              --normalization RMSNorm --position-embedding-type rope --disable-bias-linear
              --untie-embeddings-and-output-weights --bf16 --tensor-model-parallel-size 2
              --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4 --micro-batch-size 1
              --global-batch-size 16 --sequence-parallel --use-distributed-optimizer --recompute-activations --json)
commscale_run(EXPECT 0 OUTPUT ours ARGS plan --model llama2-7b --tp 2 --pp 2 --schedule interleaved --chunks 4
              --micro-batch 1 --global-batch 16 --sp --zero 1 --recompute selective --json)
string(JSON a GET "${megatron}" plan)
string(JSON b GET "${ours}" plan)
expect_equal("${a}" "${b}" "the plan from Megatron-LM's flags")
string(JSON a GET "${megatron}" parameters)
string(JSON b GET "${ours}" parameters)
expect_equal("${a}" "${b}" "the model from Megatron-LM's flags")

# search --best-plan-file writes a plan file that predict reads back; a flag beside it overrides it.
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-a100 --model gpt3-1.3b --global-batch 64 --top 1
              --best-plan-file best.json --json)
string(JSON best_plan GET "${out}" top 0 plan)
file(READ "${WORK_DIR}/best.json" plan_file)
string(JSON kind GET "${plan_file}" kind)
expect_equal(${kind} commscale-plan "the plan file's kind")
string(JSON tp GET "${best_plan}" tp)
string(JSON file_tp GET "${plan_file}" plan tp)
expect_equal(${file_tp} ${tp} "the plan file's tp")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --plan-file best.json --json)
string(JSON predicted_plan GET "${out}" plan)
string(JSON predicted_tp GET "${predicted_plan}" tp)
expect_equal(${predicted_tp} ${tp} "predict --plan-file's tp")
string(JSON plan_file_path GET "${out}" context plan_file)
expect_equal("${plan_file_path}" "best.json" "context.plan_file")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --plan-file best.json --micro-batch 1 --global-batch 64)
expect_contains("${out}" "inputs   plan file best.json (overridden by the flags given: --micro-batch, --global-batch)")
commscale_run(EXPECT 0 OUTPUT out ARGS plan --plan-file best.json)
expect_contains("${out}" "plan file best.json")
# report: a plan file shares plan --json's kind but has no figures; it is named and skipped, not read as one.
commscale_run(EXPECT 2 ERROR err ARGS report best.json -o page.html)
expect_contains("${err}" "not rendered: best.json: a plan file (model, plan, cluster; no figures)")
expect_contains("${err}" "none of the files is a result report renders")

# --set: the same loader as the file; the change shows in the prediction and in the context block.
# (Slower NICs, not faster: above 200 Gb/s the A100's PCIe gen4 x16 to each NIC is the bottleneck.)
commscale_run(EXPECT 0 OUTPUT fast ARGS predict --cluster hgx-a100 --nodes 2 --model gpt3-1.3b --dp 16
              --global-batch 64 --json)
commscale_run(EXPECT 0 OUTPUT slow ARGS predict --cluster hgx-a100 --nodes 2 --model gpt3-1.3b --dp 16
              --global-batch 64 --set network.nic_rate_Gbps=50 --json)
string(JSON slow_s GET "${slow}" summary step_time_s)
string(JSON fast_s GET "${fast}" summary step_time_s)
if(NOT fast_s LESS slow_s)
  message(FATAL_ERROR "50 Gb/s NICs (${slow_s} s) are not slower than 200 Gb/s (${fast_s} s)")
endif()
string(JSON set GET "${slow}" context overrides 0)
expect_equal("${set}" "network.nic_rate_Gbps=50" "context.overrides")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster rtx4090-8x-pcie --model llama2-7b --tp 8 --global-batch 8
              --set gpu.memory_GiB=48 --set node.gpus=8)
expect_contains("${out}" "inputs   what-if --set gpu.memory_GiB=48 --set node.gpus=8")

# compare --sweep: one row per value; costs on one basis, named, with n/a where a cluster has no price.
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100:8
              --sweep network.nic_rate_Gbps=100,400)
expect_contains("${out}" "hgx-a100:8 [network.nic_rate_Gbps=100]")
expect_contains("${out}" "hgx-a100:8 [network.nic_rate_Gbps=400]")
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64
              --clusters hgx-a100,rtx4090-8x-pcie --json)
string(JSON basis GET "${out}" assumptions cost_basis)
expect_equal(${basis} cloud "the default cost basis (every catalog GPU has a rental rate)")
string(JSON rate GET "${out}" clusters 1 price usd_per_hour)
if(rate LESS 3.19 OR rate GREATER 3.21)
  message(FATAL_ERROR "8 RTX 4090s at the catalog's 0.40 USD per GPU-hour: ${rate} USD per hour, expected 3.2")
endif()
# Whole systems: every node from its parts by one rule, the A100 node too (8 x 9000 + 25000 + 8 x (700 + 500)).
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64
              --clusters hgx-a100,rtx4090-8x-pcie --cost-basis system)
expect_contains("${out}" "hgx-a100                     106600 USD per node from parts: 8 GPUs x 9000 USD")
expect_contains("${out}" "rtx4090-8x-pcie              26400 USD per node from parts: 8 GPUs x 1800 USD")
# Host power by one rule for every node: 2 sockets x 300 + 8 NICs x 25 + 10% of 8 x 400 W.
expect_contains("${out}" "4320 W: GPU TDP + host 1120 W per node by the one host rule")
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64
              --clusters hgx-a100,rtx4090-8x-pcie --cost-basis gpus)
expect_contains("${out}" "basis: GPUs only, bought at purchase price")
expect_contains("${out}" "rtx4090-8x-pcie              8 GPUs x 1800 USD (U: ")
# --price in its three forms: a GPU's, a node's, an entry's.
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64
              --clusters hgx-a100,hgx-a100:1,rtx4090-8x-pcie --price a100-sxm4-80gb=12000 --price hgx-a100:1=15000
              --price rtx4090-8x-pcie=30000)
expect_contains("${out}" "basis: whole systems bought")
expect_contains("${out}" "hgx-a100                     130600 USD per node from parts: 8 GPUs x 12000 USD (given: --price)")
expect_contains("${out}" "hgx-a100:1                   given: 15000 USD for 1 GPU and their host")
expect_contains("${out}" "rtx4090-8x-pcie              given: 30000 USD per node")
commscale_run(EXPECT 2 ERROR err ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100 --price foo=1)
expect_contains("${err}" [[--price: "foo" is not a cluster of --clusters or --scaling, nor their GPU]])
commscale_run(EXPECT 2 ERROR err ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100
              --price hgx-a100:4=1)
expect_contains("${err}" [[--price: "hgx-a100:4" is not an entry of --clusters]])
commscale_run(EXPECT 2 ERROR err ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100
              --price hgx-a100=1 --cost-basis cloud)
expect_contains("${err}" "--price: given with --cost-basis cloud")
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64
              --clusters hgx-a100,rtx4090-8x-pcie --usd-per-gpu-hour hgx-a100=1.5,rtx4090-8x-pcie=0.4 --json)
string(JSON basis GET "${out}" assumptions cost_basis)
expect_equal(${basis} cloud "the basis with --usd-per-gpu-hour")
string(JSON rate GET "${out}" clusters 0 price usd_per_hour)
expect_equal(${rate} 12.0 "8 A100s at 1.5 USD per GPU-hour")
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64
              --clusters rtx4090-8x-pcie,rtx4090-8x-roce100:16 --usd-per-gpu-hour rtx4090=0.5 --json)
string(JSON rate GET "${out}" clusters 1 price usd_per_hour)
expect_equal(${rate} 8.0 "16 RTX 4090s at 0.5 USD per GPU-hour given for the GPU")
# report: the clusters a cost chart leaves out are named; one priced point draws no "Pareto front".
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model llama2-7b --global-batch 64 --clusters hgx-a100,rtx3090-6x-pcie
              --json)
file(WRITE "${WORK_DIR}/compare-one-fits.json" "${out}")
commscale_run(EXPECT 0 ARGS report compare-one-fits.json -o one-fits.html)
file(READ "${WORK_DIR}/one-fits.html" html)
expect_contains("${html}" "Not on the cost chart: rtx3090-6x-pcie (no plan fits).")
expect_contains("${html}" "No cost chart: only hgx-a100 has a price and a plan.")
string(FIND "${html}" "Pareto" pareto)
expect_equal(${pareto} -1 "a Pareto front of one point")
