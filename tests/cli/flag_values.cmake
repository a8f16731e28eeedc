# Issue 36, cases 8, 11 and 13: values the flags used to take in silence. An empty value (an unset shell
# variable: `-J $OUT`), which a line of the bad-input corpus cannot pass, is refused with exit code 2 and
# one message naming the flag, output or not; it was read as the flag left out (an output that wrote
# nothing, exit 0). A whole number with leading zeros is decimal (it was octal: --global-batch 010 ran 8).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# refused_empty(FLAG EXPECTED ARGS...): `commscale ARGS FLAG ''` exits 2, with one message that contains
# EXPECTED, and writes nothing in WORK_DIR.
function(refused_empty flag expected)
  execute_process(COMMAND ${COMMSCALE} ${ARGN} ${flag} "" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 60)
  string(REPLACE ";" " " shown "${ARGN}")
  expect_equal("${rc}" 2 "${shown} ${flag} '': exit code (stderr: ${err})")
  expect_contains("${err}" "commscale: ${expected}")
  count_occurrences("${err}" "commscale: " reports)
  expect_equal(${reports} 1 "messages of ${shown} ${flag} ''")
  file(GLOB made RELATIVE "${WORK_DIR}" "${WORK_DIR}/*")
  expect_equal("${made}" "" "files made by ${shown} ${flag} ''")
endfunction()

set(predict predict --cluster h200x2 --model tiny)
set(train train --backend cpu --model tiny --steps 1 --warmup 0)
set(bench bench --backend cpu -b 8 -e 8 -n 1 -w 0)
set(search search --model tiny --cluster h200x2 --global-batch 8)
set(output_empty "the file name is empty (expected a path to write)")

# Outputs.
refused_empty(-J "-J/--output_file: ${output_empty}" ${predict})
refused_empty(--trace "--trace: ${output_empty}" ${predict})
refused_empty(--timeline "--timeline: ${output_empty}" ${predict})
refused_empty(-J "-J/--output_file: ${output_empty}" ${train})
refused_empty(--csv "--csv: ${output_empty}" ${train})
refused_empty(--trace "--trace: ${output_empty}" ${train})
refused_empty(--jsonl "--jsonl: ${output_empty}" ${train})
refused_empty(--csv "--csv: ${output_empty}" ${bench})
refused_empty(--dump-program "--dump-program: ${output_empty}" plan --model tiny)
refused_empty(-o "-o/--output: ${output_empty}" topo)
refused_empty(-J "-J/--json: ${output_empty}" topo)
refused_empty(--best-plan-file "--best-plan-file: ${output_empty}" ${search})
refused_empty(-J "-J/--json: ${output_empty}" doctor --backend cpu)
refused_empty(--csv "--csv: ${output_empty}" p2p)
refused_empty(-J "-J/--output_file: ${output_empty}" compare --model tiny --global-batch 8)
refused_empty(-o "-o/--output: ${output_empty}" calibrate)
refused_empty(-o "-o/--output: ${output_empty}" report "${CMAKE_CURRENT_LIST_DIR}/../data/report")

# Other values: each was taken as the flag left out.
set(value_empty "the value is empty (expected a value, or the flag left out)")
refused_empty(--gpus "--gpus: ${value_empty}" ${search})
refused_empty(--host-framework "--host-framework: ${value_empty}" ${predict})
refused_empty(--gpu "--gpu: ${value_empty}" ${train})
refused_empty(--skip "--skip: ${value_empty}" doctor --backend cpu)
refused_empty(--cluster "--cluster: ${value_empty}" predict --model tiny)
refused_empty(--model "--model: ${value_empty}" plan)
refused_empty(--tp "--tp: ${value_empty}" plan --model tiny)
refused_empty(--devices "--devices: ${value_empty}" ${bench})

# Whole numbers are decimal: 010 is ten, not octal eight.
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model tiny --global-batch 010 --micro-batch 02 --json)
string(JSON global GET "${out}" plan global_batch)
expect_equal("${global}" 10 "plan --global-batch 010")
string(JSON micro GET "${out}" plan micro_batch)
expect_equal("${micro}" 2 "plan --micro-batch 02")
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model tiny --tp 0002 --global-batch 8 --json)
string(JSON tp GET "${out}" plan tp)
expect_equal("${tp}" 2 "plan --tp 0002")
