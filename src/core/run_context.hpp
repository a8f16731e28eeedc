#pragma once

// The `context` block every result file carries: what ran, where, and with which software, so that
// a number can always be traced to its machine and command line.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/json_at.hpp"

namespace commscale {

// Where one rank ran.
struct RankPlacement {
  int rank = 0;
  int local_rank = 0;
  int pid = 0;
  std::string host;
  int device = -1;  // CUDA device ordinal; -1 on the CPU backend
  std::string gpu_name;
  std::string pci_bus_id;
  std::string gpu_uuid;
  double gpu_memory_GiB = 0.0;
  int compute_capability = 0;  // e.g. 90
};

struct RunContext {
  std::string commscale_version;
  std::string git_sha;
  std::string command_line;
  std::string start_time_utc;  // ISO 8601
  std::string backend;         // "gpu" or "cpu"
  std::string backend_note;    // why this backend, e.g. "no GPU visible: ..."
  std::string comm_library;    // "NCCL 2.28.3" or the MPI library's version line
  std::string mpi_library;
  std::string cuda_runtime;    // "13.0", empty on the CPU backend
  std::string cuda_driver;     // CUDA version the driver supports
  std::string gpu_driver;      // e.g. "580.159.03" from NVML, empty where unknown
  std::vector<std::string> hosts;
  std::vector<RankPlacement> ranks;
  std::map<std::string, std::string> environment;  // every NCCL_*, UCX_*, OMPI_*, SLURM_* (and COMMSCALE_*)
  // The MPI transport: "pml" in use, "pml_requested", "UCX_TLS", ... (runtime/mpi_transport.hpp); empty
  // for commands that start no MPI.
  std::map<std::string, std::string> mpi_transport;
};

// Variables from `environ`-style "NAME=value" entries whose names start with one of the prefixes
// that change how communication behaves.
[[nodiscard]] std::map<std::string, std::string> relevant_environment(const char* const* environ_entries);

// The current time as "2026-11-30T23:59:59Z".
[[nodiscard]] std::string utc_timestamp();

void to_json(nlohmann::json& out, const RankPlacement& placement);
void from_json(const nlohmann::json& in, RankPlacement& placement);
void to_json(nlohmann::json& out, const RunContext& context);
// The inverse, for `commscale report`, as tolerant as the report has always been of a context: every
// key optional; a string key of another type, an environment value that is not a string and a host
// that is not a string read as empty. Errors (naming the file and key) for what the report needs in
// shape: hosts and ranks are arrays, backend and a GPU's pci_bus_id strings.
void from_json(const JsonAt& in, RunContext& context);

}  // namespace commscale
