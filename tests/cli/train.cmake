# `commscale train` on the CPU backend under mpirun: text, JSON (the job summary's figure names),
# CSV, the Chrome trace and the timeline; and a plan that does not match the job.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 0 RANKS 4 OUTPUT out
              ARGS train --backend cpu --model tiny --tp 2 --pp 2 --steps 2 --warmup 1 --timing both
                   -J train.json --csv train.csv --trace trace.json --timeline timeline.json)
expect_contains("${out}" "train: 4 ranks on 1 host, backend cpu")
expect_contains("${out}" "step time")
expect_contains("${out}" "per-op timing      costs")
expect_contains("${out}" "communication inside the step")
# train reduces bf16 gradients in bf16 and says how plan's and predict's default (Megatron-LM, fp32) differs.
expect_contains("${out}" "gradients reduced in bf16 (plan and predict default to megatron-lm, which reduces them in fp32")

file(READ "${WORK_DIR}/train.json" json)
string(JSON version GET "${json}" schema_version)
expect_equal(${version} 1 "schema_version")
string(JSON kind GET "${json}" kind)
expect_equal(${kind} commscale-train "kind")
foreach(figure step_time_s compute_s exposed_comm_s bubble_s tflops_per_gpu tokens_per_s)
  string(JSON value GET "${json}" summary ${figure})
  if(NOT value GREATER_EQUAL 0)
    message(FATAL_ERROR "summary.${figure} is ${value}")
  endif()
endforeach()
string(JSON mfu TYPE "${json}" summary mfu)
expect_equal(${mfu} NULL "summary.mfu on the CPU backend")
string(JSON tp TYPE "${json}" summary groups tp)
expect_equal(${tp} OBJECT "summary.groups.tp")
# Every kind of communication call of the step, with its bandwidth: tp all-reduces, pp transfers.
string(JSON rates LENGTH "${json}" comm_rates)
if(rates LESS 3)
  message(FATAL_ERROR "comm_rates has ${rates} rows, expected tp, pp-fwd and pp-bwd at least")
endif()
string(JSON call GET "${json}" comm_rates 0 call)
string(JSON busbw GET "${json}" comm_rates 0 busbw_GBps)
if(NOT busbw GREATER 0)
  message(FATAL_ERROR "comm_rates[0] (${call}) has busbw ${busbw}")
endif()
string(JSON steps LENGTH "${json}" steps)
expect_equal(${steps} 2 "steps")
string(JSON ranks LENGTH "${json}" steps 0 ranks)
expect_equal(${ranks} 4 "steps[0].ranks")

file(STRINGS "${WORK_DIR}/train.csv" csv)
list(LENGTH csv lines)
expect_equal(${lines} 9 "CSV lines (header + 2 steps x 4 ranks)")

file(READ "${WORK_DIR}/trace.json" trace)
string(JSON first_phase GET "${trace}" traceEvents 0 ph)
expect_equal(${first_phase} M "the trace starts with process names")
string(JSON events LENGTH "${trace}" traceEvents)
if(events LESS 100)
  message(FATAL_ERROR "the trace has only ${events} events")
endif()

file(READ "${WORK_DIR}/timeline.json" timeline)
string(JSON engine GET "${timeline}" engine)
expect_equal(${engine} executor "timeline engine")

commscale_run(EXPECT 2 RANKS 2 ERROR err ARGS train --backend cpu --model tiny --tp 2 --pp 2)
expect_contains("${err}" "the plan has dp 1 x tp 2 x pp 2 = 4 ranks but the job has 2")
# With cp the product names it (it read dp 1 x tp 1 x pp 1 = 2 ranks). Here and not in the bad-input corpus: the
# check runs after MPI starts, whose plugins LeakSanitizer reports in the sanitizer stage's corpus run.
commscale_run(EXPECT 2 RANKS 1 ERROR err ARGS train --backend cpu --model tiny --cp 2 --flash-attn)
expect_contains("${err}" "--tp/--pp/--dp/--cp: the plan has dp 1 x tp 1 x pp 1 x cp 2 = 2 ranks but the job has 1")

commscale_run(EXPECT 2 ERROR err ARGS train --model tiny --timing sometimes)
expect_contains("${err}" [[--timing: "sometimes" (expected op, step or both)]])
