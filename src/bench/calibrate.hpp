#pragma once

// `commscale calibrate`: measures this GPU machine into a calibration profile for the predictor
// (format: src/predict/CALIBRATION.md). Rank 0's GPU runs the GEMM sweep (cuBLASLt, the step's
// call) and the memory-kernel sweep (the step's kernel); when asked, the executor's host cost per op
// class and the device's kernel floor, and the interference probe beside GEMMs and memory kernels
// (runtime/calibration_probes.hpp; rows: calibrate_rows.hpp); then every rank runs collective sweeps
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
  std::vector<DataType> gemm_types = {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32, DataType::kFp8E4M3};
  // m, n and k each: small models' shapes (hidden 896, 1024) down to 256.
  std::vector<std::int64_t> gemm_dims = {256, 512, 1024, 2048, 4096, 8192, 16384};
  // fp32 without tensor cores is slow: its grid is the dims from 1024 to 8192 only.
  std::int64_t fp32_min_dim = 1024;
  std::int64_t fp32_max_dim = 8192;
  // The attention GEMMs (scores and context) at these sequence lengths, head sizes and batch counts
  // (micro-batch x heads per tensor-parallel rank), whole and as flash attention's causal shares; fp32
  // only at head size 128 from sequence 1024.
  std::vector<std::int64_t> attention_seqs = {512, 1024, 2048, 4096, 8192};
  std::vector<std::int64_t> attention_head_dims = {64, 128};
  std::vector<std::int64_t> attention_batches = {8, 16, 32, 64, 128, 256};
  // A large GEMM runs this long before each shape or size is timed (0: none), unless the shape timed
  // just before ran at least as long.
  double heat_ms = 20;
  bool host = false;          // --measure host: the executor's host cost per op, the kernel floor
  bool interference = false;  // --measure interference: the probe beside GEMMs and memory kernels
  bool clock = false;         // --measure clock: a GEMM's speed by its share of the time (predict/clock.hpp)
  std::vector<int> interference_sms = {1, 2, 4, 8, 16, 32};
  std::vector<Collective> collectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                                         Collective::kAllToAll, Collective::kSendRecv};
  Bytes collective_min{1024};
  Bytes collective_max{1ull << 30};
  Bytes memory_min{1ull << 20};
  Bytes memory_max{4ull << 30};
  int repetitions = 20;  // timed calls per GEMM (at most; a long one fewer, see calibrate.cpp), kernel or collective size
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
