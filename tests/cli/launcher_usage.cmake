# Usage errors are found before MPI starts, by every process that parses a command line; each must be
# printed once, by rank 0 or, where no rank 0 parses it, by the process that finds it: a single process
# with a launcher's rank variable left in its environment (no job size beside it, a size of 1, a rank
# outside the job), and the first rank of each command line of an MPMD job (mpirun A : B).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# run_with_env(EXPECT rc ERROR err_var ENV var=value... ARGS arg...): commscale alone, with ENV set.
function(run_with_env)
  cmake_parse_arguments(R "" "EXPECT;ERROR" "ENV;ARGS" ${ARGN})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${R_ENV} ${COMMSCALE} ${R_ARGS} RESULT_VARIABLE rc
                  ERROR_VARIABLE err WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 60)
  if(NOT "${rc}" STREQUAL "${R_EXPECT}")
    message(FATAL_ERROR "${R_ENV} commscale ${R_ARGS} exited with ${rc}, expected ${R_EXPECT}\n${err}")
  endif()
  set(${R_ERROR} "${err}" PARENT_SCOPE)
endfunction()

set(message [["12X" is not a size]])
foreach(stale OMPI_COMM_WORLD_RANK=1 PMIX_RANK=1 PMI_RANK=1 SLURM_PROCID=1 "OMPI_COMM_WORLD_RANK=1;OMPI_COMM_WORLD_SIZE=1"
        "OMPI_COMM_WORLD_RANK=5;OMPI_COMM_WORLD_SIZE=4" "SLURM_PROCID=1;SLURM_NTASKS=1" OMPI_COMM_WORLD_RANK=x)
  run_with_env(EXPECT 2 ERROR err ENV ${stale} ARGS bench -b 12X)
  expect_contains("${err}" "${message}")
  run_with_env(EXPECT 0 ERROR err ENV ${stale} ARGS bench --help)
endforeach()
# A rank of a job of several processes whose rank 0 parses the same command line stays quiet.
run_with_env(EXPECT 2 ERROR err ENV OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 ARGS bench -b 12X)
expect_equal("${err}" "" "stderr of rank 1 of 4")
run_with_env(EXPECT 2 ERROR err ENV SLURM_PROCID=2 SLURM_STEP_NUM_TASKS=4 ARGS bench -b 12X)
expect_equal("${err}" "" "stderr of task 2 of 4")

# MPMD: rank 0 runs another command line; the error of the second is printed once, by its first rank.
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${MPI_ENV} ${MPIRUN} -np 1 ${COMMSCALE} --version
                        : -np 2 ${COMMSCALE} bench -b 12X
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 120)
if(rc EQUAL 0)
  message(FATAL_ERROR "mpirun -np 1 commscale --version : -np 2 commscale bench -b 12X exited with 0\n${err}")
endif()
count_occurrences("${err}" "${message}" n)
expect_equal(${n} 1 "copies of the second command's message from its 2 ranks")
# Both command lines wrong: each message once.
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${MPI_ENV} ${MPIRUN} -np 2 ${COMMSCALE} bench -b 12X
                        : -np 2 ${COMMSCALE} bench -e 13Y
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 120)
count_occurrences("${err}" "${message}" n)
expect_equal(${n} 1 "copies of the first command's message")
count_occurrences("${err}" [["13Y" is not a size]] n)
expect_equal(${n} 1 "copies of the second command's message")
# One command line under mpirun: still one message from 3 ranks.
commscale_run(EXPECT 2 RANKS 3 ERROR err ARGS bench -b 12X)
count_occurrences("${err}" "${message}" n)
expect_equal(${n} 1 "copies of the message from 3 ranks")
