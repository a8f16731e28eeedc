#include "predict/gpu_support.hpp"

#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "predict/nccl_tables.hpp"

namespace commscale::predict {
namespace {

constexpr int kFlashAttentionMinMajor = 8;  // FlashAttention 2: Ampere (sm80) and later

std::string architecture(const hw::GpuSpec& gpu) {
  return fmt::format("{}, compute capability {}", gpu.architecture.value.value_or("unknown architecture"),
                     gpu.compute_capability.value.value_or("unknown"));
}

}  // namespace

bool gpu_trains_in(const hw::GpuSpec& gpu, DataType dtype) {
  return gpu.rate(hw::gemm_rate(dtype)).value.has_value();
}

bool gpu_has_fp8(const hw::GpuSpec& gpu) { return gpu.rate(hw::MathRate::kFp8Tensor).value.has_value(); }

bool gpu_runs_flash_attention(const hw::GpuSpec& gpu) {
  return parse_capability(gpu.compute_capability.value.value_or("0.0")).major >= kFlashAttentionMinMajor;
}

std::vector<std::string> fit_to_gpu(const hw::GpuSpec& gpu, TrainingChoices& c) {
  std::vector<std::string> notes;
  if (c.fp8 != Fp8Recipe::kNone && !gpu_has_fp8(gpu) && c.fp8_where_supported) {
    notes.push_back(
        fmt::format("{} ({}) has no FP8 tensor cores: trained in {}, not FP8 (--fp8 {} applies where the "
                    "GPU has them)",
                    gpu.name, architecture(gpu), name(c.dtype), name(c.fp8)));
    c.fp8 = Fp8Recipe::kNone;
  }
  if (c.fp8 != Fp8Recipe::kNone && !gpu_has_fp8(gpu)) {
    throw InputError("--fp8",
                     fmt::format("{} on {} ({}), which has no FP8 tensor cores ({} is null in its file)", name(c.fp8),
                                 gpu.name, architecture(gpu), hw::rate_key(hw::MathRate::kFp8Tensor)),
                     "--fp8 none on this GPU (FP8 needs compute capability 8.9 or later: Ada, Hopper, Blackwell)");
  }
  if (!gpu_trains_in(gpu, c.dtype)) {
    const std::string_view key = hw::rate_key(hw::gemm_rate(c.dtype));
    if (!c.dtype_flag.empty()) {
      throw InputError(c.dtype_flag,
                       fmt::format("{} on {} ({}), which has no {} rate ({} is null in its file)", name(c.dtype),
                                   gpu.name, architecture(gpu), name(c.dtype), key),
                       "fp16 on this GPU (--dtype fp16)");
    }
    notes.push_back(fmt::format("{} has no {} rate ({}): trained in fp16 instead of the default {} (--dtype fp16 "
                                "to say so)",
                                gpu.name, name(c.dtype), architecture(gpu), name(c.dtype)));
    c.dtype = DataType::kFloat16;
  }
  if (c.flash_attention && !gpu_runs_flash_attention(gpu)) {
    if (!c.flash_flag.empty()) {
      throw InputError(c.flash_flag,
                       fmt::format("fused (flash) attention on {} ({}): FlashAttention's kernels need compute "
                                   "capability 8.0 or later",
                                   gpu.name, architecture(gpu)),
                       "--no-flash-attn on this GPU");
    }
    notes.push_back(fmt::format("{} ({}) cannot run FlashAttention, which needs compute capability 8.0 or later: "
                                "attention unfused (--no-flash-attn to say so)",
                                gpu.name, architecture(gpu)));
    c.flash_attention = false;
  }
  return notes;
}

}  // namespace commscale::predict
