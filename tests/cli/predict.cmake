# `commscale predict`, `search`, `compare` and `diff-trace`: pure commands (no MPI, no GPU) except the
# CPU-backend train run whose timeline diff-trace compares with a predicted one. Exit codes: 0; 1 (the
# plan does not fit / no plan fits); 2 (bad input, naming the flag or file).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# predict: text; JSON with train's figure names plus memory per rank and the fit verdict; the timeline.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster h200x2 --model tiny --tp 2)
expect_contains("${out}" "cluster  h200x2: 1 node x 2 h200-sxm")
expect_contains("${out}" "tokens/s")
expect_contains("${out}" "memory per rank, GiB")

commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster h200x2 --model tiny --tp 2 --json -J predict.json
                                       --timeline predicted.json --trace trace.json)
file(READ "${WORK_DIR}/predict.json" json)
expect_equal("${json}" "${out}" "-J file and --json output")
string(JSON kind GET "${json}" kind)
expect_equal(${kind} commscale-prediction "kind")
foreach(figure step_time_s compute_s exposed_comm_s bubble_s mfu tokens_per_s)
  string(JSON value GET "${json}" summary ${figure})
  if(NOT value GREATER 0 AND NOT figure STREQUAL "bubble_s")
    message(FATAL_ERROR "summary.${figure} is ${value}")
  endif()
endforeach()
string(JSON fits GET "${json}" fit fits)
expect_equal(${fits} ON "fit.fits")
string(JSON stages LENGTH "${json}" memory_per_rank)
expect_equal(${stages} 1 "memory_per_rank entries")
string(JSON link GET "${json}" groups 0 link)
expect_equal(${link} nvlink "the tp group's link on h200x2")
file(READ "${WORK_DIR}/predicted.json" timeline)
string(JSON engine GET "${timeline}" engine)
expect_equal(${engine} predictor "timeline engine")
string(JSON world GET "${timeline}" world_size)
expect_equal(${world} 2 "timeline world_size")
# The predictor's timeline attributes each event's time (host, peers, latency, interference), one entry
# per event beside the five-element events.
string(JSON events LENGTH "${timeline}" events)
string(JSON attributed LENGTH "${timeline}" attribution events)
expect_equal(${attributed} ${events} "attribution entries per event")
string(JSON first_event LENGTH "${timeline}" events 0)
expect_equal(${first_event} 5 "elements of an event")
string(JSON field GET "${timeline}" attribution fields 2)
expect_equal(${field} latency_s "the third attribution field")

# The same plan over the emulated host-staged path is slower on the tp group's link.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster h200x2-nop2p --model tiny --tp 2 --json)
string(JSON link GET "${out}" groups 0 link)
expect_equal(${link} host_staged "the tp group's link on h200x2-nop2p")

# Without a calibration profile, overlap costs what topologies/interference.json's H200 rows say, scaled to the
# A100's SMs and HBM: a DP plan whose buckets are reduced during the backward (PyTorch DDP) pays for it.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-a100 --world 8 --model gpt3-1.3b --global-batch 64 --micro-batch 4
                                       --framework pytorch-ddp)
string(REGEX MATCH "overlap  compute \\+([0-9.]+) ms, communication \\+([0-9.]+) ms where they run together" line
       "${out}")
if(NOT line OR NOT (CMAKE_MATCH_1 GREATER 0 OR CMAKE_MATCH_2 GREATER 0))
  message(FATAL_ERROR "no interference cost on hgx-a100 without a profile:\n${out}")
endif()
expect_contains("${out}" "(interference.json (M ...; the whole source: --json)")

# A plan that does not fit: exit 1, the figures still predicted.
commscale_run(EXPECT 1 OUTPUT out ARGS predict --cluster rtx4090-8x-pcie --model llama2-13b --tp 8 --global-batch 8)
expect_contains("${out}" "does not fit")

# Bad input.
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster no-such-cluster --model tiny)
expect_contains("${err}" "no-such-cluster")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x1 --model tiny --tp 2)
expect_contains("${err}" "--world")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --model tiny --tp 3)
expect_contains("${err}" "--tp")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --model tiny --calibration missing-profile.json)
expect_contains("${err}" "missing-profile.json")
file(WRITE "${WORK_DIR}/bad-profile.json" [[{"schema_version": 1, "kind": "commscale-calibration", "machine": {"gpu": "h200-sxm", "source": "test"}, "gemm": [{"m": 1}]}]])
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --model tiny --calibration bad-profile.json)
expect_contains("${err}" "bad-profile.json: gemm[0]")

