# `commscale report`'s page in a real browser (Debian's chromium, headless): it loads with no console
# message, every chart has a nonzero size and every label lies inside its chart (the page's own
# checks, read back from the DOM), and a
# screenshot is saved as report.png in this test's folder. Skipped where chromium is not installed
# (launch/install-deps.sh test installs it).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
get_filename_component(source_dir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

find_program(CHROMIUM NAMES chromium chromium-browser)
if(NOT CHROMIUM)
  message("SKIPPED: chromium not found (launch/install-deps.sh test installs it)")
  return()
endif()

commscale_run(EXPECT 0 RANKS 2
              ARGS train --backend cpu --model tiny --dp 2 --micro-batch 1 --global-batch 4 --steps 1 --warmup 1
                   -J train.json --trace trace.json)
# Labels at their longest: full plans of a search and of steps apart, and the 1 x H200 main job
# (a one-GPU p2p heatmap, whose caption is wider than its one cell; a one-rank bench).
commscale_run(EXPECT 0 ARGS search --model llama2-7b --cluster hgx-a100 --global-batch 64 --flash-attn --top 5
                             -J search.json)
commscale_run(EXPECT 0 OUTPUT out
              ARGS report ${source_dir}/tests/data/results/h200x2-2026-12-01/compare train.json trace.json
                   ${source_dir}/tests/data/report/compare.json ${source_dir}/tests/data/report/prediction.json
                   ${source_dir}/tests/data/results/h200x1-2026-12-01/main-job search.json
                   --line-rate 450:NV18 -o report.html)
file(READ "${WORK_DIR}/report.html" html)
count_occurrences("${html}" "<svg class=\"chart\"" charts)

# CI runs as root, where chromium needs --no-sandbox (and containers have a small /dev/shm). A
# virtual-time budget lets the load handler run before the DOM is dumped.
set(browser ${CHROMIUM} --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --enable-logging=stderr --v=0
            --user-data-dir=${WORK_DIR}/profile --virtual-time-budget=5000)
execute_process(COMMAND ${browser} --dump-dom "file://${WORK_DIR}/report.html"
                RESULT_VARIABLE rc OUTPUT_VARIABLE dom ERROR_VARIABLE log TIMEOUT 50)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "chromium --dump-dom exited with ${rc}\n${log}")
endif()
string(REGEX MATCH "data-charts-rendered=\"([0-9]+)\"" _ "${dom}")
set(rendered "${CMAKE_MATCH_1}")
string(REGEX MATCH "data-charts-failed=\"([0-9]+)\"" _ "${dom}")
set(failed "${CMAKE_MATCH_1}")
string(REGEX MATCH "data-page-errors=\"([0-9]+)\"" _ "${dom}")
set(errors "${CMAKE_MATCH_1}")
expect_equal("${rendered}" "${charts}" "charts the page saw drawn (of ${charts})")
expect_equal("${failed}" 0 "charts not drawn")
expect_equal("${errors}" 0 "script errors in the page")
# The page's own check: every label lies inside its chart (a cut label is a lost label).
string(REGEX MATCH "data-labels-clipped=\"(-?[0-9]+)\"" _ "${dom}")
expect_equal("${CMAKE_MATCH_1}" 0 "labels cut by their chart")
string(FIND "${dom}" "[charts ${charts}/${charts}]" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the page's title does not say every chart was drawn")
endif()
string(REGEX MATCH "[^\n]*:CONSOLE[^\n]*" console "${log}")
if(console)
  message(FATAL_ERROR "the page wrote to the console: ${console}")
endif()

execute_process(COMMAND ${browser} --hide-scrollbars --window-size=1200,2400 --screenshot=${WORK_DIR}/report.png
                        "file://${WORK_DIR}/report.html"
                RESULT_VARIABLE rc ERROR_VARIABLE log TIMEOUT 50)
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK_DIR}/report.png")
  message(FATAL_ERROR "chromium --screenshot failed (${rc})\n${log}")
endif()
file(SIZE "${WORK_DIR}/report.png" png_bytes)
if(png_bytes LESS 10000)
  message(FATAL_ERROR "the screenshot is only ${png_bytes} bytes")
endif()
message("screenshot: ${WORK_DIR}/report.png")
