#pragma once

// Compute–communication interference on one GPU. While a collective or a transfer moves data, NCCL's
// kernel holds SMs (one per channel) and streams its data through HBM: a GEMM or a memory-bound
// kernel running beside it on the same GPU slows down, and the collective slows down beside them.
//
// The figures come from a probe (calibrate --measure interference): a kernel that holds k SMs and
// streams memory at a measured rate (or only holds them), run beside a large GEMM and beside the
// step's memory-bound kernel; each row gives both slowdowns (CALIBRATION.md, "interference"). A
// communication op is mapped onto the probe by the share of the GPU it takes: its SMs (NCCL's channel
// count for its path, nccl_channels) over the GPU's SMs, and the HBM traffic it makes (twice its bus
// bandwidth: every byte it sends is read from HBM and every byte it receives written) over the GPU's
// memory bandwidth. Rows are read as those shares of the probe GPU, so they apply to any GPU:
//   slowdown(k, r) = spin(k) + (stream(k) - spin(k)) x min(1, r / probe rate(k)),
// linear in the SM share between rows, clamped at the ends; spin(k) = 1 without spin rows.
//
// In the step, an op's slowdown applies only while it overlaps: apply_interference() re-simulates the
// step with every compute op lengthened by its overlap with communication times (1 - 1/slowdown),
// and every communication op by its overlap with compute, until the step time settles.

#include <array>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "hw/kinds.hpp"
#include "predict/calibration.hpp"
#include "predict/simulator.hpp"

namespace commscale::predict {

class InterferenceModel {
 public:
  InterferenceModel() = default;  // no rows: overlap costs nothing
  // Rows measured on `probe_gpu`, applied to ops of `gpu`.
  InterferenceModel(std::vector<InterferencePoint> rows, const hw::GpuSpec& probe_gpu, const hw::GpuSpec& gpu,
                    std::string source);

  [[nodiscard]] bool empty() const noexcept { return rows_.empty(); }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

  // A communication op's share of the GPU, as the probe's: SMs it holds and HBM bandwidth it uses.
  struct Load {
    double sm_share = 0.0;
    double hbm_share = 0.0;
  };
  [[nodiscard]] Load load(int channels, GBps bus_bw) const noexcept;
  // Time together over time alone, of a compute kernel of `kind` beside that load, and of the
  // communication op beside such a kernel.
  [[nodiscard]] double compute_slowdown(Beside kind, const Load& load) const noexcept;
  [[nodiscard]] double comm_slowdown(Beside kind, const Load& load) const noexcept;

 private:
  struct Row {
    double sm_share = 0.0;
    double probe_share = 0.0;  // the probe's HBM rate alone over its GPU's bandwidth (0: spin)
    Beside beside = Beside::kGemm;
    double compute = 1.0;
    double probe = 1.0;
  };
  [[nodiscard]] double slowdown(Beside kind, const Load& load, bool of_compute) const noexcept;

  std::vector<Row> rows_;
  // rows_ by Beside, each in sm_share order: those whose probe streams through HBM, and the spins.
  // Split once here: slowdown runs for every overlapping pair of every simulation.
  std::array<std::vector<Row>, 2> streaming_;
  std::array<std::vector<Row>, 2> spinning_;
  double sms_ = 0.0;        // of the GPU the ops run on
  double memory_GBps_ = 0.0;
  std::string source_;
};

// SMs NCCL's kernel holds for a collective on a path of this class: its channel count (one block per
// channel). Not measured here (one GPU cannot run NCCL between GPUs): taken as 16 on NVLink, 8 over PCIe
// P2P, 4 through host memory or sockets and 8 across a network (tag U: to be measured on two GPUs, where
// `NCCL_DEBUG=INFO` prints "N coll channels" per communicator). What NCCL itself would pick (NVIDIA/nccl
// master 5067397, src/graph/search.cc ncclTopoCompute and ncclTopoDupChannels, connect.cc ncclTopoPostset):
// the ring search takes the fastest per-channel rate of speedArrayIntra (sm80: 40, 30, 20... GB/s; sm90
// starts at 60) whose rings fill the GPU's NVLink bandwidth (topo.h: 20 GB/s a link on sm80, 20.6 on sm90),
// duplicates them when that rate is >= 25 GB/s (on sm90 only above 50 GB/s or with <= 4 rings), and
// Postset doubles the count again. A100 on NVSwitch: 12 links x 20 = 240 GB/s = 6 rings at 40, x2, x2 =
// 24 channels, so 16 under-counts its SMs by a third; H100/H200 on NVSwitch run NVLS for large all-reduces
// with 16 channels (transport/nvls.cc NVLS_NCHANNELS_SM90); PCIe P2P (one ring under 25 GB/s, not
// duplicated, x2) 2 channels, so 8 over-counts. Kept at the values above until a path class carries the
// GPU's arch and link count (nccl_channels takes only the class).
[[nodiscard]] int nccl_channels(hw::PathClass path) noexcept;

// The interference rows to use: the profile's (measured on its GPU) where it has some, else the
// catalog's topologies/interference.json (rows measured on one GPU, with their source), else none.
[[nodiscard]] InterferenceModel interference_for(const hw::GpuSpec& gpu, const CalibrationProfile* profile);

// What the communication ops of a program load the GPU with, and which kind of compute each compute op
// is: what apply_interference needs of the costs.
class InterferenceCosts {
 public:
  virtual ~InterferenceCosts() = default;
  // A communication op's load on its rank's GPU.
  [[nodiscard]] virtual InterferenceModel::Load comm_load(int rank, const Op& op) const = 0;
  // The share of a compute op's time that is GEMMs (the rest memory-bound kernels): 1 for a GEMM, 0
  // for a memory-bound kernel; a coarse program's fused op says what its units hold.
  [[nodiscard]] virtual double gemm_share(int rank, const Op& op) const = 0;
};

// OpShares::gemm_share of an op that is not compute: a communication op, which interferes with compute,
// and a host copy, which does not (a copy engine over PCIe: it holds no SM and no NCCL channel).
inline constexpr double kCommunication = -1.0;
inline constexpr double kNotInterfering = -2.0;

// A simulation's ops as the passes after it (interference, the clock) re-time them: by simulated rank
// (index into Simulation::simulated) and op id, the duration under `costs` and the GEMM share of a
// compute op (or one of the two values above).
struct OpShares {
  std::vector<std::vector<double>> seconds;
  std::vector<std::vector<double>> gemm_share;
};
[[nodiscard]] OpShares op_shares(const ProgramSet& set, const Simulation& sim, const OpCosts& costs,
                                 const InterferenceCosts& shares);

struct InterferenceResult {
  int iterations = 0;  // simulations run after the first
  double added_compute_s = 0.0;  // per step, mean per simulated rank: what interference added
  double added_comm_s = 0.0;
};

// Re-simulates `sim` (a simulation of `set` under `costs` and `options`) with interference until the
// step time changes by less than 0.1% (at most `max_iterations` more simulations). `sim` is replaced
// by the last simulation. Nothing is done when the model is empty or no op overlaps another.
InterferenceResult apply_interference(const ProgramSet& set, const OpCosts& costs, const InterferenceCosts& loads,
                                      const InterferenceModel& model, const SimulationOptions& options,
                                      Simulation& sim, int max_iterations = 4);

}  // namespace commscale::predict
