# Issue 19, numbers and sizes: what the bad-input corpus cannot say (tests/bad_inputs/cases.txt holds
# the rest). Testing flags that name a rank outside the job would do nothing, and the run would pass
# as if it had been tested: once MPI has started and the world size is known, the job refuses them
# with exit code 2 and one message naming the flag and the value (real mpirun, 2 ranks). And an empty
# --devices '' (which a corpus line cannot pass) is refused, not taken as "all devices".
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

foreach(command topo p2p)
  execute_process(COMMAND ${COMMSCALE} ${command} --devices "" RESULT_VARIABLE rc ERROR_VARIABLE err
                  WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 60)
  expect_equal("${rc}" 2 "${command} --devices ''")
  expect_contains("${err}" [[commscale: --devices: the value is empty (expected a value, or the flag left out)]])
endforeach()

set(bench bench all_reduce -b 1K -e 1K -n 2 -w 1 --backend cpu)

commscale_run(EXPECT 2 RANKS 2 ERROR err ARGS ${bench} --inject-corruption 7)
expect_contains("${err}" "--inject-corruption: 7 names rank 7, and the job has 2 rank(s) (expected a rank below 2")
count_occurrences("${err}" "--inject-corruption: " reports)
expect_equal(${reports} 1 "messages naming --inject-corruption")

commscale_run(EXPECT 2 RANKS 2 ERROR err ARGS ${bench} --debug-skip-collective 9:0)
expect_contains("${err}" "--debug-skip-collective: 9:0 names rank 9, and the job has 2 rank(s)")

commscale_run(EXPECT 2 RANKS 2 ERROR err ARGS train --backend cpu --model tiny --tp 2 --steps 1 --warmup 0
              --debug-skip-collective 9:0)
expect_contains("${err}" "--debug-skip-collective: 9:0 names rank 9, and the job has 2 rank(s)")

# The last rank of the job is a rank: the flags still work there.
commscale_run(EXPECT 1 RANKS 2 OUTPUT out ARGS ${bench} --inject-corruption 1)
expect_contains("${out}" "FAILED")
