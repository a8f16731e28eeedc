# `commscale hw`: the catalog lists and shows; a malformed file is rejected with exit code 2 and a
# message naming the file and the key.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
set(source_dir "${CMAKE_CURRENT_LIST_DIR}/../..")

commscale_run(EXPECT 0 OUTPUT out ARGS hw list)
expect_contains("${out}" "hgx-a100")
expect_contains("${out}" "rtx4090-8x-pcie")
expect_contains("${out}" "h200x2-nop2p")

commscale_run(EXPECT 0 OUTPUT out ARGS hw show hgx-h100 --nodes 2)
expect_contains("${out}" "network")

commscale_run(EXPECT 0 OUTPUT out ARGS hw show rtx5090 --json)
string(JSON arch GET "${out}" architecture value)
expect_contains("${arch}" "Blackwell")

commscale_run(EXPECT 2 ERROR err ARGS hw show ${source_dir}/tests/data/hw/cluster_bad_ends.json)
expect_contains("${err}" "cluster_bad_ends.json: node.links[3]: pcie cannot join gpu0 and gpu1")

commscale_run(EXPECT 2 ERROR err ARGS hw show no-such-gpu)
expect_contains("${err}" "no-such-gpu")

commscale_run(EXPECT 2 ERROR err ARGS hw show h200x2 --nodes 2)
expect_contains("${err}" "--nodes")