# search: ranked plans and why the others lose; JSON; nothing fits (exit 1); bad input.
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-a100 --model gpt3-1.3b --global-batch 64 --top 3)
expect_contains("${out}" "search   hgx-a100 on 8 GPUs")
expect_contains("${out}" "why the others lose")
# The suggested next command pastes as it is: the model flags as given, the plan's, no "...".
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-a100 --model gpt3-1.3b --layers 12 --seq 1024
                                       --global-batch 64 --top 3 --workspace-gib 1.5)
string(REGEX MATCH "\n  commscale predict [^\n]*" next "${out}")
if(NOT next)
  message(FATAL_ERROR "search suggests no commscale predict command:\n${out}")
endif()
string(STRIP "${next}" next)
expect_contains("${next}" "commscale predict --cluster hgx-a100 --model gpt3-1.3b --layers 12 --seq 1024 --workspace-gib 1.5 --dp ")
string(FIND "${next}" "..." dots)
expect_equal(${dots} -1 "a literal ... in the suggested command")
string(REPLACE "commscale predict" "${COMMSCALE} predict" pasted "${next}")
execute_process(COMMAND bash -c "${pasted}" RESULT_VARIABLE rc OUTPUT_VARIABLE predicted ERROR_VARIABLE err)
expect_equal(${rc} 0 "the suggested command, pasted (${pasted}): ${err}")
expect_contains("${predicted}" "hgx-a100")
commscale_run(EXPECT 0 OUTPUT out ARGS search --cluster hgx-a100 --model gpt3-1.3b --global-batch 64 --gpus 4,8
                                       --rank-by cost --price 200000 --json)
string(JSON kind GET "${out}" kind)
expect_equal(${kind} commscale-search "search kind")
string(JSON top LENGTH "${out}" top)
expect_equal(${top} 10 "search top plans (default --top)")
string(JSON usd GET "${out}" top 0 usd_per_million_tokens)
if(NOT usd GREATER 0)
  message(FATAL_ERROR "top[0].usd_per_million_tokens is ${usd}")
endif()
commscale_run(EXPECT 1 OUTPUT out ARGS search --cluster h200x1 --model gpt3-175b --global-batch 8)
expect_contains("${out}" "no plan fits")
expect_contains("${out}" "no plan fits; the plan that needs the least memory (dp 1 tp 1 pp 1 1f1b mb 1 zero 0 recompute")
string(FIND "${out}" " 0.0 GiB more" zero)
expect_equal(${zero} -1 "a shortfall of 0.0 GiB")
commscale_run(EXPECT 2 ERROR err ARGS search --cluster hgx-a100 --model gpt3-1.3b --global-batch 64 --rank-by speed)
expect_contains("${err}" [[--rank-by: unknown ranking "speed" (expected throughput or cost)]])
commscale_run(EXPECT 2 ERROR err ARGS search --cluster hgx-a100 --model gpt3-1.3b --global-batch 0)
expect_contains("${err}" "--global-batch")
commscale_run(EXPECT 2 ERROR err ARGS search --cluster hgx-a100 --model gpt3-1.3b --global-batch 64 --gpus 4,x)
expect_contains("${err}" "--gpus")
commscale_run(EXPECT 2 ERROR err ARGS search --cluster hgx-a100 --model gpt3-1.3b --global-batch 64 --order tp-pp)
expect_contains("${err}" "--order")

# compare: several clusters with their best plans, cost and energy; a scaling sweep; bad input.
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64
                                       --clusters hgx-a100,rtx4090-8x-pcie,hgx-a100:1 --scaling hgx-a100 --scaling-max 16 --json)
string(JSON entries LENGTH "${out}" clusters)
expect_equal(${entries} 3 "compare entries")
string(JSON usd GET "${out}" clusters 0 usd_per_million_tokens)
if(NOT usd GREATER 0)
  message(FATAL_ERROR "hgx-a100 usd_per_million_tokens is ${usd}")
endif()
# The default basis is cloud rental: every catalog GPU has an on-demand rate.
string(JSON usd GET "${out}" clusters 1 usd_per_million_tokens)
if(NOT usd GREATER 0)
  message(FATAL_ERROR "rtx4090-8x-pcie usd_per_million_tokens on the cloud basis is ${usd}")
