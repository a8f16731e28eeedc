# Helpers for the end-to-end tests in tests/cli/: run the commscale executable (alone or under real
# mpirun) and check its exit code, messages and result files. Included by each test script, which
# gets COMMSCALE, MPIRUN, MPI_ENV and WORK_DIR from ctest (tests/CMakeLists.txt).

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# commscale_run(EXPECT rc [RANKS n] OUTPUT out_var ERROR err_var ARGS arg...)
# RANKS 0 (the default) runs the executable directly, without MPI.
function(commscale_run)
  cmake_parse_arguments(R "" "RANKS;EXPECT;OUTPUT;ERROR" "ARGS" ${ARGN})
  if(R_RANKS AND R_RANKS GREATER 0)
    set(command ${CMAKE_COMMAND} -E env ${MPI_ENV} ${MPIRUN} -np ${R_RANKS} ${COMMSCALE} ${R_ARGS})
  else()
    set(command ${COMMSCALE} ${R_ARGS})
  endif()
  execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 300)
  string(REPLACE ";" " " shown "${R_ARGS}")
  if(NOT "${rc}" STREQUAL "${R_EXPECT}")
    message(FATAL_ERROR "commscale ${shown} (ranks: ${R_RANKS}) exited with ${rc}, expected ${R_EXPECT}\n"
                        "--- stdout:\n${out}\n--- stderr:\n${err}")
  endif()
  if(R_OUTPUT)
    set(${R_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
  if(R_ERROR)
    set(${R_ERROR} "${err}" PARENT_SCOPE)
  endif()
endfunction()

function(expect_contains text needle)
  string(FIND "${text}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected to find\n  ${needle}\nin\n${text}")
  endif()
endfunction()

# Counts the occurrences of `needle` in `text`.
function(count_occurrences text needle out_var)
  string(LENGTH "${needle}" needle_length)
  set(count 0)
  string(FIND "${text}" "${needle}" at)
  while(NOT at EQUAL -1)
    math(EXPR count "${count} + 1")
    math(EXPR next "${at} + ${needle_length}")
    string(SUBSTRING "${text}" ${next} -1 text)
    string(FIND "${text}" "${needle}" at)
  endwhile()
  set(${out_var} ${count} PARENT_SCOPE)
endfunction()

function(expect_equal actual expected what)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}: got '${actual}', expected '${expected}'")
  endif()
endfunction()

# A group's row of a plan's traffic per step (`plan --json`, first stage): its collectives per rank and
# their bytes.
function(group_traffic json group count_var bytes_var)
  string(JSON rows LENGTH "${json}" stages 0 traffic_per_step)
  math(EXPR last "${rows} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${json}" stages 0 traffic_per_step ${i} group)
    if(name STREQUAL "${group}")
      string(JSON count GET "${json}" stages 0 traffic_per_step ${i} count)
      string(JSON bytes GET "${json}" stages 0 traffic_per_step ${i} bytes)
    endif()
  endforeach()
  set(${count_var} ${count} PARENT_SCOPE)
  set(${bytes_var} ${bytes} PARENT_SCOPE)
endfunction()
