#pragma once

// A calibration profile: what one machine measured, for the predictor to use instead of its default
// efficiencies. `commscale calibrate` writes it; `predict --calibration FILE` (and search, compare)
// read it. Its format and how the predictor interpolates it: CALIBRATION.md beside this file.

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
