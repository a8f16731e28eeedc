# Issue 36, case 6: an output on the path of one of the command's own inputs replaced that input, exit 0
# (`report in.json -o in.json`, `predict --plan-file p.json -J p.json`). Now: exit 2 naming both flags,
# before anything runs, and the input is as it was, however the path is spelled (./, a symbolic link,
# a second name of the file). The corpus (tests/bad_inputs/cases.txt) holds more messages; here the
# files are compared. `calibrate -o FILE --merge` reads and rewrites its profile on purpose: allowed.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

set(data "${CMAKE_CURRENT_LIST_DIR}/../data")
file(COPY_FILE "${data}/hf/gpt2.json" "${WORK_DIR}/model.json")
file(CREATE_LINK "model.json" "${WORK_DIR}/link.json" SYMBOLIC)
file(CREATE_LINK "${WORK_DIR}/model.json" "${WORK_DIR}/second-name.json")
file(COPY_FILE "${data}/report/prediction.json" "${WORK_DIR}/prediction.json")
file(WRITE "${WORK_DIR}/plan.json"
     [[{"schema_version": 1, "kind": "commscale-plan", "model": "tiny", "plan": {"global_batch": 8}, "cluster": "h200x2"}]])
foreach(f model.json prediction.json plan.json)
  file(SHA256 "${WORK_DIR}/${f}" before_${f})
endforeach()

# expect_refused(EXPECTED ARGS...): exit 2, one message containing EXPECTED, every input as it was.
function(expect_refused expected)
  commscale_run(EXPECT 2 ERROR err ARGS ${ARGN})
  expect_contains("${err}" "commscale: ${expected}")
  foreach(f model.json prediction.json plan.json)
    file(SHA256 "${WORK_DIR}/${f}" after)
    string(REPLACE ";" " " shown "${ARGN}")
    expect_equal("${after}" "${before_${f}}" "${f} after commscale ${shown}")
  endforeach()
endfunction()

set(replace "the result would replace it (expected an output that is not one of the command's inputs)")
expect_refused("-o/--output: prediction.json is the file RESULTS reads; ${replace}"
               report prediction.json -o prediction.json)
expect_refused("-J/--output_file: ./prediction.json is the file A reads (as prediction.json)"
               diff-trace prediction.json prediction.json --model tiny -J ./prediction.json)
expect_refused("--dump-program: link.json is the file --model-file reads (as model.json)"
               plan --model-file model.json --dump-program link.json)
expect_refused("-J/--output_file: plan.json is the file --plan-file reads; ${replace}"
               predict --plan-file plan.json -J plan.json)
expect_refused("--timeline: second-name.json is the file --hf-config reads (as model.json)"
               predict --cluster h200x2 --hf-config model.json --timeline second-name.json)
expect_refused("--csv: model.json is the file --model-file reads"
               train --backend cpu --model-file model.json --steps 1 --warmup 0 --csv model.json)
expect_refused("--jsonl: plan.json is the file --plan-file reads"
               train --backend cpu --plan-file plan.json --steps 1 --warmup 0 --jsonl plan.json)
expect_refused("--best-plan-file: plan.json is the file --plan-file reads"
               search --plan-file plan.json --cluster h200x2 --best-plan-file plan.json)

# An output beside its input is fine.
commscale_run(EXPECT 0 ARGS plan --model-file model.json --dump-program program.json)

# calibrate -o FILE --merge: the profile it adds to is its output. Without a GPU the run stops at the
# measurement (exit 2 saying so), not at the check of its outputs, and the profile is as it was.
file(COPY_FILE "${data}/predict/h200x2-calibration.json" "${WORK_DIR}/cal.json")
file(SHA256 "${WORK_DIR}/cal.json" before)
commscale_run(EXPECT 2 ERROR err ARGS calibrate -o cal.json --merge --backend cpu)
expect_contains("${err}" "calibrate measures GPUs")
file(SHA256 "${WORK_DIR}/cal.json" after)
expect_equal("${after}" "${before}" "cal.json after calibrate --merge without a GPU")
