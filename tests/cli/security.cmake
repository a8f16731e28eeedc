# Security basics (issue 7, item 8): result files take the user's umask and are never world-writable;
# links planted by others in shared directories are not followed;
# commscale's own code opens no listening socket (only MPI and NCCL do); launch scripts never eval.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# mode_after(umask file out_var): writes `file` with plan --dump-program under `umask`, returns its mode.
function(mode_after mask file out_var)
  execute_process(COMMAND sh -c "umask ${mask} && exec \"$0\" \"$@\"" ${COMMSCALE} plan --model tiny --tp 2
                          --dump-program ${file}
                  RESULT_VARIABLE rc ERROR_VARIABLE err WORKING_DIRECTORY "${WORK_DIR}")
  expect_equal("${rc}" 0 "plan --dump-program under umask ${mask}: ${err}")
  execute_process(COMMAND stat -c %a ${file} OUTPUT_VARIABLE mode OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(${out_var} "${mode}" PARENT_SCOPE)
endfunction()

mode_after(000 "${WORK_DIR}/open.json" mode)
expect_equal("${mode}" 664 "mode under umask 000 (never world-writable)")
mode_after(027 "${WORK_DIR}/private.json" mode)
expect_equal("${mode}" 640 "mode under umask 027")
# A link's target is replaced (tests/cli/special_outputs.cmake), but in a sticky directory that others
# can write (/tmp) only a link of one's own or of the directory's owner is followed: a link planted by
# another user is refused before anything runs, and the file it points to is kept.
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(uid STREQUAL "0")
  file(MAKE_DIRECTORY "${WORK_DIR}/shared")
  execute_process(COMMAND chmod 1777 "${WORK_DIR}/shared")
  file(WRITE "${WORK_DIR}/target" "keep")
  file(CREATE_LINK "${WORK_DIR}/target" "${WORK_DIR}/shared/link.json" SYMBOLIC)
  execute_process(COMMAND chown -h 65534:65534 "${WORK_DIR}/shared/link.json")
  commscale_run(EXPECT 2 ERROR err ARGS plan --model tiny --dump-program ${WORK_DIR}/shared/link.json)
  expect_contains("${err}" "--dump-program: ")
  expect_contains("${err}" "link.json is a link owned by another user in the shared directory")
  file(READ "${WORK_DIR}/target" kept)
  expect_equal("${kept}" keep "the file a planted link pointed to")
endif()

set(root "${CMAKE_CURRENT_LIST_DIR}/../..")
file(GLOB_RECURSE sources "${root}/src/*.cpp" "${root}/src/*.hpp" "${root}/kernels/*.cu" "${root}/kernels/*.cuh")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" hits REGEX "(^|[^a-z_])(socket|bind|listen|accept|accept4)\\(")
  if(hits)
    message(FATAL_ERROR "${source} calls a socket function: ${hits}")
  endif()
endforeach()
file(GLOB scripts "${root}/launch/*.sh" "${root}/tests/*.sh" "${root}/tests/*/*.sh")
foreach(script IN LISTS scripts)
  file(STRINGS "${script}" hits REGEX "(^|[;&|( ])eval[ ]")
  if(hits)
    message(FATAL_ERROR "${script} uses eval: ${hits}")
  endif()
endforeach()
