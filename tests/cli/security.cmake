# Security basics (issue 7, item 8): result files take the user's umask and are never world-writable;
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
# An existing file (or a link planted in its place) is replaced, not written through.
file(WRITE "${WORK_DIR}/target" "keep")
file(CREATE_LINK "${WORK_DIR}/target" "${WORK_DIR}/link.json" SYMBOLIC)
mode_after(022 "${WORK_DIR}/link.json" mode)
file(READ "${WORK_DIR}/target" kept)
expect_equal("${kept}" keep "the file a link pointed to")

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
