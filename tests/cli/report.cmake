# `commscale report`: a page from real train output (JSON and Chrome trace), the committed H200 bench
# results and the predictor's formats (fixtures); files it does not render are named on stderr; bad
# input exits 2.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
get_filename_component(source_dir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

commscale_run(EXPECT 0 RANKS 2
              ARGS train --backend cpu --model tiny --dp 2 --micro-batch 1 --global-batch 4 --no-flash-attn --steps 1 --warmup 1
                   -J train.json --trace trace.json)
commscale_run(EXPECT 0 OUTPUT out ERROR err
              ARGS report ${source_dir}/tests/data/results/h200x2-2026-12-01/compare train.json trace.json
                   ${source_dir}/tests/data/report/compare.json ${source_dir}/tests/data/report/prediction.json
                   ${source_dir}/topologies/clusters/h200x2.json --line-rate 450:NV18 -o out/report.html)
# 5 busbw charts, the step breakdown, the timeline, compare's throughput and the two scaling curves.
expect_contains("${out}" "commscale report: out/report.html (24 files, 9 sections, 11 charts)")
expect_contains("${err}" "not rendered: ${source_dir}/topologies/clusters/h200x2.json: kind \"cluster\" is not one report renders")

file(READ "${WORK_DIR}/out/report.html" html)
expect_contains("${html}" "<!DOCTYPE html>")
# The fixture's prediction is of tiny with flash attention, the run without: drawn apart, each bar
# with its own model and full plan, under a caption that does not call them the same plan.
expect_contains("${html}" "training steps: no measured and predicted pair")
expect_contains("${html}" "measured on train: tiny, dp 2 × tp 1 × pp 1, micro-batch 1, global 4<")
expect_contains("${html}" "predicted on h200x2: tiny, dp 2 × tp 1 × pp 1, micro-batch 1, global 4, flash attention<")
string(FIND "${html}" "training step: measured against predicted" paired)
expect_equal(${paired} -1 "a measured-against-predicted section without a pair")
# The scaling chart: log-log, and efficiency against a named baseline.
expect_contains("${html}" "throughput against cluster size (log-log)")
expect_contains("${html}" "scaling efficiency against cluster size (baseline: 1 GPU of hgx-a100)")
expect_contains("${html}" "line rate 450 GB/s per direction (NV18)")
expect_contains("${html}" "href=\"../trace.json\"")
expect_contains("${html}" "Timeline engine: executor.")
count_occurrences("${html}" "<svg class=\"chart\"" charts)
expect_equal(${charts} 11 "charts in the page")
foreach(external "<script src" "<link" "@import" "url(")
  string(FIND "${html}" "${external}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the page refers to something outside it: ${external}")
  endif()
endforeach()

# A prediction of the very step train ran: one section, measured beside predicted.
commscale_run(EXPECT 0 ARGS predict --model tiny --dp 2 --micro-batch 1 --global-batch 4 --no-flash-attn --cluster h200x2
                             --framework commscale -J predict.json)
commscale_run(EXPECT 0 OUTPUT out ARGS report train.json predict.json -o paired.html)
file(READ "${WORK_DIR}/paired.html" html)
expect_contains("${html}" "training step: measured against predicted")
expect_contains("${html}" "of the same model and plan")
expect_contains("${html}" "predicted on h200x2: tiny, dp 2 × tp 1 × pp 1, micro-batch 1, global 4<")
string(FIND "${html}" "no measured and predicted pair" apart)
expect_equal(${apart} -1 "a section of unpaired steps where every step has its pair")

# One rank: the bench measured local copies; the page says so and draws no bus-bandwidth chart.
commscale_run(EXPECT 0 RANKS 1 OUTPUT out
              ARGS bench all --backend cpu -b 1K -e 4K -f 4 -n 2 -w 1 -J one-rank.json)
expect_contains("${out}" "bench: 1 rank on 1 host, backend cpu")
expect_contains("${out}" "# One rank per group: every collective here is a local copy")
commscale_run(EXPECT 0 OUTPUT out ARGS report one-rank.json -o one-rank.html)
expect_contains("${out}" " 7 sections, 0 charts)")
file(READ "${WORK_DIR}/one-rank.html" html)
expect_contains("${html}" "one-rank: one rank per group, so this run measured local copies only")
expect_contains("${html}" " (one rank: local copies)</td>")
string(FIND "${html}" "bus bandwidth against message size" chart)
expect_equal(${chart} -1 "a bus-bandwidth chart of a one-rank run")

# A search's plans: every field that tells two plans apart is in the label.
commscale_run(EXPECT 0 ARGS search --model gpt3-125m --cluster hgx-a100 --global-batch 64 --top 5 -J search.json)
commscale_run(EXPECT 0 OUTPUT out ARGS report search.json -o search.html)
file(READ "${WORK_DIR}/search.html" html)
string(REGEX MATCHALL "<td>#[0-9]+ [^<]*</td>" cells "${html}")
set(labels "")
foreach(cell ${cells})
  string(REGEX REPLACE "^<td>#[0-9]+ " "" plan "${cell}")
  list(APPEND labels "${plan}")
endforeach()
list(LENGTH labels n)
if(n LESS 5)
  message(FATAL_ERROR "expected the 5 plans of the search in the page, found ${n}: ${labels}")
endif()
list(REMOVE_DUPLICATES labels)
list(LENGTH labels unique)
expect_equal(${unique} ${n} "distinct labels of the search's plans")

# A folder holding a link to its own parent (a loop of folders, issue 19 item 11): links to folders are
# not followed, so the walk ends and the one result in it is rendered once.
file(MAKE_DIRECTORY "${WORK_DIR}/looped/sub")
file(COPY_FILE "${WORK_DIR}/predict.json" "${WORK_DIR}/looped/predict.json")
file(CREATE_LINK .. "${WORK_DIR}/looped/sub/up" SYMBOLIC)
commscale_run(EXPECT 0 OUTPUT out ARGS report looped -o looped.html)
expect_contains("${out}" "commscale report: looped.html (1 files,")

commscale_run(EXPECT 2 ERROR err ARGS report missing.json -o r.html)
expect_contains("${err}" "missing.json: no such file or folder")
commscale_run(EXPECT 2 ERROR err ARGS report train.json --line-rate fast -o r.html)
expect_contains("${err}" [[--line-rate: "fast"]])
commscale_run(EXPECT 2 ERROR err ARGS report ${source_dir}/topologies/clusters/h200x2.json -o r.html)
expect_contains("${err}" "none of the files is a result report renders")
