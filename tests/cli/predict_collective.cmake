# `commscale predict --collective`: one collective over bench's size sweep, as text and JSON; the flags
# of the two modes of predict kept apart (exit 2, naming the flag).
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# 1 KiB all-reduce on 2 x H200 over NV18: ring LL, NCCL's 6.6 + 2 x 0.6 us, 1024 B at min(0.5 x 370.8,
# llMaxBw 141) GB/s (derivation: tests/unit/predict_collective_test.cpp).
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster h200x2 --collective all_reduce -b 1K -e 1K)
expect_contains("${out}" "cluster  h200x2: 2 rank(s) on 1 node(s) of 2 x h200-sxm; calibration: none")
expect_contains("${out}" "group    nvlink ring (2 per node): bus 370.8 GB/s")
if(NOT out MATCHES "all_reduce +1024 +7\\.81 +7\\.80 +0\\.13 +0\\.13  ring  LL")
  message(FATAL_ERROR "no 1 KiB all_reduce row of 7.81 us, ring LL, in\n${out}")
endif()

# Every collective, JSON to a file and stdout; the sizes bench would run (gathers round chunks down).
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster h200x2-sockets --collective all -b 8 -e 64 --json
                                       -J sweep.json)
file(READ "${WORK_DIR}/sweep.json" json)
expect_equal("${json}" "${out}" "-J file and --json output")
string(JSON kind GET "${json}" kind)
expect_equal(${kind} commscale-collective-prediction "kind")
string(JSON ranks GET "${json}" ranks)
expect_equal(${ranks} 2 "ranks")
string(JSON path GET "${json}" group path_class)
expect_equal(${path} socket "path class on h200x2-sockets")
string(JSON rows LENGTH "${json}" results)
# 4 sizes (8, 16, 32, 64 B) x 4 collectives whose size stays; all_gather, reduce_scatter and alltoall
# of 8 and 16 B round to 0 and are left out: 7 x 4 - 3 x 2 = 22.
expect_equal(${rows} 22 "rows")
string(JSON proto GET "${json}" results 0 proto)
expect_equal(${proto} LL "protocol of the first row")

# Across nodes: a TP=16 group on two HGX H100 nodes.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-h100 --nodes 2 --collective all_reduce -b 1K -e 1K)
expect_contains("${out}" "16 rank(s) on 2 node(s) of 8 x h100-sxm")
expect_contains("${out}" "tree  LL")

# Bad input: the two modes' flags apart, and the group.
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --collective all_reduce --model tiny)
expect_contains("${err}" "--model")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --collective all_reduce --tp 2)
expect_contains("${err}" "--tp")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --collective all_reduce --timeline t.json)
expect_contains("${err}" "--timeline")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --model tiny -b 8)
expect_contains("${err}" "--minbytes")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --collective all_reduces)
expect_contains("${err}" "all_reduces")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --collective all_reduce --ranks 3)
expect_contains("${err}" "--ranks")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x1 --collective all_reduce)
expect_contains("${err}" "one GPU")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster h200x2 --collective all_reduce -f 1)
expect_contains("${err}" "-f/--stepfactor")
