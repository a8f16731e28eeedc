# The context block records the MPI transport in force: Open MPI's own choice first, then UCX asked
# for as a user would (--mca pml ucx through OMPI_MCA_*, over Debian's "pml = ^ucx" in
# /etc/openmpi/openmpi-mca-params.conf; Open MPI 4.1's UCX PML also wants pml_ucx_tls/devices "any"
# where there is no InfiniBand device). Open MPI aborts when the PML asked for cannot be selected,
# so the second run also proves the UCX PML works here.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli.cmake)

commscale_run(EXPECT 0 RANKS 2 OUTPUT out ARGS bench all_reduce --backend cpu -b 8 -e 64 -f 8 -n 2 -J default.json)
expect_contains("${out}" "# MPI transport: pml ")
file(READ "${WORK_DIR}/default.json" json)
string(JSON pml GET "${json}" context mpi_transport pml)
string(JSON requested GET "${json}" context mpi_transport pml_requested)
message(STATUS "default: pml ${pml} (requested: ${requested})")
if(pml STREQUAL "" OR pml STREQUAL "unknown")
  message(FATAL_ERROR "context.mpi_transport.pml is '${pml}': the PML in use was not found")
endif()

set(MPI_ENV ${MPI_ENV} OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any UCX_TLS=self,sm,tcp)
commscale_run(EXPECT 0 RANKS 2 OUTPUT out ARGS bench all_reduce --backend cpu -b 8 -e 64K -f 8 -n 2 -J ucx.json)
expect_contains("${out}" "# MPI transport: pml ucx (requested: ucx)")
expect_contains("${out}" "UCX_TLS self,sm,tcp")
expect_contains("${out}" "# Out of bounds values : 0 OK")
file(READ "${WORK_DIR}/ucx.json" json)
foreach(pair "pml=ucx" "pml_requested=ucx" "pml_ucx_tls=any" "pml_ucx_devices=any" "UCX_TLS=self,sm,tcp")
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${pair}")
  string(JSON value GET "${json}" context mpi_transport ${CMAKE_MATCH_1})
  expect_equal("${value}" "${CMAKE_MATCH_2}" "context.mpi_transport.${CMAKE_MATCH_1}")
endforeach()
