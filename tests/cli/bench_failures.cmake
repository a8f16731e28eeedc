# Checks that fail a run: a seeded wrong element (caught and reported, exit code 1) and a bus
# bandwidth below --min-busbw (exit code 1). The backend is chosen automatically and says what ran.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 1 RANKS 3 OUTPUT out ARGS bench all_reduce all_gather -b 1K -e 4K -f 4 -n 2 --backend cpu
              --inject-corruption 2 -J corrupt.json)
string(REGEX MATCH "# Out of bounds values : ([0-9]+) FAILED" found "${out}")
if(NOT found OR CMAKE_MATCH_1 EQUAL 0)
  message(FATAL_ERROR "a seeded corruption was not reported:\n${out}")
endif()
file(READ "${WORK_DIR}/corrupt.json" json)
string(JSON passed GET "${json}" summary passed)
expect_equal(${passed} OFF "summary.passed")
string(JSON wrong GET "${json}" results 0 out_of_place wrong)
if(wrong EQUAL 0)
  message(FATAL_ERROR "row 0 did not count the corrupted element")
endif()

commscale_run(EXPECT 1 RANKS 2 OUTPUT out ARGS bench -b 1K -e 1K -n 2 --backend cpu --min-busbw 1000000)
expect_contains("${out}" "# Out of bounds values : 0 OK")
string(REGEX MATCH "# Avg bus bandwidth    : [0-9.e+-]+ FAILED" found "${out}")
if(NOT found)
  message(FATAL_ERROR "--min-busbw did not fail the run:\n${out}")
endif()

# --backend auto: GPUs when visible, else the CPU backend, and the output says which and why.
commscale_run(EXPECT 0 RANKS 2 OUTPUT out ARGS bench -b 1K -e 1K -n 2)
string(FIND "${out}" "backend gpu (NCCL" gpu)
string(FIND "${out}" "running the CPU backend (MPI collectives on host memory)" cpu)
if(gpu EQUAL -1 AND cpu EQUAL -1)
  message(FATAL_ERROR "the output does not say which backend ran and why:\n${out}")
endif()
