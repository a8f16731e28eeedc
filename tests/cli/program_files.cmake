# diff-trace --program reads a `plan --dump-program` file: a file that parses but cannot run (a rank
# short, an op list index out of range, no groups, a huge world, a member outside the world, a
# dependency on a missing op) is refused with exit 2 naming the file, never an out-of-range access
# (issue 36, case 10). The variants are edits of a real dump, made here rather than committed.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 0 ARGS plan --model tiny --dp 2 --global-batch 2 --dump-program good.json)
file(READ "${WORK_DIR}/good.json" good)
file(WRITE "${WORK_DIR}/a-file" "")

# The unedited dump is accepted: the refusal comes later, from the empty timeline files.
commscale_run(EXPECT 2 ERROR err ARGS diff-trace a-file a-file --program good.json)
string(FIND "${err}" "good.json" named)
if(NOT named EQUAL -1)
  message(FATAL_ERROR "the unedited dump was refused:\n${err}")
endif()

function(expect_refused name expected json)
  file(WRITE "${WORK_DIR}/${name}.json" "${json}")
  commscale_run(EXPECT 2 ERROR err ARGS diff-trace a-file a-file --program ${name}.json)
  expect_contains("${err}" "${name}.json: is not a runnable step program: ${expected}")
endfunction()

string(JSON doc REMOVE "${good}" ranks 1)
expect_refused(rank_short "the set has 1 rank programs for a world of 2" "${doc}")
string(JSON doc SET "${good}" ranks 1 program 7)
expect_refused(program_index "rank 1 names op list 7, of 1" "${doc}")
string(JSON doc SET "${good}" ranks 0 groups "[]")
expect_refused(no_groups "rank 0" "${doc}")
string(JSON doc SET "${good}" world_size 2147483647)
expect_refused(huge_world "the set has 2 rank programs for a world of 2147483647" "${doc}")
string(JSON doc SET "${good}" ranks 0 groups 1 members "[0, 99]")
expect_refused(member_99 "rank 0 group 'dp' [0, 99]" "${doc}")
string(JSON doc SET "${good}" programs 0 1 deps "[4000]")
expect_refused(dangling_dep "rank 0 op 1 'mb0.L0.fwd.ln1' depends on op 4000" "${doc}")
