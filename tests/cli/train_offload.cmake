# `commscale train` runs offload for real (src/runtime/TRAIN.md, "Offload") on the CPU backend, alone and under
# mpirun: each option's host copies run on the h2d and d2h streams with the program's bytes, the host optimizer
# on the compute stream, and the breakdown charges the copies to "offload".
#
# The bytes, by hand, for the tiny model (hidden 128, 8 heads of 16, 4 KV heads, ffn 512, vocab 1024, seq 64,
# GPT-style: biases, LayerNorm, learned positions, dropout, tied embeddings) cut to 2 layers, bf16:
#   a layer's parameters: QKV 128 x 256 + 256 = 33,024, projection 128 x 128 + 128 = 16,512, fc1 128 x 512 + 512
#   = 66,048, fc2 512 x 128 + 128 = 65,664, two LayerNorms 512: 181,760; the embedding 1024 x 128 + 64 x 128 =
#   139,264; the head its final LayerNorm, 256 (the output layer is the embedding's). Each is a whole number of
#   dp x 8 elements, so a dp-rank's shard is its 1/dp: 2 bytes each, 363,520 / 278,528 / 512 bytes at dp 1.
#   The host optimizer updates all 2 x 181,760 + 139,264 + 256 = 503,040 parameters at dp 1 (1,006,080 bytes
#   each way), half of them, 251,520 (503,040 bytes), at dp 2.
#   A layer's kept activations (workload/memory.cpp, one sequence of T = 64 tokens, flash attention): two norm
#   inputs, the QKV and fc1 inputs, 4 x 2 T h = 65,536, two dropout masks 2 T h = 16,384, Q and the projection
#   input 2 x 2 T h = 32,768, K and V 2 x 2 x T 64 = 16,384, the GELU and fc2 inputs 2 x 2 x T 512 = 131,072:
#   262,144 bytes.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

set(model --backend cpu --model tiny --layers 2 --steps 1 --warmup 0)

# Reads a trace and fails unless its host copies and host optimizer are as expected, per rank: `params` the
# bytes of a layer's, the embedding's and the head's shard ("" where parameters are not offloaded), `activations`
# a layer's kept activations (0: not offloaded), `optimizer` the host optimizer's bytes each way (0: none).
function(expect_offload trace_file ranks layer_bytes embedding_bytes head_bytes activations optimizer)
  file(READ "${WORK_DIR}/${trace_file}" trace)
  string(JSON events GET "${trace}" traceEvents)
  string(JSON count LENGTH "${events}")
  math(EXPR last "${count} - 1")
  set(copies_in 0)
  set(copies_out 0)
  set(updates 0)
  foreach(i RANGE ${last})
    string(JSON event GET "${events}" ${i})
    string(JSON phase GET "${event}" ph)
    if(NOT phase STREQUAL "X")
      continue()
    endif()
    string(JSON stream GET "${event}" cat)
    string(JSON name GET "${event}" name)
    if(stream STREQUAL "compute")
      string(JSON kernel ERROR_VARIABLE none GET "${event}" args kernel)
      if(kernel STREQUAL "host_optimizer")
        math(EXPR updates "${updates} + 1")
        string(JSON read GET "${event}" args bytes_read)
        string(JSON written GET "${event}" args bytes_written)
        expect_equal("${read}/${written}" "${optimizer}/${optimizer}" "${name}: host optimizer bytes read/written")
      endif()
      continue()
    endif()
    if(NOT stream MATCHES "^(h2d|d2h)$")
      continue()
    endif()
    string(JSON copy GET "${event}" args copy)
    string(JSON bytes GET "${event}" args bytes)
    if(stream STREQUAL "h2d")
      expect_equal(${copy} to_device "${name}: the copy on h2d")
      math(EXPR copies_in "${copies_in} + 1")
    else()
      expect_equal(${copy} to_host "${name}: the copy on d2h")
      math(EXPR copies_out "${copies_out} + 1")
    endif()
    if(name MATCHES "\\.L[0-9]+\\..*param_to_device$")
      expect_equal(${bytes} ${layer_bytes} "${name}: bytes")
    elseif(name MATCHES "\\.embedding\\.param_to_device$")
      expect_equal(${bytes} ${embedding_bytes} "${name}: bytes")
    elseif(name MATCHES "\\.head\\.param_to_device$")
      expect_equal(${bytes} ${head_bytes} "${name}: bytes")
    elseif(name MATCHES "\\.L[0-9]+\\..*activations_to_(host|device)$")
      expect_equal(${bytes} ${activations} "${name}: bytes")
    else()
      message(FATAL_ERROR "an unexpected host copy: ${name}")
    endif()
  endforeach()
  # Per rank and step, one microbatch of 2 layers: each layer's activations out after its forward and back
  # before its backward; each unit's (embedding, 2 layers, head) parameter shard in before its forward and again
  # before its backward.
  set(expected_out 0)
  set(expected_in 0)
  if(NOT activations EQUAL 0)
    set(expected_out 2)
    set(expected_in 2)
  endif()
  if(NOT layer_bytes STREQUAL "")
    math(EXPR expected_in "${expected_in} + 8")
  endif()
  math(EXPR expected_out "${expected_out} * ${ranks}")
  math(EXPR expected_in "${expected_in} * ${ranks}")
  expect_equal(${copies_out} ${expected_out} "${trace_file}: copies to the host (d2h)")
  expect_equal(${copies_in} ${expected_in} "${trace_file}: copies to the device (h2d)")
  set(expected_updates 0)
  if(NOT optimizer EQUAL 0)
    set(expected_updates ${ranks})
  endif()
  expect_equal(${updates} ${expected_updates} "${trace_file}: host optimizer ops")
