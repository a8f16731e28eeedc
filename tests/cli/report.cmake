# `commscale report`: a page from real train output (JSON and Chrome trace), the committed H200 bench
# results and the predictor's formats (fixtures); files it does not render are named on stderr; bad
# input exits 2.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
get_filename_component(source_dir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

commscale_run(EXPECT 0 RANKS 2
              ARGS train --backend cpu --model tiny --dp 2 --micro-batch 1 --global-batch 4 --steps 1 --warmup 1
                   -J train.json --trace trace.json)
commscale_run(EXPECT 0 OUTPUT out ERROR err
              ARGS report ${source_dir}/results/h200x2-2026-12-01/compare train.json trace.json
                   ${source_dir}/tests/data/report/compare.json ${source_dir}/tests/data/report/prediction.json
                   ${source_dir}/topologies/clusters/h200x2.json --line-rate 450:NV18 -o out/report.html)
# 5 busbw charts, the step breakdown, the timeline, compare's throughput and the two scaling curves.
expect_contains("${out}" "commscale report: out/report.html (24 files, 9 sections, 10 charts)")
expect_contains("${err}" "not rendered: ${source_dir}/topologies/clusters/h200x2.json: kind \"cluster\" is not one report renders")

file(READ "${WORK_DIR}/out/report.html" html)
expect_contains("${html}" "<!DOCTYPE html>")
expect_contains("${html}" "measured: train")
expect_contains("${html}" "predicted: h200x2")
expect_contains("${html}" "line rate 450 GB/s per direction (NV18)")
expect_contains("${html}" "href=\"../trace.json\"")
expect_contains("${html}" "Timeline engine: executor.")
count_occurrences("${html}" "<svg class=\"chart\"" charts)
expect_equal(${charts} 10 "charts in the page")
foreach(external "<script src" "<link" "@import" "url(")
  string(FIND "${html}" "${external}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the page refers to something outside it: ${external}")
  endif()
endforeach()

commscale_run(EXPECT 2 ERROR err ARGS report missing.json -o r.html)
expect_contains("${err}" "missing.json: no such file or folder")
commscale_run(EXPECT 2 ERROR err ARGS report train.json --line-rate fast -o r.html)
expect_contains("${err}" [[--line-rate: "fast"]])
commscale_run(EXPECT 2 ERROR err ARGS report ${source_dir}/topologies/clusters/h200x2.json -o r.html)
expect_contains("${err}" "none of the files is a result report renders")
