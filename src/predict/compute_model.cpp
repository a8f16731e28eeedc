#include "predict/compute_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "predict/calibration.hpp"

namespace commscale::predict {
namespace {

// The bytes a GEMM moves through HBM: its operands and result, except, for a flash-attention product of
// a fused kernel (AttentionIssue::kPerKernel), the sequence x keys matrix (scores or probabilities), which
// the kernel keeps on chip: only the operands with the head dimension (the product's smallest) are read or
// written. Where each product is a GEMM call of its own (kPerProduct: commscale's executor, whose step
// buffers hold every operand, runtime/step_buffers.cpp), that matrix goes through HBM like any result or
// operand: QK^T and dP write it, PV, dV, dQ and dK read it. Those four read s x keys x 2 bytes per head
// against 2 x s x keys x head_dim FLOPs, 128 FLOP/byte at head size 128, under the H200's 206 (989.5
// TFLOP/s over 4800 GB/s): memory-bound, as calibrate's rows of their shapes show (compute_model.hpp).
Bytes hbm_bytes(const Gemm& g, AttentionIssue attention) noexcept {
  if (!g.flash || attention == AttentionIssue::kPerProduct) return gemm_bytes_read(g) + gemm_bytes_written(g);
  const std::int64_t head = std::min({g.m, g.n, g.k});
  const auto operand = [&](std::int64_t rows, std::int64_t cols) -> std::uint64_t {
    if (rows != head && cols != head) return 0;
    return static_cast<std::uint64_t>(rows * cols * g.batch) * size_of(g.dtype);
  };
  return Bytes(operand(g.m, g.k) + operand(g.k, g.n) + operand(g.m, g.n));
}

// Catalog-only efficiencies of eager PyTorch's memory kernels (KernelSet::kEager) over the catalog's memory
// bandwidth, per kind, forward and backward, each kernel also taking kMemoryKernelUs: the median over
// launch/pytorch_kernels.py's rows of each curve on one H200 (torch 2.11), fitted by
// launch/studies/fit_eager_defaults.py to the two eager profiles of results/h200x1-2026-12-03b/run-11/,
// which prints each curve's spread (median |log error| under 2% but norm forward's 13% and bias_grad's
// 16%). Eager kernels run at a third to all of a copy's bandwidth, where one fitted generic figure missed
// them by 25-33%.
struct EagerMemoryEfficiency {
  MemoryKernelKind kind;
  double forward;
  double backward;
};
constexpr std::array kEagerMemoryEfficiency = {
    EagerMemoryEfficiency{MemoryKernelKind::kNorm, 0.61, 0.61},
    EagerMemoryEfficiency{MemoryKernelKind::kActivation, 0.76, 0.86},  // GELU (SwiGLU: below)
    EagerMemoryEfficiency{MemoryKernelKind::kDropout, 0.63, 0.92},
    EagerMemoryEfficiency{MemoryKernelKind::kSoftmax, 0.30, 0.46},
    EagerMemoryEfficiency{MemoryKernelKind::kMask, 0.32, 0.32},
    EagerMemoryEfficiency{MemoryKernelKind::kCopy, 0.89, 0.89},
    EagerMemoryEfficiency{MemoryKernelKind::kPermute, 0.34, 0.27},
    EagerMemoryEfficiency{MemoryKernelKind::kAdd, 0.95, 0.95},
    EagerMemoryEfficiency{MemoryKernelKind::kBiasGrad, 0.67, 0.67},
    EagerMemoryEfficiency{MemoryKernelKind::kOptimizer, 0.57, 0.57},  // torch.optim.AdamW(fused=True)
};
// SwiGLU as eager PyTorch runs it (silu and a mul on strided halves of fc1's output; backward two muls,
// silu_backward and a cat), at the bytes of the program's one op: both directions.
constexpr double kEagerGatedActivationEfficiency = 0.23;

// SwiGLU's op reads two values per one written forward and writes two per three read backward; GELU's
// reads one per one forward and two per one backward (workload/layer_ops.cpp).
bool gated_activation(const MemoryKernel& k, bool backward) noexcept {
  const auto read = static_cast<double>(k.bytes_read.count());
  const auto written = static_cast<double>(k.bytes_written.count());
  return backward ? read < 2.0 * written : read > written;
}

std::optional<double> eager_memory_efficiency(const MemoryKernel& k, bool backward) noexcept {
  if (k.kernels != KernelSet::kEager) return std::nullopt;
  if (k.kind == MemoryKernelKind::kActivation && gated_activation(k, backward)) {
    return kEagerGatedActivationEfficiency;
  }
  for (const EagerMemoryEfficiency& e : kEagerMemoryEfficiency) {
    if (e.kind == k.kind) return backward ? e.backward : e.forward;
  }
  return std::nullopt;
}

// Catalog-only: the products of eager PyTorch's SDPA call (Gemm::flash_sdpa, issued as one call:
// AttentionIssue::kPerKernel) run at the GEMM default of their shapes times this factor, [backward]
// [dropout]: the median over launch/pytorch_kernels.py's 30 SDPA rows of each (causal, bf16, head sizes
// 64 and 128, sequences 512-8192, batch x heads 8-128; one H200, torch 2.11) of the catalog's time over
// the measured (launch/studies/fit_eager_defaults.py: median |log error| 8-15%, largest
// 39-48%, at the shortest sequences). With dropout SDPA runs another, slower kernel. Megatron-LM's
// flash-attn or TransformerEngine kernels were not measured: their products keep the GEMM default.
// The factors are relative to PyTorch's GEMM default (0.71, 8 us on Hopper: results/h200x1-2026-12-03c
// section 7, the same script run with those figures).
constexpr double kSdpaFactor[2][2] = {{1.409, 0.659}, {1.209, 0.951}};

using hw::MathRate;

std::optional<FlopsPerSecond> rate_of(const hw::GpuSpec& gpu, MathRate r) {
  const auto& f = gpu.rate(r);
  return f.value ? std::optional<FlopsPerSecond>(*f.value) : std::nullopt;
}

}  // namespace

std::optional<FlopsPerSecond> dense_rate(const hw::GpuSpec& gpu, DataType dtype, DataType accumulate,
                                         std::string* fallback_note) {
  const MathRate wanted = hw::gemm_rate(dtype, accumulate);
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
  use_family_defaults();
  if (calibration == nullptr) return;
  if (same_family(calibration->gpu, gpu_)) {
    calibration_ = calibration;
    for (std::size_t t = 0; t < gemm_floor_.size(); ++t) {
      gemm_floor_[t] = fastest_gemm(*calibration, static_cast<DataType>(t)).value_or(Seconds(0.0));
      // The profile's rows are calibrate's cuBLASLt calls: their fixed part is capped at the executor's
      // call time, whichever framework issues the step's GEMMs.
      gemm_fixed_[t] = std::min(gemm_floor_[t], microseconds(*defaults_.gemm_call_us.value));
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

void ComputeModel::use_family_defaults() {
  const hw::ComputeCatalog& catalog = hw::compute_catalog();
  const hw::ComputeMatch match = hw::match_compute_defaults(catalog, gpu_);
  defaults_ = *match.defaults;
  // commscale's executor (kPerProduct) makes its own cuBLASLt calls; every other framework issues its
  // GEMMs through PyTorch, which on the H200 ran them ~11% slower at large shapes (compute_model.hpp).
  const bool executor = attention_ == AttentionIssue::kPerProduct;
  const hw::Figure<double>& ceiling =
      executor ? defaults_.gemm_efficiency_ceiling : defaults_.pytorch_gemm_efficiency_ceiling;
  const hw::Figure<double>& call = executor ? defaults_.gemm_call_us : defaults_.pytorch_gemm_call_us;
  gemm_ceiling_ = *ceiling.value;
  gemm_call_ = microseconds(*call.value);
  memory_kernel_efficiency_ = *defaults_.memory_kernel_efficiency.value;
  memory_kernel_fixed_ = microseconds(*defaults_.memory_kernel_us.value);
  copy_efficiency_ = *defaults_.copy_efficiency.value;
  const auto tag = [](const hw::Figure<double>& f) { return hw::tag_letter(f.provenance.tag); };
  std::string line = fmt::format(
      "compute defaults for {}: {} ({}; {} GEMM ceiling {} {}, call {} us {}, memory kernels {} {} + {} us {}, "
      "copy {:.4f} {})",
      gpu_.name, defaults_.label, std::filesystem::path(catalog.file).filename().string(),
      executor ? "commscale's" : "PyTorch's", gemm_ceiling_, tag(ceiling), *call.value, tag(call),
      memory_kernel_efficiency_, tag(defaults_.memory_kernel_efficiency), *defaults_.memory_kernel_us.value,
      tag(defaults_.memory_kernel_us), copy_efficiency_, tag(defaults_.copy_efficiency));
  if (match.fallback) {
    line += fmt::format("; no entry for compute capability {} ({}), the default family used",
                        gpu_.compute_capability.value.value_or("unknown"), hw::name(gpu_.market));
  }
  notes_.push_back(std::move(line));
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
  return gemm_ceiling_ * std::min(1.0, quantized) * depth;
}

ComputeModel::Measured ComputeModel::measured(const Gemm& g, Phase phase) const {
  if (calibration_ == nullptr) return {};
  if (g.flash && attention_ == AttentionIssue::kPerKernel) {
    if (auto e = attention_efficiency(*calibration_, g, phase == Phase::kBackward)) return {e, true};
  }
  return {gemm_efficiency(*calibration_, g, gemm_fixed_[static_cast<std::size_t>(g.dtype)]), false};
}

double ComputeModel::catalog_efficiency(const Gemm& g, Phase phase) const {
  const double e = default_efficiency(g);
  if (!g.flash_sdpa || attention_ != AttentionIssue::kPerKernel) return e;
  return e * kSdpaFactor[phase == Phase::kBackward ? 1 : 0][g.flash_dropout ? 1 : 0];
}

double ComputeModel::efficiency(const Gemm& g, Phase phase) const {
  return measured(g, phase).efficiency.value_or(catalog_efficiency(g, phase));
}

Seconds ComputeModel::time(const Gemm& g, Phase phase) const {
  if (g.flops.value() <= 0) return Seconds(0.0);
  const FlopsPerSecond rate = peak(g.dtype, g.accumulate);
  const Measured m = measured(g, phase);
  const double e = m.efficiency.value_or(catalog_efficiency(g, phase));
  const double math = rate.value() > 0 ? g.flops.value() / (rate.value() * e) : 0.0;
  const double bytes = static_cast<double>(hbm_bytes(g, attention_).count());
  const double memory = bytes / (gpu_.memory_bw.value->value() * kGB * copy_efficiency_);
  if (!m.efficiency) return Seconds(std::max(math, memory)) + gemm_call_;
  // A GEMM call from the rows: a fixed part (gemm_fixed_) and its work at the rows' marginal rate
  // (gemm_efficiency: each row's work over its time less that part), so that a small call does not
  // shrink with its FLOPs; and not faster than the fastest row of its dtype. A product of a fused
  // attention kernel is a share of one kernel's time, with neither of its own.
  if (m.attention_share) return Seconds(std::max(math, memory));
  const auto t = static_cast<std::size_t>(g.dtype);
  return std::max(Seconds(std::max(gemm_fixed_[t].value() + math, memory)), gemm_floor_[t]);
}

Seconds ComputeModel::time(const MemoryKernel& k, Phase phase) const {
  const Bytes bytes = k.bytes_read + k.bytes_written;
  if (k.kind == MemoryKernelKind::kHostOptimizer) {
    // make_target gives every target its host; a model without one must not price the update as free.
    if (host_.pcie.value() <= 0 || host_.update_params_per_s <= 0) {
      throw std::logic_error("an offloaded optimizer update priced without a host (ComputeModel::set_host)");
    }
    return transfer_time(bytes, host_.pcie) + Seconds(static_cast<double>(k.elements) / host_.update_params_per_s);
  }
  const GBps bw = *gpu_.memory_bw.value;
  if (calibration_ != nullptr) {
    if (auto t = memory_time(*calibration_, bytes, bw, memory_row_key(k, phase))) return *t;
  }
  const double e = eager_memory_efficiency(k, phase == Phase::kBackward).value_or(memory_kernel_efficiency_);
  return transfer_time(bytes, bw * e) + memory_kernel_fixed_;
}

Seconds ComputeModel::time(const HostCopy& copy) const {
  if (host_.copy.value() <= 0) {
    throw std::logic_error("a host copy priced without a host (ComputeModel::set_host)");
  }
  return transfer_time(copy.bytes, host_.copy) + Seconds(kHostCopyUs * 1e-6);
}

Seconds ComputeModel::time(const OpPayload& payload, Phase phase) const {
  if (const auto* g = std::get_if<Gemm>(&payload)) return time(*g, phase);
  if (const auto* k = std::get_if<MemoryKernel>(&payload)) return time(*k, phase);
  if (const auto* h = std::get_if<HostCopy>(&payload)) return time(*h);
  return Seconds(0.0);
}

}  // namespace commscale::predict
