#pragma once

// A calibration profile: what one machine measured, for the predictor to use instead of its default
// efficiencies. `commscale calibrate` writes it; `predict --calibration FILE` (and search, compare)
// read it. The format is meant to be filled straight from measurements: GEMM sweep rows
// (m, n, k, dtype, seconds), memory-kernel rows (bytes moved, seconds) and `commscale bench` JSON rows
// (size_bytes, out_of_place.time_us) per collective, group size and path class.
//
// {
//   "schema_version": 1,
//   "kind": "commscale-calibration",
//   "machine": {                        required
//     "gpu": "h200-sxm",                required: the GPU's catalog name (topologies/gpus/)
//     "source": "commscale calibrate, commit ..., 2026-12-05",   required: who measured, how, when
//     "cluster": "h200x2",              optional: the topology file of the machine
//     "gpus": 2,                        optional
//     "description": "...", "date": "2026-12-05"                  optional
//   },
//   "gemm": [                           optional: one row per measured GEMM
//     {"m": 8192, "n": 8192, "k": 8192, "batch": 1, "dtype": "bf16", "seconds": 1.404e-3}
//   ],                                  batch optional (1); dtype bf16 | fp16 | fp32 (FP32 accumulate)
//   "memory": [                         optional: memory-bound kernels (a copy, say)
//     {"bytes": 2147483648, "seconds": 5.03e-4, "kernel": "copy"},
//     {"bytes": 1073741824, "seconds": 7.7e-4, "kernel": "torch.softmax", "kind": "softmax",
//      "kernels": "eager", "phase": "fwd"}
//   ],                                  bytes = read + written; kernel optional, informative;
//                                       kind (op.hpp's memory kernel kinds), kernels (fused | eager,
//                                       default fused) and phase (fwd | bwd, default fwd): the row
//                                       times that op's kernel only (launch/pytorch_kernels.py writes
//                                       eager ones); without kind, the row is of the generic curve
//   "collectives": [                    optional: one curve per (collective, ranks, nodes, path class)
//     {"collective": "all_reduce", "ranks": 2, "nodes": 1, "path_class": "nvlink",
//      "env": "", "source": "commscale bench ...",         env, source optional
//      "points": [{"size_bytes": 1024, "time_us": 6.4}, {"size_bytes": 4294967296, "time_us": 12496}]}
//   ],                                  path_class: nvlink | pcie | host_staged | socket | network
//   "attention": [                      optional: fused (flash) causal attention, one row per timed call
//     {"seq": 4096, "batch": 64, "head_dim": 128, "dtype": "bf16", "phase": "fwd", "seconds": 1.1e-3,
//      "kernel": "torch SDPA (cuDNN flash)"}
//   ],                                  batch = micro-batch x heads; phase fwd | bwd (the whole
//                                       backward kernel); the row's FLOPs are counted as the step
//                                       program counts flash attention (workload/layer_ops.hpp);
//                                       "dropout": true (optional) where the kernel applied dropout
//   "host": [                           optional: host time to issue ops, per framework
//     {"framework": "pytorch-eager", "source": "launch/pytorch_host.py ...",
//      "issue_us": {"gemm": 21.0, "kernel": 12.5, "collective": 30.0, "p2p": 35.0,
//                   "bwd.gemm": 9.5, "bwd.kernel": 6.0, "attention": 60.0},
//      "step_us": 150.0, "sync": "none"}
//   ],                                  issue_us: every class (gemm, kernel, collective, p2p) for all
//                                       phases, and optional overrides for one phase (fwd., bwd.,
//                                       step. before the class); attention (optional, all phases or
//                                       one): one fused attention call (SDPA and its autograd node),
//                                       a phase without it charges the call the phase's gemm cost;
//                                       step_us: once per step; sync: none | before_optimizer
//                                       (program/host_costs.hpp); attention_issue (optional): kernel
//                                       (a fused attention kernel is one call, charged to its first
//                                       product at the attention cost) | product (one GEMM call per
//                                       product; an attention cost is then refused); default product
//                                       for "commscale", kernel for any other framework
//   "device": {"kernel_floor_us": 2.1, "source": "..."},   optional: the shortest a kernel takes on the
//                                       GPU, launched back to back (an empty kernel's period)
//   "interference": [                   optional: a probe kernel holding `sms` SMs and streaming memory
//     {"sms": 16, "probe_GBps": 1900.0, "beside": "gemm", "compute_slowdown": 1.11,
//      "probe_slowdown": 1.25, "source": "..."}
//   ],                                  probe_GBps: what the probe moved alone (0: it only held SMs);
//                                       beside gemm | memory: what ran beside it; slowdowns: time
//                                       together over time alone, of the compute kernel and the probe
//   "clock": {                          optional: one GEMM's speed when memory-bound kernels take part
//     "gemm": "bf16 2048 x 8192 x 2048", "source": "...",    of the time (the SM clock under the
//     "points": [{"gemm_share": 1.0, "speedup": 1.0},        board's power limit)
//                {"gemm_share": 0.5, "speedup": 1.2}]
//   }                                   gemm_share: the GEMM's share of the time, in (0, 1]; speedup:
//                                       its time as a GEMM row is timed over its time at that share
// }
//
// Unknown keys are errors; every error names the file and the key (`cal.json: gemm[3].seconds`).
//
// How the predictor uses it (interpolation rules):
//  - GEMM: a call's time is a fixed part (the fastest row of its dtype, at most the catalog's call time:
//    the gap between back-to-back kernels, prologue, one wave) plus its work at a marginal efficiency.
//    Each row becomes one, its FLOPs over its time less the fixed part, over the profile GPU's dense
//    peak for the dtype (at most 1). A GEMM's is the inverse-squared-distance weighted mean of the 8
//    nearest rows of its dtype (as many as a cell of the m, n, k grid has corners), distance measured
//    over (log2 m, log2 n, log2 k, log2 batch); an exact shape returns its own row's time.
//    It never extrapolates beyond the measured efficiencies. No row of the dtype: default model.
//    A GEMM is not faster than the fastest row of its dtype. Below a few GFLOP a call's time is mostly
//    its fixed part, which a rate alone would shrink with the FLOPs. Rows are the GPU's time per call,
//    timed with the calls queued behind a spin (runtime/cuda/probe_timing.hpp); the host's time to
//    issue them is the host model's.
//  - memory kernels: bandwidth as a fraction of the catalog's memory bandwidth, interpolated linearly
//    in log2(bytes); beyond the largest row the largest row's fraction, below the smallest row the
//    smallest row's time (a kernel is not faster than the smallest one measured). A kernel uses the
//    rows of its own kind, kernel set and phase (recompute and step count as fwd) where the profile
//    has some, else the generic rows (no kind).
//  - carrying over: GEMM and memory fractions apply to any GPU of the same compute-capability major
//    (the same family: Hopper to H100/H200, Ampere to A100/3090...), on that GPU's own peak and
//    bandwidth; to another family they do not apply (the prediction says so).
//  - attention: where the framework runs flash attention as one fused kernel (its host row's
//    attention_issue: kernel; every framework but commscale's own executor, which runs each product as
//    a cuBLASLt GEMM and so is priced by the GEMM rows), a flash-attention GEMM (Gemm::flash) takes the efficiency of the attention rows of its
//    phase and dtype (recompute counts as backward: it is part of the backward kernel), and of its
//    dropout (a row's "dropout": true where the kernel applied dropout; without such rows, the others), interpolated as
//    GEMM rows are over (log2 seq, log2 batch) among rows of its head size; without such rows, the GEMM
//    rule above.
//  - host, device, interference, clock: program/host_costs.hpp, predict/interference.hpp,
//    predict/clock.hpp.
//  - collectives: a curve replaces the collective model for groups with the same collective, rank
//    count, node count and bottleneck path class, on a cluster of the profile's GPU. Time is
//    interpolated linearly in log(size)-log(time); below the smallest size, the smallest size's time;
//    above the largest, the largest size's bus bandwidth. When sibling groups share links the time is
//    scaled by the model's bandwidth alone over its bandwidth shared.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/collective.hpp"
#include "core/units.hpp"
#include "hw/catalog.hpp"
#include "hw/gpu_spec.hpp"
#include "program/host_costs.hpp"
#include "program/op.hpp"

