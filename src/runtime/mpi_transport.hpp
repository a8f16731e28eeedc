#pragma once

// Which MPI transport this process runs on: the point-to-point layer (PML) Open MPI selected, what it
// was asked for, and how UCX was configured. Reported in the context block so that a CPU-backend
// number (or a hang) can be traced to ob1 over shared memory and TCP, or to UCX over InfiniBand.

#include <map>
#include <string>

namespace commscale {

// Keys: "pml" (the component in use, from the Open MPI component libraries mapped into this process
// after MPI_Init, which unloads those not selected; "unknown" where they are built in),
// "pml_requested", "btl_requested", "pml_ucx_tls", "pml_ucx_devices" (MPI_T control variables, which see
// --mca, OMPI_MCA_* and the system's openmpi-mca-params.conf alike), "UCX_TLS", "UCX_NET_DEVICES"
// (environment). A value nothing set reads "default". Call after MPI_Init.
[[nodiscard]] std::map<std::string, std::string> mpi_transport_settings();

}  // namespace commscale
