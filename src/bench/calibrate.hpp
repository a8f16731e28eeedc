#pragma once

// `commscale calibrate`: measures this GPU machine into a calibration profile for the predictor
// (format: src/predict/calibration.hpp). Rank 0's GPU runs the GEMM sweep (cuBLASLt, the step's
// call) and the memory-kernel sweep (the step's kernel); then every rank runs collective sweeps
// (the `bench` sweep, checked) for each group size that divides the job, concurrent groups of
// neighbouring ranks. One run measures the transport NCCL is allowed to use: run it again under
// NCCL_P2P_DISABLE=1 (host-staged) and with NCCL_SHM_DISABLE=1 too (sockets) and merge with
// --add-to to cover the emulated paths.

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/result.hpp"
#include "core/collective.hpp"
#include "core/dtype.hpp"
#include "core/units.hpp"
#include "runtime/mpi.hpp"
#include "runtime/session.hpp"

namespace commscale {

struct CalibrateOptions {
  std::vector<DataType> gemm_types = {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32};
  std::vector<std::int64_t> gemm_dims = {1024, 2048, 4096, 8192, 16384};  // m, n and k each
  std::int64_t fp32_max_dim = 8192;  // fp32 without tensor cores is slow: smaller shapes only
  // Batch counts (micro-batch x heads per tensor-parallel rank) of the attention GEMMs.
  std::vector<std::int64_t> attention_batches = {8, 16, 32, 64, 128, 256};
  double heat_ms = 20;  // a large GEMM runs this long before each shape or size is timed (0: none)
  std::vector<Collective> collectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                                         Collective::kAllToAll, Collective::kSendRecv};
  Bytes collective_min{1024};
  Bytes collective_max{1ull << 30};
  Bytes memory_min{1ull << 20};
  Bytes memory_max{4ull << 30};
  int repetitions = 20;  // timed calls per GEMM, kernel or collective size
  std::string gpu;       // catalog GPU; empty: from the device name
  std::string cluster;   // recorded as machine.cluster when given
  std::string description;
};

// Runs the measurements (collective over `world`) and returns the profile on rank 0 (null elsewhere).
// Progress goes to `log` on rank 0, and each collective sweep's rows to a reporter `sweep_table` makes
// (none when empty). Throws InputError when the run has no GPU or the GPU is not in the
// catalog.
[[nodiscard]] nlohmann::ordered_json run_calibration(const CalibrateOptions& options, const RankSession& session,
                                                     const MpiComm& world, const BenchReporterFactory& sweep_table,
                                                     std::ostream& log);

}  // namespace commscale
