#pragma once

// Time of compute ops on one GPU: a roofline (dense tensor rate for the dtype and accumulate mode,
// memory bandwidth) times a shape-dependent efficiency, which a calibration profile can replace.
//
// GEMM: time = max(flops / (peak x efficiency), bytes / (memory bw x memory efficiency)) + overhead.
// A flash-attention product (Gemm::flash) counts no bytes for the sequence x keys matrix the fused
// kernel keeps on chip, and takes its efficiency from a profile's attention rows where there are some.
// Default efficiency (no calibration) = kGemmEfficiency x tiles x depth, where
//   kGemmEfficiency 0.70: HARDWARE.md, one H200, bf16 GEMMs at LLM shapes (8192 x {5120..20480} x
//       {5120..20480}) ran at 600-713 TFLOP/s of 989.5 (0.61-0.72) and 8192^3 at 783 (0.79); 0.70 with the
//       two factors below puts those shapes at 655-685 TFLOP/s;
//   tiles = m n batch / (waves x SMs x 128^2), waves = ceil(tiles of 128 x 128 / SMs): wave and edge
//       quantization of 128 x 128 output tiles over the GPU's SMs (catalog sm_count);
//   depth = k / (k + 128): a tile's fixed prologue and epilogue, as long as one 128-deep slice of k
//       (an assumption; calibration replaces it).
// Memory kernels: time = (read + written) / (memory bw x kMemoryEfficiency) + overhead, with
//   kMemoryEfficiency = 4273 / 4800: HARDWARE.md, H200 device-to-device copy (read + write) against the
//       catalog's 4800 GB/s.
// Overhead kKernelOverhead 2 µs per kernel: an assumption for kernels issued back to back on a stream
//   (launch gap and minimum kernel time), unmeasured here; calibrated times already contain it.
// Peak rates: bf16 -> the catalog's BF16 tensor FP32-accumulate rate, fp16 -> FP16 tensor with the op's
// accumulate type (GeForce halves FP32 accumulate; the catalog says so), fp32 -> non-tensor FP32 (no
// TF32, as cuBLAS computes FP32 by default). A GPU without the rate (V100 and bf16) falls back to
// FP16 with FP32 accumulate, noted.

#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "hw/gpu_spec.hpp"
#include "program/host_costs.hpp"
#include "program/op.hpp"

namespace commscale::predict {

struct CalibrationProfile;

inline constexpr double kGemmEfficiency = 0.70;
inline constexpr double kGemmTile = 128.0;
inline constexpr double kGemmDepthOverhead = 128.0;
inline constexpr double kMemoryEfficiency = 4273.0 / 4800.0;
inline constexpr double kKernelOverheadUs = 2.0;

// The catalog's dense rate for GEMMs of `dtype` accumulating in `accumulate`, or nullopt when the GPU
// has none (then `fallback_note` says what was used instead, if anything).
[[nodiscard]] std::optional<FlopsPerSecond> dense_rate(const hw::GpuSpec& gpu, DataType dtype, DataType accumulate,
                                                       std::string* fallback_note = nullptr);

class ComputeModel {
 public:
  // `calibration` may be null; it is used only when it carries over to `gpu` (same family).
  // `attention`: how the framework runs flash attention; a fused kernel (kPerKernel) is priced from the
  // profile's attention rows, separate GEMM calls (kPerProduct, commscale's executor) from its GEMM rows.
  ComputeModel(hw::GpuSpec gpu, const CalibrationProfile* calibration,
               AttentionIssue attention = AttentionIssue::kPerKernel);

  // `phase` picks a flash-attention product's calibration rows (forward or backward kernel).
  [[nodiscard]] Seconds time(const Gemm& gemm, Phase phase = Phase::kForward) const;
  // `phase` picks a calibration's rows for the kernel's kind in that direction (calibration.hpp).
  [[nodiscard]] Seconds time(const MemoryKernel& kernel, Phase phase = Phase::kForward) const;
  [[nodiscard]] Seconds time(const OpPayload& payload, Phase phase = Phase::kForward) const;  // 0 for communication
  // The fraction of the dense peak the GEMM's math runs at (before the memory roofline).
  [[nodiscard]] double efficiency(const Gemm& gemm, Phase phase = Phase::kForward) const;
  // The rate MFU is measured against for a model of this dtype (FP32 accumulate).
  [[nodiscard]] FlopsPerSecond peak(DataType dtype, DataType accumulate = DataType::kFloat32) const;
  [[nodiscard]] double default_efficiency(const Gemm& gemm) const;

  [[nodiscard]] const hw::GpuSpec& gpu() const noexcept { return gpu_; }
  [[nodiscard]] bool calibrated() const noexcept { return calibration_ != nullptr; }
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }

 private:
  // The calibration's efficiency for the GEMM: a flash product of a fused kernel from the attention rows
  // (the kernel's FLOPs over its measured time; each product takes its share), else from the GEMM rows;
  // nullopt without a profile or rows for it.
  struct Measured {
    std::optional<double> efficiency;
    bool attention_share = false;  // from the attention rows: a share of one fused kernel's time
  };
  [[nodiscard]] Measured measured(const Gemm& gemm, Phase phase) const;

  hw::GpuSpec gpu_;
  const CalibrationProfile* calibration_ = nullptr;  // only when it applies to gpu_
  AttentionIssue attention_ = AttentionIssue::kPerKernel;
  std::vector<std::string> notes_;
};

}  // namespace commscale::predict
