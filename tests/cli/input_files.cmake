# Input files (issue 19, items 3, 13 and 14): a pipe is read once, as a regular file is (a FIFO,
# `hw show <(cat file)`, /dev/stdin fed by a pipe); more than 256 MiB through a pipe is refused with
# exit 2; names from files and file names in messages reach the terminal with their control
# characters escaped.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
set(source_dir "${CMAKE_CURRENT_LIST_DIR}/../..")
set(cluster_file "${source_dir}/topologies/clusters/h200x2.json")

# Runs `writer` (a shell command) and commscale ARGS at once; the writer's output is commscale's stdin.
function(run_fed writer expect out_var err_var)
  execute_process(COMMAND sh -c "${writer}" COMMAND ${COMMSCALE} ${ARGN} RESULTS_VARIABLE codes
                  OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 120)
  list(GET codes 1 rc)
  if(NOT rc STREQUAL "${expect}")
    message(FATAL_ERROR "${writer} | commscale ${ARGN}: exit ${rc} (${codes}), expected ${expect}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

# hw show <(cat cluster.json): a pipe that can be read once; it used to be read twice (kind, then file).
run_fed("cat '${cluster_file}'" 0 out err hw show /dev/stdin)
expect_contains("${out}" "h200x2")
expect_contains("${out}" "nvlink")

# A named FIFO, its writer started beside the reader.
execute_process(COMMAND mkfifo "${WORK_DIR}/model.fifo" RESULT_VARIABLE rc)
expect_equal("${rc}" "0" "mkfifo")
file(WRITE "${WORK_DIR}/model.json" "{\"name\": \"piped\", \"layers\": 2, \"hidden\": 64, \"heads\": 4, \"seq\": 16, \"vocab\": 100}")
run_fed("cat model.json > model.fifo" 0 out err plan --model-file model.fifo)
expect_contains("${out}" "piped")
run_fed("cat '${cluster_file}' > model.fifo" 0 out err predict --model tiny --cluster ${WORK_DIR}/model.fifo)
expect_contains("${out}" "h200x2")

# Not JSON through a pipe: the parser's message, once.
run_fed("printf '{\"layers\": [1,' " 2 out err plan --model-file /dev/stdin)
expect_contains("${err}" "/dev/stdin: is not valid JSON")

# More than the cap through a pipe: refused once 256 MiB have been read, not read to the end of memory.
run_fed("head -c 300000000 /dev/zero" 2 out err hw show /dev/stdin)
expect_contains("${err}" "commscale: /dev/stdin: holds more than 256 MiB (expected an input file of at most 256 MiB)")

# Control characters in a model's name and in a file name are escaped where they are printed.
string(ASCII 27 esc)
file(WRITE "${WORK_DIR}/evil-model.json"
     "{\"name\": \"evil\\u001b[2J\\nname\\u009b\", \"layers\": 2, \"hidden\": 64, \"heads\": 4, \"seq\": 16, \"vocab\": 100}")
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model-file ${WORK_DIR}/evil-model.json)
expect_contains("${out}" "evil\\x1b[2J\\nname\\u009b")
string(FIND "${out}" "${esc}" raw)
expect_equal("${raw}" "-1" "a raw ESC in plan's output")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --model-file ${WORK_DIR}/evil-model.json --cluster h200x2)
expect_contains("${out}" "evil\\x1b[2J\\nname\\u009b")
string(FIND "${out}" "${esc}" raw)
expect_equal("${raw}" "-1" "a raw ESC in predict's output")

file(READ "${cluster_file}" cluster_text)
string(REPLACE "\"name\": \"h200x2\"" "\"name\": \"h200\\u001b[31mx2\\n\"" evil_cluster "${cluster_text}")
file(WRITE "${WORK_DIR}/evil-cluster.json" "${evil_cluster}")
commscale_run(EXPECT 0 OUTPUT out ARGS hw show ${WORK_DIR}/evil-cluster.json)
expect_contains("${out}" "h200\\x1b[31mx2\\n")
string(FIND "${out}" "${esc}" raw)
expect_equal("${raw}" "-1" "a raw ESC in hw show's output")

commscale_run(EXPECT 2 ERROR err ARGS plan --model-file "${WORK_DIR}/no${esc}]0;title.json")
expect_contains("${err}" "no\\x1b]0;title")
string(FIND "${err}" "${esc}" raw)
expect_equal("${raw}" "-1" "a raw ESC in the message")
commscale_run(EXPECT 2 ERROR err ARGS hw show "${WORK_DIR}/no${esc}[2Jsuch.json")
expect_contains("${err}" "no\\x1b[2Jsuch.json: cannot be read")
commscale_run(EXPECT 2 ERROR err ARGS bench -n "1${esc}[2J")  # quoted by CLI11's own message
string(FIND "${err}" "${esc}" raw)
expect_equal("${raw}" "-1" "a raw ESC in CLI11's message")

# A long value on the command line (128 KiB is the most Linux passes in one argument) is quoted cut
# to 1 KiB (src/runtime/RELIABILITY.md, "Input files"), not whole.
string(REPEAT "m" 100000 long_name)
commscale_run(EXPECT 2 ERROR err ARGS plan --model ${long_name})
expect_contains("${err}" [[--model: unknown model "mmmm]])
string(LENGTH "${err}" length)
if(length GREATER 1600)
  message(FATAL_ERROR "a 100,000-byte --model value made a message of ${length} bytes (expected at most about 1.2 KB)")
endif()
