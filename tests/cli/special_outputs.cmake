# Output paths that are not plain files (issue 19, items 1, 6, 8, 10, 18): a device stays a device, a
# FIFO and standard output are written in place, a link's target is replaced and the link kept, a full
# device is reported, a 255-byte name works, directories are never open to others, a file name that is
# not UTF-8 is recorded escaped, and a rejected run leaves an earlier run's files as they were.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

function(file_type path out_var)
  execute_process(COMMAND stat -c %F "${path}" OUTPUT_VARIABLE type OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${out_var} "${type}" PARENT_SCOPE)
endfunction()

# sh_run(EXPECT rc SCRIPT text [OUTPUT out] [ERROR err]): runs `text` with sh in WORK_DIR, $0 = commscale.
function(sh_run)
  cmake_parse_arguments(R "" "EXPECT;SCRIPT;OUTPUT;ERROR" "" ${ARGN})
  execute_process(COMMAND sh -c "${R_SCRIPT}" ${COMMSCALE} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 120)
  if(NOT "${rc}" STREQUAL "${R_EXPECT}")
    message(FATAL_ERROR "sh -c '${R_SCRIPT}' exited with ${rc}, expected ${R_EXPECT}\n--- stdout:\n${out}\n--- stderr:\n${err}")
  endif()
  if(R_OUTPUT)
    set(${R_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
  if(R_ERROR)
    set(${R_ERROR} "${err}" PARENT_SCOPE)
  endif()
endfunction()

set(predict predict --cluster h200x2 --model tiny)
set(bench bench --backend cpu -b 8 -e 64 -f 2 -n 2 -w 0)

# A device is written in place: /dev/null stays a character device (this needs root to go wrong).
commscale_run(EXPECT 0 ARGS ${predict} -J /dev/null --timeline /dev/null --trace /dev/null)
commscale_run(EXPECT 0 RANKS 2 ARGS ${bench} -J /dev/null --jsonl /dev/null --csv /dev/null)
file_type(/dev/null type)
expect_equal("${type}" "character special file" "/dev/null after -J, --jsonl, --csv /dev/null")
# -J /dev/null has no JSON Lines file beside it (no /dev/null.jsonl).
if(EXISTS /dev/null.jsonl)
  message(STATUS "not checked: /dev/null.jsonl was there before this test")
else()
  commscale_run(EXPECT 0 RANKS 2 ARGS ${bench} -J /dev/null)
  if(EXISTS /dev/null.jsonl)
    message(FATAL_ERROR "-J /dev/null made /dev/null.jsonl")
  endif()
endif()

# A full device is a failure to write: exit 3, naming it.
commscale_run(EXPECT 3 ERROR err ARGS ${predict} -J /dev/full)
expect_contains("${err}" "cannot write /dev/full: No space left on device")
commscale_run(EXPECT 3 RANKS 2 ERROR err ARGS ${bench} --jsonl /dev/full)
expect_contains("${err}" "cannot append to /dev/full: No space left on device")
file_type(/dev/full type)
expect_equal("${type}" "character special file" "/dev/full")

# Standard output: "-" and /dev/stdout (a link into /proc, which stays a link).
commscale_run(EXPECT 0 OUTPUT out ARGS plan --model tiny --tp 2 --dump-program /dev/stdout)
expect_contains("${out}" [["world_size":2]])
expect_contains("${out}" "plan     2 ranks")  # the program, then the text
commscale_run(EXPECT 0 OUTPUT out ARGS ${predict} -J - --timeline -)
expect_contains("${out}" [["kind": "commscale-prediction"]])
expect_contains("${out}" [["kind":"commscale-timeline"]])
file_type(/dev/stdout type)
expect_equal("${type}" "symbolic link" "/dev/stdout")

# A FIFO is written in place, once: its reader gets one whole document (bench too, which rewrites a
# file after each row).
# (When the command fails, the script opens the FIFO itself so that its reader is not left waiting.)
# (Scripts separate commands by newlines: a semicolon would split the CMake argument.)
set(release "rc=$?\n[ $rc = 0 ] || : > \"$fifo\"\nwait\nexit $rc")
sh_run(EXPECT 0 SCRIPT "fifo=plan.fifo\nmkfifo $fifo && { cat $fifo > plan.got & } && \"$0\" plan --model tiny --dump-program $fifo\n${release}")
file(READ "${WORK_DIR}/plan.got" got)
string(JSON world GET "${got}" world_size)
expect_equal("${world}" 1 "the program read from the FIFO")
file_type("${WORK_DIR}/plan.fifo" type)
expect_equal("${type}" "fifo" "plan.fifo after --dump-program")
list(JOIN bench " " bench_args)
list(JOIN MPI_ENV " " mpi_env)
list(JOIN MPIRUN " " mpirun)
sh_run(EXPECT 0 SCRIPT "fifo=bench.fifo\nmkfifo $fifo && { cat $fifo > bench.got & } && env ${mpi_env} ${mpirun} -np 2 \"$0\" ${bench_args} -J $fifo > /dev/null\n${release}")
file(READ "${WORK_DIR}/bench.got" got)
string(JSON complete GET "${got}" complete)  # one document: a second would make this invalid JSON
expect_equal("${complete}" ON "bench -J on a FIFO")

# A link's target is replaced; the link stays.
file(MAKE_DIRECTORY "${WORK_DIR}/real")
file(WRITE "${WORK_DIR}/real/target.json" "old")
file(CREATE_LINK "real/target.json" "${WORK_DIR}/link.json" SYMBOLIC)
commscale_run(EXPECT 0 ARGS plan --model tiny --dump-program link.json)
file_type("${WORK_DIR}/link.json" type)
expect_equal("${type}" "symbolic link" "link.json after --dump-program")
file(READ "${WORK_DIR}/real/target.json" target)
string(JSON world GET "${target}" world_size)
expect_equal("${world}" 1 "the link's target")

# The longest file name Linux allows (255 bytes): the temporary name is short, nothing is left beside.
string(REPEAT "n" 250 long)
set(long "${long}.json")
commscale_run(EXPECT 0 ARGS plan --model tiny --dump-program "long/${long}")
if(NOT EXISTS "${WORK_DIR}/long/${long}")
  message(FATAL_ERROR "no 255-byte file")
endif()
file(GLOB left RELATIVE "${WORK_DIR}/long" "${WORK_DIR}/long/*" "${WORK_DIR}/long/.*")
expect_equal("${left}" "${long}" "the files in long/")

# Directories made for an output are 0755 at most, even under umask 000 (the file is 0664).
sh_run(EXPECT 0 SCRIPT "umask 000 && exec \"$0\" plan --model tiny --dump-program new/a/b/p.json")
foreach(directory new new/a new/a/b)
  execute_process(COMMAND stat -c %a "${WORK_DIR}/${directory}" OUTPUT_VARIABLE mode OUTPUT_STRIP_TRAILING_WHITESPACE)
  expect_equal("${mode}" 755 "mode of ${directory} under umask 000")
endforeach()
execute_process(COMMAND stat -c %a "${WORK_DIR}/new/a/b/p.json" OUTPUT_VARIABLE mode OUTPUT_STRIP_TRAILING_WHITESPACE)
expect_equal("${mode}" 664 "mode of the file under umask 000")

# A file name that is not UTF-8 is used as it is and recorded escaped (\xFF) in the context.
string(ASCII 255 ff)
commscale_run(EXPECT 0 ARGS ${predict} -J "p${ff}.json")
file(READ "${WORK_DIR}/p${ff}.json" doc)
string(JSON line GET "${doc}" command_line)
expect_contains("${line}" [[-J p\xFF.json]])
execute_process(COMMAND ${CMAKE_COMMAND} -E env "NCCL_NOT_UTF8=a${ff}b" ${MPI_ENV} ${MPIRUN} -np 2 ${COMMSCALE}
                        ${bench} -J "b${ff}.json"
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err WORKING_DIRECTORY "${WORK_DIR}" TIMEOUT 120)
expect_equal("${rc}" 0 "bench -J with a byte that is not UTF-8: ${err}")
file(STRINGS "${WORK_DIR}/b${ff}.jsonl" lines)
list(GET lines 0 header)
string(JSON line GET "${header}" context command_line)
expect_contains("${line}" [[-J b\xFF.json]])
string(JSON value GET "${header}" context environment NCCL_NOT_UTF8)
expect_equal("${value}" [[a\xFFb]] "an environment variable that is not UTF-8, as recorded")

# topo's topology file is JSON: a name that is not UTF-8 (given, or the -o file's stem by default) is
# refused before the machine is described (it made nlohmann throw type_error.316 after the work).
commscale_run(EXPECT 2 ERROR err ARGS topo -o "topo${ff}.json")
expect_contains("${err}" [[-o/--output: the topology's name "topo\xff" is not UTF-8 text]])
commscale_run(EXPECT 2 ERROR err ARGS topo -o topo.json --name "n${ff}")
expect_contains("${err}" [[--name: the topology's name "n\xff" is not UTF-8 text]])
if(EXISTS "${WORK_DIR}/topo.json" OR EXISTS "${WORK_DIR}/topo${ff}.json")
  message(FATAL_ERROR "a refused topo -o wrote its file")
endif()

# A rejected run (the plan's 2 ranks on a job of 3) leaves the files of an earlier run as they were.
commscale_run(EXPECT 0 RANKS 2 ARGS train --backend cpu --model tiny --tp 2 --steps 1 --warmup 0 -J keep/t.json)
foreach(f t.json t.jsonl)
  file(SHA256 "${WORK_DIR}/keep/${f}" before_${f})
endforeach()
commscale_run(EXPECT 2 RANKS 3 ERROR err ARGS train --backend cpu --model tiny --tp 2 -J keep/t.json)
expect_contains("${err}" "the plan has dp 1 x tp 2 x pp 1 = 2 ranks but the job has 3")
foreach(f t.json t.jsonl)
  file(SHA256 "${WORK_DIR}/keep/${f}" after)
  expect_equal("${after}" "${before_${f}}" "keep/${f} after a rejected train")
endforeach()
# So does a --gpu the catalog does not know (issue 36, case 7): it was looked up for the MFU after the
# steps, once the JSON Lines file had replaced the earlier run's.
commscale_run(EXPECT 2 RANKS 2 ERROR err OUTPUT out
              ARGS train --backend cpu --model tiny --tp 2 --steps 1 --warmup 0 -J keep/t.json --gpu no-such-gpu)
expect_contains("${err}" "--gpu: ")
expect_contains("${err}" "no-such-gpu")
string(FIND "${out}" "step time" trained)
expect_equal("${trained}" -1 "train with an unknown --gpu printed a step time")
foreach(f t.json t.jsonl)
  file(SHA256 "${WORK_DIR}/keep/${f}" after)
  expect_equal("${after}" "${before_${f}}" "keep/${f} after train --gpu no-such-gpu")
endforeach()
commscale_run(EXPECT 0 RANKS 2 ARGS ${bench} -J keep/b.json)
file(SHA256 "${WORK_DIR}/keep/b.jsonl" before)
commscale_run(EXPECT 2 RANKS 2 ERROR err ARGS ${bench} --split consecutive:3 -J keep/b.json)
file(SHA256 "${WORK_DIR}/keep/b.jsonl" after)
expect_equal("${after}" "${before}" "keep/b.jsonl after a rejected bench")