endfunction()

# The breakdown charges the copies to "offload" (a group of the JSON summary) where there are any.
function(expect_offload_group json_file)
  file(READ "${WORK_DIR}/${json_file}" json)
  string(JSON busy GET "${json}" summary groups offload busy_s)
  if(NOT busy GREATER 0)
    message(FATAL_ERROR "${json_file}: summary.groups.offload.busy_s is ${busy}")
  endif()
endfunction()

# ZeRO-Offload alone: the update on the host, no copies on h2d or d2h.
commscale_run(EXPECT 0 OUTPUT out ARGS train ${model} --zero 1 --offload-optimizer cpu --trace optimizer.json)
expect_contains("${out}" "step time")
expect_offload(optimizer.json 1 "" "" "" 0 1006080)

# Activations alone.
commscale_run(EXPECT 0 OUTPUT out ARGS train ${model} --offload-activations --trace activations.json
                                       -J activations-summary.json)
expect_offload(activations.json 1 "" "" "" 262144 0)
expect_offload_group(activations-summary.json)

# Parameters (ZeRO-Infinity: with ZeRO-3 and the optimizer offloaded).
commscale_run(EXPECT 0 OUTPUT out ARGS train ${model} --zero 3 --offload-optimizer cpu --offload-params cpu
                                       --trace params.json -J params-summary.json)
expect_offload(params.json 1 363520 278528 512 0 1006080)
expect_offload_group(params-summary.json)

# All three, on one rank and on two under mpirun (dp 2: each rank's shards are half).
set(all --zero 3 --offload-optimizer cpu --offload-params cpu --offload-activations)
commscale_run(EXPECT 0 OUTPUT out ARGS train ${model} ${all} --trace all.json -J all-summary.json)
expect_contains("${out}" "#      optimizer adam; offload: optimizer, parameters, activations to the host")
expect_offload(all.json 1 363520 278528 512 262144 1006080)
expect_offload_group(all-summary.json)
file(READ "${WORK_DIR}/all-summary.json" json)
string(JSON params GET "${json}" plan offload_params)
expect_equal(${params} cpu "plan.offload_params in train's JSON")
commscale_run(EXPECT 0 RANKS 2 OUTPUT out ARGS train ${model} ${all} --dp 2 --global-batch 2 --trace all2.json
                                                 -J all2-summary.json)
expect_contains("${out}" "train: 2 ranks on 1 host, backend cpu")
expect_offload(all2.json 2 181760 139264 256 262144 503040)
expect_offload_group(all2-summary.json)
