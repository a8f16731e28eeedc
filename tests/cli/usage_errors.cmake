# Bad input gets exit code 2 and one message naming the flag and what was expected, before any rank
# starts MPI; errors that need the job's size are reported once, by rank 0.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 2 ERROR err ARGS bench -b 12X)
expect_contains("${err}" [[-b/--minbytes: "12X" is not a size (expected a byte count such as 8, 64K, 128M or 4G]])

commscale_run(EXPECT 2 ERROR err ARGS bench -d fp8)
expect_contains("${err}" [[-d/--datatype: unknown data type "fp8" (expected int8, int32, fp16, bf16, fp32, fp64 or all)]])

commscale_run(EXPECT 2 ERROR err ARGS bench -o mulsum)
expect_contains("${err}" [[-o/--op: unknown reduction "mulsum"]])

commscale_run(EXPECT 2 ERROR err ARGS bench gather)
expect_contains("${err}" [[collective: unknown collective "gather"]])

commscale_run(EXPECT 2 ERROR err ARGS bench -b 1G -e 1M)
expect_contains("${err}" [[-b/--minbytes: 1073741824 is larger than -e/--maxbytes 1048576]])

commscale_run(EXPECT 2 ERROR err ARGS bench --split consecutive:x)
expect_contains("${err}" [[--split: "x" is not a number]])

commscale_run(EXPECT 2 ERROR err ARGS bench --split rows:2)
expect_contains("${err}" [[--split: unknown split "rows:2"]])

commscale_run(EXPECT 2 ERROR err ARGS bench -r -1)
expect_contains("${err}" [[-r/--root: -1 is not a rank]])

commscale_run(EXPECT 2 ERROR err ARGS bench -z 4)
expect_contains("${err}" [[-z/--blocking: 4 (expected 0, 1 or 2)]])

commscale_run(EXPECT 2 ERROR err ARGS bench -G 2 -z 1)
expect_contains("${err}" [[-G/--cudagraph: graph replay cannot wait between iterations]])

commscale_run(EXPECT 2 ERROR err ARGS bench -G 2 --backend cpu)
expect_contains("${err}" [[-G/--cudagraph: graph capture needs the GPU backend]])

commscale_run(EXPECT 2 ERROR err ARGS bench --backend tpu)
expect_contains("${err}" [[--backend: unknown backend "tpu" (expected auto, gpu or cpu)]])

commscale_run(EXPECT 2 ERROR err ARGS bench -n 0)
expect_contains("${err}" [[-n/--iters: 0 iterations (expected at least 1)]])

commscale_run(EXPECT 2 ERROR err ARGS bench -T -1)
expect_contains("${err}" [[-T/--timeout]])

file(WRITE "${WORK_DIR}/a-file" "")
commscale_run(EXPECT 2 ERROR err ARGS bench -J ${WORK_DIR}/a-file/out.json)
expect_contains("${err}" [[-J/--output_file: cannot create directory]])

commscale_run(EXPECT 2 ERROR err ARGS bench --no-such-flag)
expect_contains("${err}" [[--no-such-flag]])

commscale_run(EXPECT 2 ERROR err ARGS)
expect_contains("${err}" [[subcommand]])

commscale_run(EXPECT 0 OUTPUT out ARGS bench --help)
expect_contains("${out}" [[Usage: commscale bench]])

# Under mpirun every rank parses the same command line; only rank 0 reports.
commscale_run(EXPECT 2 RANKS 3 ERROR err ARGS bench -b 12X)
count_occurrences("${err}" [["12X" is not a size]] n)
expect_equal(${n} 1 "copies of the message from 3 ranks")

# Errors that depend on the job are found after MPI starts, on every rank, and still reported once.
commscale_run(EXPECT 2 RANKS 3 ERROR err ARGS bench --backend cpu --split consecutive:2)
expect_contains("${err}" [[--split: groups of 2 ranks do not divide the 3 ranks of the job]])
count_occurrences("${err}" [[do not divide]] n)
expect_equal(${n} 1 "copies of the message from 3 ranks")

commscale_run(EXPECT 2 RANKS 2 ERROR err ARGS bench broadcast --backend cpu -r 5)
expect_contains("${err}" [[-r/--root: rank 5 is not in a group of 2 (expected a root below 2)]])
