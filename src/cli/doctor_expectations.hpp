#pragma once

// Where `commscale doctor` takes its expectations from (cli/doctor_expectations.cpp).

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/run_context.hpp"
#include "hw/cluster_spec.hpp"
#include "predict/calibration.hpp"
#include "predict/doctor_expect.hpp"

namespace commscale {

// What the command line says about expectations, read and checked before MPI starts (a bad cluster
// or calibration file is exit 2, once).
struct DoctorExpectArguments {
  std::string cluster_name;                                        // --cluster as given
  std::optional<hw::ClusterSpec> cluster;                          // what it names
  std::shared_ptr<const predict::CalibrationProfile> calibration;  // --calibration
  std::map<std::string, double> stated;                            // --expect KEY=VALUE
};

// On rank 0, once the session has started: --cluster's cluster; else (GPU backend) the catalog
// cluster hw match finds for rank 0's node's GPUs, else that node as topo discovers it, NICs
// included; else (CPU backend) --expect and the job's peers alone. For `context.hosts.size()` nodes.
[[nodiscard]] std::unique_ptr<predict::DoctorExpectations> doctor_expectations(const DoctorExpectArguments& args,
                                                                               const RunContext& context,
                                                                               bool gpu_backend);

}  // namespace commscale