namespace commscale::predict {

inline constexpr int kCalibrationSchemaVersion = 1;

struct GemmPoint {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  DataType dtype = DataType::kBFloat16;
  Seconds time;
  double efficiency = 0.0;  // filled at load: FLOP rate over the profile GPU's dense peak
};

// Which memory kernels a row times: all (the generic curve), or one kind of one kernel set in one
// direction.
struct MemoryRowKey {
  MemoryKernelKind kind = MemoryKernelKind::kResidual;
  KernelSet kernels = KernelSet::kFused;
  bool backward = false;
  friend bool operator==(const MemoryRowKey&, const MemoryRowKey&) = default;
};
// The key a kernel of this phase looks its rows up by.
[[nodiscard]] MemoryRowKey memory_row_key(const MemoryKernel& kernel, Phase phase) noexcept;

struct MemoryPoint {
  Bytes bytes;
  Seconds time;
  std::string kernel;
  std::optional<MemoryRowKey> key;  // nullopt: a row of the generic curve
  double efficiency = 0.0;          // filled at load: bandwidth over the catalog's memory bandwidth
};

struct CollectivePoint {
  Bytes size;
  Seconds time;
};

struct CollectiveCurve {
  Collective collective = Collective::kAllReduce;
  int ranks = 2;
  int nodes = 1;
  hw::PathClass path_class = hw::PathClass::kNvlink;
  std::string env;
  std::string source;
  std::vector<CollectivePoint> points;  // sorted by size, sizes distinct
};

struct AttentionPoint {
  std::int64_t seq = 0;
  std::int64_t batch = 0;  // micro-batch x heads
  std::int64_t head_dim = 0;
  DataType dtype = DataType::kBFloat16;
  bool backward = false;
  bool dropout = false;  // the kernel applied dropout to the probabilities (GPT-style training)
  Seconds time;
  std::string kernel;
  double efficiency = 0.0;  // filled at load: the program's FLOPs for it over the profile GPU's dense peak
};

// What ran beside the interference probe.
enum class Beside : std::uint8_t { kGemm, kMemory };
[[nodiscard]] std::string_view name(Beside b) noexcept;  // gemm memory

struct InterferencePoint {
  int sms = 0;
  double probe_GBps = 0.0;
  Beside beside = Beside::kGemm;
  double compute_slowdown = 1.0;
  double probe_slowdown = 1.0;
  std::string source;
};

struct DeviceFigures {
  std::optional<Seconds> kernel_floor;
  std::string source;
};

struct ClockPoint {
  double gemm_share = 1.0;  // of the time, the GEMM's (the rest: the step's memory-bound kernel)
  double speedup = 1.0;     // the GEMM's time as its row is timed over its time at this share
};

struct ClockCurve {
  std::string gemm;                // what the probe ran ("bf16 2048 x 8192 x 2048")
  std::string source;
  std::vector<ClockPoint> points;  // sorted by share, shares distinct; none: no curve
};

struct CalibrationProfile {
  std::string file;
  hw::GpuSpec gpu;  // the measured GPU, from the catalog
  std::string cluster;
  int gpus = 0;
  std::string description;
  std::string date;
  std::string source;
  std::vector<GemmPoint> gemm;
  std::vector<MemoryPoint> memory;
  std::vector<CollectiveCurve> collectives;
  std::vector<AttentionPoint> attention;
  std::vector<HostCosts> host;
  DeviceFigures device;
  std::vector<InterferencePoint> interference;
  ClockCurve clock;
};

// Reads and validates a profile; throws InputError naming the file and key.
[[nodiscard]] CalibrationProfile load_calibration(const std::string& path, const hw::Catalog& catalog);
[[nodiscard]] CalibrationProfile parse_calibration(const nlohmann::json& doc, const std::string& file,
                                                   const hw::Catalog& catalog);
// The file form (parse_calibration of it gives back the same profile).
[[nodiscard]] nlohmann::ordered_json calibration_to_json(const CalibrationProfile& profile);

// Whether the profile's GEMM and memory fractions carry over to `gpu` (same compute-capability major).
[[nodiscard]] bool same_family(const hw::GpuSpec& a, const hw::GpuSpec& b);

// Interpolation (rules above). nullopt when the profile has nothing for this case. `fixed`: the part of
// a call's time that does not grow with its work; each row then stands for its work over its time less
// that part (a marginal efficiency, at most 1), and a GEMM takes fixed + flops / (peak x efficiency).
[[nodiscard]] std::optional<double> gemm_efficiency(const CalibrationProfile& profile, const Gemm& gemm,
                                                    Seconds fixed = Seconds(0.0));
// The time of the fastest GEMM row of `dtype` (nullopt without one): no GEMM call is faster.
[[nodiscard]] std::optional<Seconds> fastest_gemm(const CalibrationProfile& profile, DataType dtype);
// Seconds for a memory kernel of `bytes` on a GPU of bandwidth `bw` (the profile's fraction applied):
// from the rows of `key` where there are some, else from the generic rows.
[[nodiscard]] std::optional<Seconds> memory_time(const CalibrationProfile& profile, Bytes bytes, GBps bw,
                                                 std::optional<MemoryRowKey> key = std::nullopt);
// The efficiency of a flash-attention GEMM from the attention rows; nullopt without rows for its phase,
// dtype and head size.
[[nodiscard]] std::optional<double> attention_efficiency(const CalibrationProfile& profile, const Gemm& gemm,
                                                         bool backward);
[[nodiscard]] const HostCosts* find_host_costs(const CalibrationProfile& profile, std::string_view framework);
[[nodiscard]] const CollectiveCurve* find_curve(const CalibrationProfile& profile, Collective c, int ranks, int nodes,
                                                hw::PathClass path_class);
[[nodiscard]] Seconds curve_time(const CollectiveCurve& curve, Bytes size);

}  // namespace commscale::predict