endif()
string(JSON points LENGTH "${out}" scaling points)
expect_equal(${points} 5 "scaling points 1, 2, 4, 8, 16")
# The text names the sweep's baseline (issue 18: an efficiency over 100% without one read as a bug).
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100
                                       --scaling hgx-a100 --scaling-max 4)
expect_contains("${out}" "efficiency: tokens/s per GPU against the same at 1 GPU (the smallest size that fits)")
# LLaMA-2 7B (32 heads, 32 layers) has no dp x tp x pp of 6 GPUs with a factor 3 to spare.
commscale_run(EXPECT 0 OUTPUT out ARGS compare --model llama2-7b --global-batch 64 --clusters rtx3090-6x-pcie)
expect_contains("${out}" "no valid plan: no dp x tp x pp of 6 GPUs")
commscale_run(EXPECT 2 ERROR err ARGS compare --model gpt3-1.3b --global-batch 64 --clusters hgx-a100:0)
expect_contains("${err}" "--clusters")
commscale_run(EXPECT 2 ERROR err ARGS compare --model gpt3-1.3b --global-batch 64 --price hgx-a100=cheap)
expect_contains("${err}" "--price")
commscale_run(EXPECT 2 ERROR err ARGS compare --model gpt3-1.3b --global-batch 64 --years 0)
expect_contains("${err}" "--years")

# diff-trace: the executor's timeline (CPU backend, real MPI) against the predictor's, same program.
commscale_run(EXPECT 0 RANKS 2 OUTPUT out
              ARGS train --backend cpu --model tiny --tp 2 --steps 2 --warmup 1 --timeline measured.json)
commscale_run(EXPECT 0 OUTPUT out ARGS diff-trace measured.json predicted.json --model tiny --tp 2 --top 5)
expect_contains("${out}" "A: executor (2 steps)   B: predictor (1 steps)")
expect_contains("${out}" "per op kind")
# The predicted side's attribution beside its durations; the executor's timeline has none.
expect_contains("${out}" "attributed: latency                           -")
expect_contains("${out}" "B host   B peers B latency  B interf")
count_occurrences("${out}" "A host" a_columns)
expect_equal(${a_columns} 0 "attribution columns of the executor's timeline")
commscale_run(EXPECT 0 OUTPUT out ARGS diff-trace measured.json predicted.json --model tiny --tp 2 --top 5 --json)
string(JSON latency GET "${out}" attribution_per_rank_per_step b latency_s)
if(NOT latency GREATER 0)
  message(FATAL_ERROR "the predicted tp all-reduces' latency per rank per step is ${latency} s")
endif()
string(JSON parts TYPE "${out}" op_kinds 0 b_attribution)
expect_equal(${parts} OBJECT "op_kinds[0].b_attribution")
commscale_run(EXPECT 0 OUTPUT out ARGS diff-trace predicted.json predicted.json --model tiny --tp 2 --json)
string(JSON diff GET "${out}" mean 0 diff_s)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "a timeline against itself differs by ${diff} s")
endif()
commscale_run(EXPECT 2 ERROR err ARGS diff-trace measured.json predicted.json --model tiny --tp 2 --pp 2)
expect_contains("${err}" "world_size")
commscale_run(EXPECT 2 ERROR err ARGS diff-trace predict.json predicted.json --model tiny --tp 2)
expect_contains("${err}" "predict.json")
commscale_run(EXPECT 2 ERROR err ARGS diff-trace no-such-file.json predicted.json --model tiny --tp 2)
expect_contains("${err}" "no-such-file.json")

# Megatron synchronises the device after each batch of pipeline sends and receives: the host line says
# so for a 1F1B plan, and the interleaved schedule (whose batches the program does not pair) says it is
# not modelled there.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-a100 --world 8 --model gpt3-1.3b --pp 4 --global-batch 32
                                       --framework megatron-lm)
expect_contains("${out}" "; waits for the GPU after each pipeline send and receive (")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-a100 --world 8 --model gpt3-1.3b --pp 4 --global-batch 32
                                       --framework megatron-lm --schedule interleaved --chunks 2)
expect_contains("${out}" "(Megatron's batch_p2p_sync) is not modelled for the interleaved schedule")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-a100 --world 8 --model gpt3-1.3b --pp 4 --global-batch 32
                                       --framework pytorch-ddp)
string(FIND "${out}" "waits for the GPU after each pipeline" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "pytorch-ddp has no synchronisation after pipeline sends and receives:\n${out}")
endif()
