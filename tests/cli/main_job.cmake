# launch/main.sh end to end in its tiny size with this build's executable (no install, no build):
# bench and train on 2 CPU ranks, compare where the executable has it, and the report, in a folder
# of this test's own.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
get_filename_component(source_dir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

set(out "${WORK_DIR}/results/host-date")
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${MPI_ENV} COMMSCALE_BIN=${COMMSCALE} COMMSCALE_SIZE=tiny
                        COMMSCALE_RESULTS=${out} COMMSCALE_GPUS=0 bash ${source_dir}/launch/main.sh
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "launch/main.sh exited with ${rc}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}")
endif()
expect_contains("${stdout}" "commscale: results in ${out}")
foreach(file bench.txt bench.json bench.csv train.txt train.json train.csv train-trace.json report.html)
  if(NOT EXISTS "${out}/${file}")
    message(FATAL_ERROR "launch/main.sh did not write ${file}\n${stdout}")
  endif()
endforeach()
execute_process(COMMAND ${COMMSCALE} compare --help OUTPUT_VARIABLE compare_help ERROR_QUIET)
string(FIND "${compare_help}" "commscale compare" has_compare)
if(NOT has_compare EQUAL -1)
  if(NOT EXISTS "${out}/compare.json")
    message(FATAL_ERROR "this commscale has compare but launch/main.sh did not write compare.json")
  endif()
else()
  expect_contains("${stdout}" "no compare command: skipping")
endif()
file(READ "${out}/report.html" html)
expect_contains("${html}" "bench: all_reduce")
expect_contains("${html}" "measured: train")
expect_contains("${html}" "step timeline: train-trace")
