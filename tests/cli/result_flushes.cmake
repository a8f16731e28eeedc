# Result files are flushed to disk once, at the end of a run, not after every row or step: bench
# rewrites -J and --csv and appends to the JSON Lines file after each row, train appends a line per
# step. A flush per row (fsync, fdatasync) perturbs the measurement and, on a slow disk, held rank 0
# inside fsync for seconds, past the 3 s a signal gives a rank to stop (reliability.interrupted_run
# failed so in CI). Counted under strace: the flushes of files in this test's folder are one per result
# file, whatever the number of rows. Skipped where strace is missing (launch/install-deps.sh test
# installs it).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

find_program(STRACE strace)
if(NOT STRACE)
  message("SKIPPED: strace not found (launch/install-deps.sh test installs it)")
  return()
endif()

# count_flushes(out_var ARGS...): runs commscale ARGS under strace (-y names the file of each fd) and
# counts the fsync and fdatasync calls on files in WORK_DIR.
function(count_flushes out_var)
  execute_process(COMMAND ${STRACE} -f -qq -y -e trace=fsync,fdatasync -o "${WORK_DIR}/strace.txt" ${COMMSCALE} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY "${WORK_DIR}"
                  TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "strace commscale ${ARGN}: exit ${rc}\n${out}\n${err}")
  endif()
  file(STRINGS "${WORK_DIR}/strace.txt" calls REGEX "(fsync|fdatasync)\\([0-9]+<")
  set(n 0)
  foreach(call IN LISTS calls)
    string(FIND "${call}" "<${WORK_DIR}/" at)
    if(NOT at EQUAL -1)
      math(EXPR n "${n} + 1")
      message(STATUS "  ${call}")
    endif()
  endforeach()
  message(STATUS "commscale ${ARGN}: ${n} flushes of files in ${WORK_DIR}")
  set(${out_var} ${n} PARENT_SCOPE)
endfunction()

# 14 rows (8 B to 64 KiB): -J, --csv and the JSON Lines file beside -J, one flush each at the end.
count_flushes(n bench all_reduce --backend cpu -b 8 -e 64K -f 2 -n 2 -w 0 -J bench.json --csv bench.csv)
expect_equal(${n} 3 "flushes of bench.json, bench.csv and bench.jsonl over 14 rows")
file(STRINGS "${WORK_DIR}/bench.jsonl" lines)
list(LENGTH lines line_count)
expect_equal(${line_count} 16 "lines of bench.jsonl (header, 14 rows, summary)")
file(READ "${WORK_DIR}/bench.json" doc)
string(JSON complete GET "${doc}" complete)
expect_equal("${complete}" ON "bench.json's complete")

# 6 timed steps: the JSON Lines file and -J, one flush each.
count_flushes(n train --backend cpu --model tiny --steps 6 --warmup 0 -J train.json)
expect_equal(${n} 2 "flushes of train.json and train.jsonl over 6 steps")
