# `bench alltoallv` on the CPU backend (4 MPI ranks, MPI_Ialltoallv) and `predict --collective alltoallv`
# with the same traffic matrix: the same rows, sizes and busiest-rank bytes, the checks catching a corrupted
# share, and the matrix's errors (exit 2, naming --matrix and the file). src/bench/BENCH.md, "alltoallv".
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# Row i: what rank i sends each rank. Total 25 units; at -b 100K (102400 B, the mean a rank sends) a unit is
# 102400 x 4 / 25 = 16384 B. Rows (send): 6, 3, 12, 4 units; columns (receive): 6, 6, 4, 9 units. So the
# busiest sender sends 12 x 16384 = 196608 B, the busiest receiver gets 9 x 16384 = 147456 B, 1.44 x the mean.
file(MAKE_DIRECTORY "${WORK_DIR}")
file(WRITE "${WORK_DIR}/m.txt" "# alltoallv traffic, 4 ranks\n0 1 2 3\n1 0 1 1\n4 4 0 4\n1 1 1 1\n")
set(sweep -b 100K -e 400K -f 4)

commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS bench alltoallv --backend cpu --matrix m.txt ${sweep} -n 2 -w 1
                                                -J bench.json)
expect_contains("${out}" "# Collective: alltoallv")
expect_contains("${out}" "the busiest receiver gets 1.440x the mean")
expect_contains("${out}" "Out of bounds values : 0 OK")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-h100 --ranks 4 --collective alltoallv --matrix m.txt
                                       ${sweep} -J predict.json)
expect_contains("${out}" "traffic  alltoallv: file m.txt")
file(READ "${WORK_DIR}/bench.json" bench)
file(READ "${WORK_DIR}/predict.json" predict)
string(JSON bench_rows LENGTH "${bench}" results)
string(JSON predict_rows LENGTH "${predict}" results)
expect_equal(${bench_rows} 2 "bench rows (100K and 400K)")
expect_equal(${predict_rows} 2 "predict rows")
foreach(i 0 1)
  foreach(key size_bytes)
    string(JSON b GET "${bench}" results ${i} ${key})
    string(JSON p GET "${predict}" results ${i} ${key})
    expect_equal(${p} ${b} "row ${i} ${key}")
  endforeach()
  foreach(key max_send_bytes max_recv_bytes)
    string(JSON b GET "${bench}" results ${i} traffic ${key})
    string(JSON p GET "${predict}" results ${i} traffic ${key})
    expect_equal(${p} ${b} "row ${i} ${key}")
  endforeach()
  string(JSON wrong GET "${bench}" results ${i} out_of_place wrong)
  expect_equal(${wrong} 0 "row ${i} wrong out of place")
  string(JSON wrong GET "${bench}" results ${i} in_place wrong)
  expect_equal(${wrong} 0 "row ${i} wrong in place (checked on the CPU backend)")
endforeach()
string(JSON size GET "${bench}" results 0 size_bytes)
expect_equal(${size} 102400 "the size column: the mean bytes a rank sends")
string(JSON sent GET "${bench}" results 0 traffic max_send_bytes)
expect_equal(${sent} 196608 "busiest sender, 12 x 16384")
string(JSON received GET "${bench}" results 1 traffic max_recv_bytes)
expect_equal(${received} 589824 "busiest receiver at 400K, 9 x 65536")
string(JSON cell GET "${bench}" config alltoallv matrix 2 0)
expect_equal(${cell} 4.0 "the JSON carries the matrix")

# Inside and between nodes: 2 HGX H100 nodes, 16 ranks, every rank sending 1 unit to each other rank (240
# units). At -b 15K (15360 B a rank) a unit is 15360 x 16 / 240 = 1024 B: each rank sends and receives 7 units
# inside its node (7168 B) and 8 across (8192 B).
set(rows "")
foreach(i RANGE 15)
  set(row "")
  foreach(j RANGE 15)
    if(i EQUAL j)
      string(APPEND row "0 ")
    else()
      string(APPEND row "1 ")
    endif()
  endforeach()
  string(APPEND rows "${row}\n")
endforeach()
file(WRITE "${WORK_DIR}/two_nodes.txt" "${rows}")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-h100 --nodes 2 --collective alltoallv --matrix
                                       two_nodes.txt -b 15K -e 15K --json)
string(JSON intra GET "${out}" results 0 traffic max_intra_node_bytes)
expect_equal(${intra} 7168 "busiest rank's bytes inside its node")
string(JSON inter GET "${out}" results 0 traffic max_inter_node_bytes)
expect_equal(${inter} 8192 "busiest rank's bytes across nodes")

# A generated routing: the same rows on both sides (the generator is seeded and runs on every rank).
set(routing experts=8,top-k=2,imbalance=1.5,tokens=256)
commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS bench alltoallv --backend cpu --routing ${routing} -b 1M -e 1M -n 2
                                                -w 1 -J routed.json)
expect_contains("${out}" "routing experts=8,top-k=2,imbalance=1.5,tokens=256,seed=1 (reached: busiest rank 1.5")
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-h100 --ranks 4 --collective alltoallv --routing
                                       ${routing} -b 1M -e 1M --json)
file(READ "${WORK_DIR}/routed.json" bench)
foreach(key max_send_bytes max_recv_bytes)
  string(JSON b GET "${bench}" results 0 traffic ${key})
  string(JSON p GET "${out}" results 0 traffic ${key})
  expect_equal(${p} ${b} "routed ${key}")
endforeach()

# Uniform traffic (neither flag) is alltoall's: the same size and bytes.
commscale_run(EXPECT 0 OUTPUT out ARGS predict --cluster hgx-h100 --ranks 4 --collective alltoall,alltoallv -b 1M
                                       -e 1M --json)
string(JSON a GET "${out}" results 0 busbw_GBps)
string(JSON v GET "${out}" results 1 busbw_GBps)
expect_equal(${v} ${a} "uniform alltoallv's busbw is alltoall's")

# The checks see a corrupted share.
commscale_run(EXPECT 1 RANKS 4 OUTPUT out ARGS bench alltoallv --backend cpu --matrix m.txt -b 100K -e 100K -n 1 -w 0
                                                --inject-corruption 2)
expect_contains("${out}" "FAILED")

# Bad input: exit 2, naming the flag, the file and what was expected.
file(WRITE "${WORK_DIR}/ragged.txt" "1 2\n3\n")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster hgx-h100 --ranks 2 --collective alltoallv --matrix ragged.txt)
expect_contains("${err}" "--matrix ragged.txt")
expect_contains("${err}" "not square")
file(WRITE "${WORK_DIR}/negative.txt" "1 -2\n3 4\n")
commscale_run(EXPECT 2 ERROR err ARGS bench alltoallv --matrix negative.txt)
expect_contains("${err}" "row 0 column 1 is -2")
commscale_run(EXPECT 2 ERROR err RANKS 2 ARGS bench alltoallv --backend cpu --matrix m.txt -b 1K -e 1K)
expect_contains("${err}" "a 2 x 2 matrix")
commscale_run(EXPECT 2 ERROR err ARGS bench alltoall --matrix m.txt)
expect_contains("${err}" "alltoallv is not among the collectives")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster hgx-h100 --collective alltoallv --routing experts=8,top-k=2,x=1)
expect_contains("${err}" "unknown key \"x\"")
commscale_run(EXPECT 2 ERROR err ARGS predict --cluster hgx-h100 --collective alltoallv --routing experts=12,top-k=2)
expect_contains("${err}" "12 experts over 8 ranks")
