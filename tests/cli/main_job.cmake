# launch/main.sh's logic end to end in its tiny size on 2 CPU ranks, with this build's executable
# (COMMSCALE_BIN: no package installation, no build; what a user builds, main.sh's own Release
# build, is run by CI: .ci/run runs main.sh as the README gives it). Twice: as a user without a GPU
# runs it (no prediction, and main.sh says why), and with COMMSCALE_CLUSTER, where the report must
# draw the measured step beside its prediction. Each run's folder is checked by
# tests/check-main-job.sh, the check CI applies to the real run.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
get_filename_component(source_dir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

function(run_main_job out)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${MPI_ENV} COMMSCALE_BIN=${COMMSCALE} COMMSCALE_SIZE=tiny
                          COMMSCALE_RESULTS=${out} COMMSCALE_GPUS=0 ${ARGN} bash ${source_dir}/launch/main.sh
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "launch/main.sh exited with ${rc}\n--- stdout:\n${stdout}\n--- stderr:\n${stderr}")
  endif()
  file(WRITE "${out}.log" "${stdout}")
  execute_process(COMMAND bash ${source_dir}/tests/check-main-job.sh ${out} ${out}.log
                  RESULT_VARIABLE rc OUTPUT_VARIABLE check ERROR_VARIABLE check TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tests/check-main-job.sh failed (${rc}):\n${check}\n--- main.sh's stdout:\n${stdout}")
  endif()
  set(stdout "${stdout}" PARENT_SCOPE)
endfunction()

set(out "${WORK_DIR}/results/host-date")
file(REMOVE_RECURSE "${WORK_DIR}/results")
run_main_job(${out})
expect_contains("${stdout}" "commscale: results in ${out}")
expect_contains("${stdout}"
                "commscale: no prediction of the trained step: no GPU here: the CPU backend is no catalog cluster")
foreach(file bench.txt bench.json bench.csv train.txt train.json train.csv train-trace.json report.html)
  if(NOT EXISTS "${out}/${file}")
    message(FATAL_ERROR "launch/main.sh did not write ${file}\n${stdout}")
  endif()
endforeach()
if(EXISTS "${out}/predict.json")
  message(FATAL_ERROR "launch/main.sh predicted a step without a cluster")
endif()
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
expect_contains("${html}" "measured on train: tiny, dp 2 × tp 1 × pp 1")
expect_contains("${html}" "step timeline: train-trace")

# The checker itself: a folder that lacks a file launch/README.md lists must fail it.
file(REMOVE "${out}/train.csv")
execute_process(COMMAND bash ${source_dir}/tests/check-main-job.sh ${out} RESULT_VARIABLE rc ERROR_VARIABLE check)
if(rc EQUAL 0)
  message(FATAL_ERROR "tests/check-main-job.sh passed a folder without train.csv")
endif()
expect_contains("${check}" "train.txt train.json train.csv (found 2 of 3)")

# With a cluster: the trained step predicted for it, and drawn beside the measured one.
execute_process(COMMAND ${COMMSCALE} predict --help OUTPUT_VARIABLE predict_help ERROR_QUIET)
string(FIND "${predict_help}" "commscale predict" has_predict)
if(has_predict EQUAL -1)
  return()
endif()
set(out "${WORK_DIR}/results/with-cluster")
run_main_job(${out} COMMSCALE_CLUSTER=h200x2)
expect_contains("${stdout}" "commscale: predicting for COMMSCALE_CLUSTER=h200x2")
file(READ "${out}/report.html" html)
expect_contains("${html}" "training step: measured against predicted")
expect_contains("${html}" "predicted on h200x2: tiny, dp 2 × tp 1 × pp 1, micro-batch 1, global 4")
string(FIND "${html}" "no measured and predicted pair" apart)
if(NOT apart EQUAL -1)
  message(FATAL_ERROR "the measured and predicted steps of the same model and plan were drawn apart")
endif()
