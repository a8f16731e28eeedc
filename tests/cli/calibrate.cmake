# `commscale calibrate`: bad flags are rejected with exit code 2 before anything runs, and a run
# without a GPU says it has nothing to measure (the measurements themselves: tests/gpu/).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --backend cpu)
expect_contains("${err}" "calibrate measures GPUs, and this run has none")
if(EXISTS "${WORK_DIR}/cal.json")
  message(FATAL_ERROR "calibrate without a GPU wrote a profile")
endif()

commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --measure gemm,flops)
expect_contains("${err}" "--measure: unknown measurement \"flops\"")
expect_contains("${err}" "clock")

# The clock curve (a GEMM beside the step's memory kernel) is a GPU's too.
commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --measure clock --backend cpu)
expect_contains("${err}" "calibrate measures GPUs")
if(EXISTS "${WORK_DIR}/cal.json")
  message(FATAL_ERROR "calibrate --measure clock without a GPU wrote a profile")
endif()

commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --gemm-types int8)
expect_contains("${err}" "--gemm-types: int8 GEMMs are not calibrated")

commscale_run(EXPECT 2 ERROR err ARGS calibrate -o missing.json --merge)
expect_contains("${err}" "--merge: missing.json does not exist")

commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --max-bytes 12Q)
expect_contains("${err}" "--max-bytes")

commscale_run(EXPECT 2 ERROR err ARGS calibrate)
expect_contains("${err}" "--output")

# Host costs and interference are measured on a GPU's launch path and SMs: no GPU, exit 2, no profile.
commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --measure host,interference --backend cpu)
expect_contains("${err}" "calibrate measures GPUs (host costs and interference are measured on the GPU's")
if(EXISTS "${WORK_DIR}/cal.json")
  message(FATAL_ERROR "calibrate --measure host,interference without a GPU wrote a profile")
endif()

commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --measure interference --interference-sms 4,0)
expect_contains("${err}" "--interference-sms")
commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --attention-head-dims 0)
expect_contains("${err}" "--attention-head-dims")
