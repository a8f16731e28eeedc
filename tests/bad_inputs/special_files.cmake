# Inputs of the corpus too big or too odd to commit (issue 19), made in the test's scratch directory
# (@WORK@) before the cases run: files nested 100,000 levels deep (200 KB each; one in a copy of the
# catalog folder), a 10 MB string, and symbolic link loops as a file, in the catalog folder and in a
# report folder. The device nodes the
# corpus reads (/dev/zero, /dev/null) are the system's.
string(REPEAT "[" 100000 _open)
string(REPEAT "]" 100000 _close)
file(WRITE "${WORK_DIR}/deep-model.json" "{\"layers\": ${_open}2${_close}, \"hidden\": 64}")
file(WRITE "${WORK_DIR}/deep-gpu.json" "{\"schema_version\": 1, \"kind\": \"gpu\", \"sm_count\": ${_open}1${_close}}")
file(WRITE "${WORK_DIR}/deep-cluster.json" "{\"schema_version\": 1, \"kind\": \"cluster\", \"node\": ${_open}${_close}}")
file(WRITE "${WORK_DIR}/deep-program.json" "{\"schema_version\": 1, \"programs\": ${_open}${_close}}")
file(WRITE "${WORK_DIR}/deep-result.json" "{\"kind\": \"commscale-bench\", \"rows\": ${_open}${_close}}")
string(REPEAT "s" 10000000 _long)
file(WRITE "${WORK_DIR}/long-string.json"
     "{\"layers\": \"${_long}\", \"hidden\": 64, \"heads\": 4, \"seq\": 16, \"vocab\": 100}")
file(CREATE_LINK "loop.json" "${WORK_DIR}/loop.json" SYMBOLIC)
# The catalog, with a GPU file that is a link to itself.
file(COPY "${CMAKE_CURRENT_LIST_DIR}/../../topologies/" DESTINATION "${WORK_DIR}/topologies-loop")
file(CREATE_LINK "loop.json" "${WORK_DIR}/topologies-loop/gpus/loop.json" SYMBOLIC)
# A folder of results, one of them a link to itself.
file(MAKE_DIRECTORY "${WORK_DIR}/results-loop/run")
file(CREATE_LINK "loop.json" "${WORK_DIR}/results-loop/run/loop.json" SYMBOLIC)
# The catalog, with a GPU file nested 100,000 levels deep.
file(COPY "${CMAKE_CURRENT_LIST_DIR}/../../topologies/" DESTINATION "${WORK_DIR}/topologies-deep")
file(COPY_FILE "${WORK_DIR}/deep-gpu.json" "${WORK_DIR}/topologies-deep/gpus/deep.json")
# A device and a FIFO among the files of a folder (the catalog, a report folder): refused, naming the
# entry, as the same file given alone is (not skipped).
file(COPY "${CMAKE_CURRENT_LIST_DIR}/../../topologies/" DESTINATION "${WORK_DIR}/topologies-device")
file(CREATE_LINK "/dev/zero" "${WORK_DIR}/topologies-device/gpus/zero.json" SYMBOLIC)
file(MAKE_DIRECTORY "${WORK_DIR}/results-device/run")
file(CREATE_LINK "/dev/zero" "${WORK_DIR}/results-device/run/zero.json" SYMBOLIC)
file(MAKE_DIRECTORY "${WORK_DIR}/results-fifo")
execute_process(COMMAND mkfifo "${WORK_DIR}/results-fifo/pipe.json" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "mkfifo ${WORK_DIR}/results-fifo/pipe.json: ${_rc}")
endif()
# Outputs that are inputs of the same command (issue 36, case 6): a model file, a symbolic link to it
# and a second name of it (a hard link), and a folder of results.
file(COPY_FILE "${CMAKE_CURRENT_LIST_DIR}/../data/hf/gpt2.json" "${WORK_DIR}/model.json")
file(CREATE_LINK "model.json" "${WORK_DIR}/model-link.json" SYMBOLIC)
file(CREATE_LINK "${WORK_DIR}/model.json" "${WORK_DIR}/model-hard.json")
file(MAKE_DIRECTORY "${WORK_DIR}/results-in")
file(COPY_FILE "${CMAKE_CURRENT_LIST_DIR}/../data/report/prediction.json" "${WORK_DIR}/results-in/prediction.json")
# Outputs that cannot be written, found before the work (issue 36, case 9): a Unix socket, and a folder
# that is a symbolic link to nothing.
execute_process(COMMAND python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])"
                        "${WORK_DIR}/socket" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "could not make the socket ${WORK_DIR}/socket: ${_rc}")
endif()
file(CREATE_LINK "no-such-folder" "${WORK_DIR}/dangling" SYMBOLIC)
