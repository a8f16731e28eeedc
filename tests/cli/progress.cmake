# The progress line: drawn on a terminal (a pseudo-terminal from util-linux's `script`), rewritten in
# place with carriage returns and cleared at the end; not drawn into a pipe, nor with --quiet; drawn
# under mpirun (where rank 0's stderr is a pipe) when --progress asks for it.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

find_program(SCRIPT script REQUIRED)
set(sweep bench all_reduce -b 1K -e 64K -f 4 -n 2 -w 1 --backend cpu)
string(REPLACE ";" " " sweep_text "${sweep}")

execute_process(COMMAND ${SCRIPT} -qec "${COMMSCALE} ${sweep_text} >/dev/null" /dev/null
                RESULT_VARIABLE rc OUTPUT_VARIABLE tty WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 120)
expect_equal("${rc}" 0 "commscale bench on a terminal")
expect_contains("${tty}" "\rbench  0/4  0%  starting")
expect_contains("${tty}" "\rbench  4/4  100%  all_reduce fp32 64 KiB done")

execute_process(COMMAND ${SCRIPT} -qec "${COMMSCALE} ${sweep_text} --quiet >/dev/null" /dev/null
                RESULT_VARIABLE rc OUTPUT_VARIABLE quiet WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 120)
expect_equal("${rc}" 0 "commscale bench --quiet on a terminal")
string(FIND "${quiet}" "bench  " at)
expect_equal(${at} -1 "progress with --quiet")

commscale_run(EXPECT 0 RANKS 2 ERROR piped ARGS ${sweep})
string(FIND "${piped}" "bench  " at)
expect_equal(${at} -1 "progress into a pipe")

commscale_run(EXPECT 0 RANKS 2 ERROR forced ARGS ${sweep} --progress)
expect_contains("${forced}" "\rbench  4/4  100%")
commscale_run(EXPECT 0 RANKS 2 ERROR forced ARGS train --backend cpu --model tiny --dp 2 --micro-batch 1 --global-batch 4
              --steps 2 --warmup 1 --progress)
expect_contains("${forced}" "\rtrain steps  3/3  100%")

# compare: one step per plan search (each cluster, each size of the sweep), from the first on; a sweep
# to 65,536 GPUs takes minutes (issue 19, item 4).
execute_process(COMMAND ${SCRIPT} -qec "${COMMSCALE} compare --model tiny --global-batch 8 --clusters h200x2 --scaling hgx-h100 --scaling-max 16 >/dev/null" /dev/null
                RESULT_VARIABLE rc OUTPUT_VARIABLE tty WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 120)
expect_equal("${rc}" 0 "commscale compare on a terminal")
expect_contains("${tty}" "\rcompare  0/6  0%  searching h200x2")
