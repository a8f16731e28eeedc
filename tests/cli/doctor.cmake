# `commscale doctor` on the CPU backend under real mpirun, on one host: what it says it could not run,
# a healthy run that passes, a rank slowed by --inject-slow-rank that it must name (and only it), a
# stated expectation the job cannot reach (exit 6 naming the job), its JSON, JSON Lines and the
# report section, and the testing flags refused where they would do nothing.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

# Two shared cores run every rank: the CPU backend's sizes (1 MiB collectives, 4 MiB transfers) and
# --min-ratio 0.15 with fewer iterations (healthy transfers here ran at 0.37 to 3.6 of their peers,
# the slowed rank's at 0.028 to 0.031).
set(small --backend cpu -n 5 -w 2)

# One rank: nothing to pair or reduce, and no GPU: every phase says why it did not run, and the run passes.
commscale_run(EXPECT 0 RANKS 1 OUTPUT out ARGS doctor ${small})
expect_contains("${out}" "doctor: 1 ranks on 1 host, backend cpu")
expect_contains("${out}" "the CPU backend has no GPU: no NVML checks (identity, PCIe link, NVLink, clocks, ECC, XID) and no GEMM")
expect_contains("${out}" "# expectations: none: the CPU backend has no GPU to find a catalog cluster by")
expect_contains("${out}" "one rank: no collective to time")
expect_contains("${out}" "the job has one rank: nothing to pair")
expect_contains("${out}" "(--min-ratio 0.15)")
expect_contains("${out}" "## verdict: PASS")

# Four healthy ranks: ranks paired in ceil(log2 4) = 2 rounds, each way: 8 transfers, judged against
# their peers; nothing named.
commscale_run(EXPECT 0 RANKS 4 OUTPUT out ARGS doctor ${small} -J healthy.json)
expect_contains("${out}" "# pair rounds: 4 ranks, 2 rounds (ceil(log2 4)), each pair timed both ways")
expect_contains("${out}" "## suspects: none")
expect_contains("${out}" "## verdict: PASS")
file(READ "${WORK_DIR}/healthy.json" json)
string(JSON version GET "${json}" schema_version)
string(JSON kind GET "${json}" kind)
string(JSON sha GET "${json}" context git_sha)
string(JSON rounds GET "${json}" config rounds)
string(JSON checks LENGTH "${json}" checks)
expect_equal("${version}" 1 "schema_version")
expect_equal("${kind}" commscale-doctor "kind")
expect_equal("${rounds}" 2 "config.rounds")
if(sha STREQUAL "")
  message(FATAL_ERROR "no context.git_sha in healthy.json")
endif()
set(pairs 0)
math(EXPR last "${checks} - 1")
foreach(i RANGE ${last})
  string(JSON check GET "${json}" checks ${i} check)
  if(check STREQUAL "pair")
    math(EXPR pairs "${pairs} + 1")
    foreach(key measured expected ratio threshold basis)
      string(JSON value GET "${json}" checks ${i} ${key})
      if(value STREQUAL "" OR value STREQUAL "null")
        message(FATAL_ERROR "pair check ${i} has no ${key}")
      endif()
    endforeach()
  endif()
endforeach()
expect_equal(${pairs} 8 "pair transfers")
file(STRINGS "${WORK_DIR}/healthy.jsonl" lines)
list(LENGTH lines count)
math(EXPR expected_lines "1 + ${checks} + 4 + 1")  # header, checks, 4 phases, verdict (no suspect)
expect_equal(${count} ${expected_lines} "lines of healthy.jsonl")

# Rank 2 waits 50 ms before each collective: every transfer it takes part in is slow, so doctor names
# rank 2, its send and receive paths, and nothing else; exit 6.
commscale_run(EXPECT 6 RANKS 4 OUTPUT out ARGS doctor ${small} --inject-slow-rank 2:50000 -J slow.json)
expect_contains("${out}" "## verdict: FAIL")
expect_contains("${out}" "(exit code 6)")
file(READ "${WORK_DIR}/slow.json" json)
string(JSON suspects LENGTH "${json}" suspects)
expect_equal(${suspects} 1 "suspects of the slowed run")
string(JSON kind GET "${json}" suspects 0 kind)
string(JSON rank GET "${json}" suspects 0 place rank)
string(JSON evidence GET "${json}" suspects 0 evidence)
expect_equal("${kind}" rank "the suspect's kind")
expect_equal("${rank}" 2 "the suspect's rank")
expect_contains("${evidence}" "its link, both directions: 4 of 4 of its transfers below 0.15 x expected")
string(JSON exit_code GET "${json}" verdict exit_code)
expect_equal("${exit_code}" 6 "verdict.exit_code")

# A stated expectation the job cannot reach: the job's all_reduce fails, named as the job's; one it
# reaches passes.
commscale_run(EXPECT 6 RANKS 2 OUTPUT out ARGS doctor ${small} --skip pairs --expect all_reduce=1000000)
expect_contains("${out}" "job   the job (2 ranks on 1 node): all_reduce:")
expect_contains("${out}" "--expect all_reduce=1e+06")
commscale_run(EXPECT 0 RANKS 2 OUTPUT out ARGS doctor ${small} --skip pairs --expect all_reduce=0.000001)

# `commscale report` renders doctor files.
commscale_run(EXPECT 0 OUTPUT out ARGS report healthy.json slow.json -o doctor.html)
file(READ "${WORK_DIR}/doctor.html" html)
expect_contains("${html}" "Doctor: slow")
expect_contains("${html}" "Verdict: FAIL (exit code 6)")
expect_contains("${html}" "pair rounds: measured / expected")

# Testing flags that would do nothing are refused once the job's size is known.
commscale_run(EXPECT 2 RANKS 2 ERROR err ARGS doctor ${small} --inject-slow-rank 7:10)
expect_contains("${err}" "--inject-slow-rank: 7:10 names rank 7, and the job has 2 rank(s)")
commscale_run(EXPECT 2 RANKS 1 ERROR err ARGS doctor ${small} --inject-sm-hog 0:0.5)
expect_contains("${err}" "--inject-sm-hog: holds SMs of a GPU, and the CPU backend has none")
