# `commscale hw match`: the catalog cluster of the machine a `commscale topo -J` file describes, as
# launch/main.sh asks for it after topo. From the topo.json of the 1 x H200 and 1 x H100 main jobs (real GPUs'
# discovery), and from copies of it with 2 and 3 GPUs, an unknown GPU and a wrong kind.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)
get_filename_component(source_dir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(h200 "${source_dir}/tests/data/results/h200x1-2026-12-01/main-job/topo.json")
file(MAKE_DIRECTORY "${WORK_DIR}")

commscale_run(EXPECT 0 OUTPUT out ERROR err ARGS hw match ${h200})
expect_equal("${out}" "h200x1\n" "the cluster of 1 x H200")

# The 1 x H100 lease's main job (results/gpu1-2026-12-08-main-job): h100x1, so that main.sh predicts its step.
set(h100 "${source_dir}/tests/data/results/gpu1-2026-12-08-main-job/main-job/main/topo.json")
commscale_run(EXPECT 0 OUTPUT out ERROR err ARGS hw match ${h100})
expect_equal("${out}" "h100x1\n" "the cluster of 1 x H100")

# Two of the same GPU: h200x2; its NCCL_P2P_DISABLE / NCCL_SHM_DISABLE variants emulate other machines.
file(READ "${h200}" topo)
string(JSON gpu GET "${topo}" gpus 0)
string(JSON two SET "${topo}" gpus 1 "${gpu}")
file(WRITE "${WORK_DIR}/two.json" "${two}")
commscale_run(EXPECT 0 OUTPUT out ERROR err ARGS hw match ${WORK_DIR}/two.json)
expect_equal("${out}" "h200x2\n" "the cluster of 2 x H200")

# Three: no cluster has them; the message lists the clusters of that GPU.
string(JSON three SET "${two}" gpus 2 "${gpu}")
file(WRITE "${WORK_DIR}/three.json" "${three}")
commscale_run(EXPECT 1 OUTPUT out ERROR err ARGS hw match ${WORK_DIR}/three.json)
expect_equal("${out}" "" "stdout without a match")
expect_contains("${err}" "commscale: no catalog cluster matches ${WORK_DIR}/three.json: no cluster of")
expect_contains("${err}" "has 3 h200-sxm on a node with NCCL's normal transports (clusters of h200-sxm: ")
expect_contains("${err}" "h200x1 (1 GPU per node)")
expect_contains("${err}" "h200x2-nop2p (2 GPUs per node, emulated transports)")

# A GPU topo found no catalog part for.
string(JSON unknown SET "${topo}" gpus 0 catalog_gpu "null")
string(JSON unknown SET "${unknown}" gpus 0 name "\"NVIDIA H200 NVL\"")
file(WRITE "${WORK_DIR}/unknown.json" "${unknown}")
commscale_run(EXPECT 1 ERROR err ARGS hw match ${WORK_DIR}/unknown.json)
expect_contains("${err}" "GPU 0 (NVIDIA H200 NVL) is not a GPU of the catalog (topologies/gpus/)")

# Not a topo file, or no file: bad input (exit 2), naming the file and the key.
commscale_run(EXPECT 2 ERROR err ARGS hw match ${source_dir}/tests/data/report/prediction.json)
expect_contains("${err}" "prediction.json: kind: \"commscale-prediction\"")
expect_contains("${err}" "\"commscale-topo\" (a file of commscale topo -J)")
commscale_run(EXPECT 2 ERROR err ARGS hw match ${WORK_DIR}/missing.json)
expect_contains("${err}" "missing.json")
