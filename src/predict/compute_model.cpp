#include "predict/compute_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "predict/calibration.hpp"

namespace commscale::predict {
namespace {

// The bytes a GEMM moves through HBM: its operands and result, except, for a flash-attention product,
// the sequence x keys matrix (scores or probabilities), which the fused kernel keeps on chip: only the
// operands with the head dimension (the product's smallest) are read or written.
Bytes hbm_bytes(const Gemm& g) noexcept {
  if (!g.flash) return gemm_bytes_read(g) + gemm_bytes_written(g);
  const std::int64_t head = std::min({g.m, g.n, g.k});
  const auto operand = [&](std::int64_t rows, std::int64_t cols) -> std::uint64_t {
    if (rows != head && cols != head) return 0;
    return static_cast<std::uint64_t>(rows * cols * g.batch) * size_of(g.dtype);
  };
  return Bytes(operand(g.m, g.k) + operand(g.k, g.n) + operand(g.m, g.n));
}

using hw::MathRate;

std::optional<FlopsPerSecond> rate_of(const hw::GpuSpec& gpu, MathRate r) {
  const auto& f = gpu.rate(r);
  return f.value ? std::optional<FlopsPerSecond>(*f.value) : std::nullopt;
}

MathRate primary_rate(DataType dtype, DataType accumulate) {
  switch (dtype) {
    case DataType::kBFloat16:
      return MathRate::kBf16Fp32Acc;
    case DataType::kFloat16:
      return accumulate == DataType::kFloat16 ? MathRate::kFp16Fp16Acc : MathRate::kFp16Fp32Acc;
    case DataType::kFloat64:
      return MathRate::kFp64Tensor;
    default:
      return MathRate::kFp32;
  }
}

}  // namespace

std::optional<FlopsPerSecond> dense_rate(const hw::GpuSpec& gpu, DataType dtype, DataType accumulate,
                                         std::string* fallback_note) {
  const MathRate wanted = primary_rate(dtype, accumulate);
  if (auto r = rate_of(gpu, wanted)) return r;
  const MathRate fallback = dtype == DataType::kFloat64 ? MathRate::kFp64 : MathRate::kFp16Fp32Acc;
  auto r = rate_of(gpu, fallback);
  if (r && fallback_note != nullptr) {
    *fallback_note = fmt::format("{} has no {} rate; {} GEMMs are timed at its {} rate", gpu.name, hw::rate_key(wanted),
                                 name(dtype), hw::rate_key(fallback));
  }
  return r;
}

ComputeModel::ComputeModel(hw::GpuSpec gpu, const CalibrationProfile* calibration, AttentionIssue attention)
    : gpu_(std::move(gpu)), attention_(attention) {
  if (calibration == nullptr) return;
  if (same_family(calibration->gpu, gpu_)) {
    calibration_ = calibration;
    for (std::size_t t = 0; t < gemm_floor_.size(); ++t) {
      gemm_floor_[t] = fastest_gemm(*calibration, static_cast<DataType>(t)).value_or(Seconds(0.0));
    }
    if (calibration->gpu.name != gpu_.name) {
      notes_.push_back(
          fmt::format("GEMM and memory efficiencies measured on {} (compute capability {}) applied to {} "
                      "(compute capability {}): same family",
                      calibration->gpu.name, *calibration->gpu.compute_capability.value, gpu_.name,
                      *gpu_.compute_capability.value));
    }
  } else {
    notes_.push_back(fmt::format(
        "calibration of {} (compute capability {}) not applied to {} (compute capability {}): "
        "another family; default efficiencies used",
        calibration->gpu.name, *calibration->gpu.compute_capability.value, gpu_.name, *gpu_.compute_capability.value));
  }
}

FlopsPerSecond ComputeModel::peak(DataType dtype, DataType accumulate) const {
  std::string note;
  const auto r = dense_rate(gpu_, dtype, accumulate, &note);
  return r ? *r : FlopsPerSecond(0.0);
}

double ComputeModel::default_efficiency(const Gemm& g) const {
  const double sms = static_cast<double>(gpu_.sm_count.value.value_or(1));
  const double tiles = std::ceil(static_cast<double>(g.m) / kGemmTile) *
                       std::ceil(static_cast<double>(g.n) / kGemmTile) * static_cast<double>(g.batch);
  const double k = static_cast<double>(g.k);
  const double split =
      tiles < sms ? std::max(1.0, std::min(std::floor(sms / tiles), std::floor(k / kGemmSplitDepth))) : 1.0;
  const double waves = std::ceil(tiles * split / sms);
  const double useful = static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.batch) * split;
  const double quantized = waves > 0 ? useful / (waves * sms * kGemmTile * kGemmTile) : 1.0;
  const double share = k / split;
  const double depth = share / (share + kGemmDepthOverhead);
  return kGemmEfficiency * std::min(1.0, quantized) * depth;
}

ComputeModel::Measured ComputeModel::measured(const Gemm& g, Phase phase) const {
  if (calibration_ == nullptr) return {};
  if (g.flash && attention_ == AttentionIssue::kPerKernel) {
    if (auto e = attention_efficiency(*calibration_, g, phase == Phase::kBackward)) return {e, true};
  }
  return {gemm_efficiency(*calibration_, g), false};
}

double ComputeModel::efficiency(const Gemm& g, Phase phase) const {
  return measured(g, phase).efficiency.value_or(default_efficiency(g));
}

Seconds ComputeModel::time(const Gemm& g, Phase phase) const {
  if (g.flops.value() <= 0) return Seconds(0.0);
  const FlopsPerSecond rate = peak(g.dtype, g.accumulate);
  const Measured m = measured(g, phase);
  const double e = m.efficiency.value_or(default_efficiency(g));
  const double math = rate.value() > 0 ? g.flops.value() / (rate.value() * e) : 0.0;
  const double bytes = static_cast<double>(hbm_bytes(g).count());
  const double memory = bytes / (gpu_.memory_bw.value->value() * kGB * kMemoryEfficiency);
  if (!m.efficiency) return Seconds(std::max(math, memory)) + microseconds(kGemmCallUs);
  // Measured times already contain the launch overhead. A GEMM call is not faster than the fastest
  // one measured; a product of a fused attention kernel is a share of one call, with no floor of its own.
  const Seconds floor_s = m.attention_share ? Seconds(0.0) : gemm_floor_[static_cast<std::size_t>(g.dtype)];
  return std::max(Seconds(std::max(math, memory)), floor_s);
}

Seconds ComputeModel::time(const MemoryKernel& k, Phase phase) const {
  const Bytes bytes = k.bytes_read + k.bytes_written;
  const GBps bw = *gpu_.memory_bw.value;
  if (calibration_ != nullptr) {
    if (auto t = memory_time(*calibration_, bytes, bw, memory_row_key(k, phase))) return *t;
  }
  return transfer_time(bytes, bw * kMemoryKernelEfficiency) + microseconds(kMemoryKernelUs);
}

Seconds ComputeModel::time(const OpPayload& payload, Phase phase) const {
  if (const auto* g = std::get_if<Gemm>(&payload)) return time(*g, phase);
  if (const auto* k = std::get_if<MemoryKernel>(&payload)) return time(*k, phase);
  return Seconds(0.0);
}

}  // namespace commscale::predict
