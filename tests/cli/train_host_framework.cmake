# `train --host-framework NAME [--calibration FILE]` on the CPU backend: the framework's host costs come
# from the profile's `host` row (else the catalog), the run says which it emulated in its text and JSON,
# and bad names or files are refused with exit 2 before anything runs. (That a step then takes its ops'
# host costs: tests/mpi/host_pacing_test.cpp.)
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

set(model --model tiny --layers 1 --vocab 0 --backend cpu --steps 2 --warmup 1 -q)
file(WRITE "${WORK_DIR}/cal.json" [=[
{"schema_version": 1, "kind": "commscale-calibration",
 "machine": {"gpu": "h200-sxm", "source": "tests/cli/train_host_framework.cmake"},
 "host": [{"framework": "slow-framework", "source": "a test row: 2 ms per op",
           "issue_us": {"gemm": 2000, "kernel": 2000, "collective": 2000, "p2p": 2000},
           "step_us": 5000, "sync": "before_optimizer"}]}
]=])

commscale_run(EXPECT 0 OUTPUT out ARGS train ${model} --host-framework slow-framework --calibration cal.json
              -J run.json)
expect_contains("${out}" "# host: ops issued at slow-framework's host costs")
expect_contains("${out}" "sync before_optimizer; a test row: 2 ms per op")
file(READ "${WORK_DIR}/run.json" doc)
string(JSON framework GET "${doc}" config host_framework framework)
expect_equal("${framework}" "slow-framework" "config.host_framework.framework")
string(JSON step_us GET "${doc}" config host_framework step_us)
if(NOT step_us MATCHES "^5000(\\.0*)?$")
  message(FATAL_ERROR "config.host_framework.step_us: got '${step_us}', expected 5000")
endif()
# ~30 ops at 2 ms each (one layer, one microbatch, the optimizer): a step takes at least 50 ms.
string(JSON step_s GET "${doc}" summary step_time_s)
if(step_s LESS 0.05)
  message(FATAL_ERROR "a step at 2 ms per op took ${step_s} s")
endif()

# Without --host-framework the JSON says there was none.
commscale_run(EXPECT 0 ARGS train ${model} -J plain.json)
file(READ "${WORK_DIR}/plain.json" doc)
string(JSON kind TYPE "${doc}" config host_framework)
expect_equal("${kind}" "NULL" "config.host_framework without --host-framework")

# "none" is built in (device time alone).
commscale_run(EXPECT 0 OUTPUT out ARGS train ${model} --host-framework none)
expect_contains("${out}" "# host: ops issued at none's host costs")

commscale_run(EXPECT 2 ERROR err ARGS train ${model} --host-framework no-such-framework --calibration cal.json)
expect_contains("${err}" "--host-framework: unknown framework \"no-such-framework\"")
expect_contains("${err}" "slow-framework (cal.json)")
commscale_run(EXPECT 2 ERROR err ARGS train ${model} --calibration cal.json)
expect_contains("${err}" "--calibration: is given without --host-framework")
commscale_run(EXPECT 2 ERROR err ARGS train ${model} --host-framework slow-framework --calibration missing.json)
expect_contains("${err}" "missing.json")

# An attention call's figure (optional) must be a number: refused before anything runs, naming the key.
file(WRITE "${WORK_DIR}/attention.json" [=[
{"schema_version": 1, "kind": "commscale-calibration",
 "machine": {"gpu": "h200-sxm", "source": "tests/cli/train_host_framework.cmake"},
 "host": [{"framework": "slow-framework", "source": "a test row",
           "issue_us": {"gemm": 2000, "kernel": 2000, "collective": 2000, "p2p": 2000, "attention": "2 ms"}}]}
]=])
commscale_run(EXPECT 2 ERROR err ARGS train ${model} --host-framework slow-framework --calibration attention.json)
expect_contains("${err}" "attention.json: host[0].issue_us.attention: is a string (expected a number)")
