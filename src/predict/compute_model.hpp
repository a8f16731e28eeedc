#pragma once

// Time of compute ops on one GPU: a roofline (dense tensor rate for the dtype and accumulate mode,
// memory bandwidth) times a shape-dependent efficiency, which a calibration profile can replace.
//
// GEMM: time = max(flops / (peak x efficiency), bytes / (memory bw x memory efficiency)) + call time.
// A flash-attention product (Gemm::flash) of a framework that runs one fused kernel counts no bytes for
// the sequence x keys matrix the kernel keeps on chip, and takes its efficiency from a profile's attention
// rows (those of its dropout, Gemm::flash_dropout, where there are some); where the framework runs each
// product as a GEMM call (AttentionIssue::kPerProduct, commscale's executor) the matrix goes through HBM
// like any operand (QK^T and dP write it, PV, dV, dQ and dK read it) and the GEMM rows price it. Without
// that matrix's bytes calibrate's batched PV-shaped rows (seq x head x keys) took a median 1.48-1.55x the
// catalog's time on three H200 runs; with them 1.06-1.10x, beside batch-1 GEMMs' 1.11-1.14x (rows above
// 20 GFLOP; results/h200x1-2026-12-03d/flash_products.md). With a profile, a GEMM call takes a fixed
// part (the fastest row, at most kGemmCallUs) plus its work at the rows' marginal rate, and is not priced
// below the profile's fastest GEMM row; a share of a fused kernel has neither.
// Default efficiency (no calibration) = ceiling x tiles x depth, where the ceiling, the call time, the
// memory kernels' efficiency and fixed time and the copy fraction come per architecture family from
// topologies/compute.json (hw/compute_defaults.hpp; a GPU of no listed family takes its default_family,
// noted). The constants below are Hopper's entry, which the file must reproduce (tests/unit):
//   tiles = m n batch split / (waves x SMs x 128^2), waves = ceil(units / SMs), units = tiles of 128 x 128
//       x split: wave and edge quantization of the output tiles over the GPU's SMs (catalog sm_count);
//       split = min(floor(SMs / tiles), floor(k / 256)) where the tiles fill fewer than all SMs (at least
//       1): cuBLAS then splits k so that more SMs work, each on its share of k (split-K);
//   depth = k' / (k' + 128) over the share k' = k / split: a tile's fixed prologue and epilogue;
//   kGemmEfficiency 0.80 and the call time kGemmCallUs 6 us, with the 256-deep split and 128 of depth:
//       fitted (launch/studies/fit_defaults.py) to the 882 bf16 GEMM rows of two `calibrate`
//       runs on one H200 (cuBLASLt, the call the step makes: results/h200x1-2026-12-02b/run-2/cal.json,
//       results/h200x1-2026-12-03/run-4/cal.json;
//       m, n, k from 256 to 16384 and attention's batched shapes): median |log error| 4.7%, 90th
//       percentile 18% (the form before, 0.70 and 2 us without split-K: 17% and 63%). Large square GEMMs
//       run at 780-815 TFLOP/s there (0.79-0.82); PyTorch 2.11's GEMMs at LLM shapes on the same GPU,
//       600-713, were the previous source. Those rows were later found to be timed on a probe pool whose
//       operands had degenerated towards inf and NaN (results/h200x1-2026-12-03c): calibrate's rows since
//       run 650-672 TFLOP/s at 8192^3 (1637-1692 us against these defaults' 1461), and the 132 bf16 rows
//       above 100 GFLOP of its second run take a median 1.09x these defaults' time. Not refitted: the same form
//       refits those rows to 0.71 and 8 us (launch/studies/fit_defaults_clean.py: median 5.0%,
//       p90 16.5%), but commscale's own steps then need the H200's clock curve, and even with it they
//       miss 10% at one point (that README, section 7): its GEMMs run 5-20% faster in a step
//       than back to back (section 2), and 0.80 / 6 us stays the executor's figure.
//   PyTorch's GEMMs (every framework but commscale: AttentionIssue::kPerKernel) run at the clean rows'
//       rate, in and out of a step (sections 1 and 5: randn 8192^3 1621 us, its rows 1637-1692), so
//       they take the refit, kPytorchGemmEfficiency 0.71 and kPytorchGemmCallUs 8 us (compute.json's
//       pytorch_gemm_*): eager PyTorch catalog-only 3.6% median, 8.4% largest over 11 runs, against 4.4%
//       and 9.6% with the executor's figures (section 7's catalog B).
// Eager PyTorch's kernels (KernelSet::kEager), its SDPA call included, have catalog defaults of their
// own, fitted to launch/pytorch_kernels.py's rows (compute_model.cpp).
// Memory kernels: time = (read + written) / (memory bw x kMemoryKernelEfficiency) + kMemoryKernelUs,
//   0.78 and 4.5 us: fitted to the 26 rows of the step's memory kernel (read half, write half; 1 MiB to
//   4 GiB) of the same two calibrate runs: median |log error| 3.8%, largest 13% (the form before, a
//   copy's 4273 / 4800 and 2 us: 25% and 72%). The GEMM's memory roofline keeps a device-to-device
//   copy's fraction, kMemoryEfficiency = 4273 / 4800 (a device-to-device copy on one H200 under PyTorch
//   2.11, read + write, over the catalog's 4800 GB/s). Calibrated times replace both.
// Peak rates: bf16 -> the catalog's BF16 tensor FP32-accumulate rate, fp16 -> FP16 tensor with the op's
// accumulate type (GeForce halves FP32 accumulate; the catalog says so), fp32 -> non-tensor FP32 (no
// TF32, as cuBLAS computes FP32 by default). A GPU without the rate (V100 and bf16) falls back to
// FP16 with FP32 accumulate, noted.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "hw/compute_defaults.hpp"
#include "hw/gpu_spec.hpp"
#include "program/host_costs.hpp"
#include "program/op.hpp"

namespace commscale::predict {

struct CalibrationProfile;

inline constexpr double kGemmEfficiency = 0.80;
inline constexpr double kGemmTile = 128.0;
inline constexpr double kGemmDepthOverhead = 128.0;
inline constexpr double kGemmSplitDepth = 256.0;
inline constexpr double kGemmCallUs = 6.0;
inline constexpr double kPytorchGemmEfficiency = 0.71;
inline constexpr double kPytorchGemmCallUs = 8.0;
inline constexpr double kMemoryEfficiency = 4273.0 / 4800.0;
inline constexpr double kMemoryKernelEfficiency = 0.78;
inline constexpr double kMemoryKernelUs = 4.5;

// The catalog's dense rate for GEMMs of `dtype` accumulating in `accumulate`, or nullopt when the GPU
// has none (then `fallback_note` says what was used instead, if anything).
[[nodiscard]] std::optional<FlopsPerSecond> dense_rate(const hw::GpuSpec& gpu, DataType dtype, DataType accumulate,
                                                       std::string* fallback_note = nullptr);

// What one rank's host gives an offloaded optimizer update (MemoryKernelKind::kHostOptimizer): the
// copies over its GPU's PCIe link and the CPU's update rate, its share of the node's cores and memory
// bandwidth. make_target sets it from the cluster (host_side below).
struct HostSide {
  GBps pcie;                         // pinned copies, each direction
  GBps copy;                         // a HostCopy op's rate: pcie, or less where the rank's share of host memory is
  double update_params_per_s = 0.0;  // CPU Adam
  std::string source;                // how they were derived, for the prediction's notes
};

// A HostCopy's fixed part: one cudaMemcpyAsync from pinned memory issued and its DMA started (assumed, as
// for small copies on PCIe 4.0 and 5.0 hosts; not yet measured here).
inline constexpr double kHostCopyUs = 8.0;

class ComputeModel {
 public:
  // `calibration` may be null; it is used only when it carries over to `gpu` (same family).
  // `attention`: how the framework runs flash attention; a fused kernel (kPerKernel) is priced from the
  // profile's attention rows, separate GEMM calls (kPerProduct, commscale's executor) from its GEMM rows.
  ComputeModel(hw::GpuSpec gpu, const CalibrationProfile* calibration,
               AttentionIssue attention = AttentionIssue::kPerKernel);

  // `phase` picks a flash-attention product's calibration rows (forward or backward kernel).
  [[nodiscard]] Seconds time(const Gemm& gemm, Phase phase = Phase::kForward) const;
  // `phase` picks a calibration's rows for the kernel's kind in that direction (CALIBRATION.md).
  [[nodiscard]] Seconds time(const MemoryKernel& kernel, Phase phase = Phase::kForward) const;
  // A copy between GPU and host memory (offload): its bytes at the host's copy rate (HostSide::copy).
  [[nodiscard]] Seconds time(const HostCopy& copy) const;
  [[nodiscard]] Seconds time(const OpPayload& payload, Phase phase = Phase::kForward) const;  // 0 for communication
  // The fraction of the dense peak the GEMM's math runs at (before the memory roofline).
  [[nodiscard]] double efficiency(const Gemm& gemm, Phase phase = Phase::kForward) const;
  // The rate MFU is measured against for a model of this dtype (FP32 accumulate).
  [[nodiscard]] FlopsPerSecond peak(DataType dtype, DataType accumulate = DataType::kFloat32) const;
  [[nodiscard]] double default_efficiency(const Gemm& gemm) const;
  // Without a profile's row: the default, times SDPA's factor for a product of eager PyTorch's SDPA call
  // (compute_model.cpp).
  [[nodiscard]] double catalog_efficiency(const Gemm& gemm, Phase phase) const;

  // An offloaded update (kHostOptimizer) is priced at this host's copies and update rate: its bytes over
  // PCIe, then its parameters at the CPU's rate, one after the other (DeepSpeed overlaps the gradients'
  // copy with the backward bucket by bucket: an upper bound by that copy); host copies at its copy rate.
  void set_host(HostSide host) { host_ = std::move(host); }
  [[nodiscard]] const HostSide& host() const noexcept { return host_; }

  [[nodiscard]] const hw::GpuSpec& gpu() const noexcept { return gpu_; }
  [[nodiscard]] bool calibrated() const noexcept { return calibration_ != nullptr; }
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }
  // The family defaults used without a profile's rows (topologies/compute.json).
  [[nodiscard]] const hw::ComputeDefaults& defaults() const noexcept { return defaults_; }

 private:
  // The calibration's efficiency for the GEMM: a flash product of a fused kernel from the attention rows
  // (the kernel's FLOPs over its measured time; each product takes its share), else from the GEMM rows;
  // nullopt without a profile or rows for it.
  struct Measured {
    std::optional<double> efficiency;
    bool attention_share = false;  // from the attention rows: a share of one fused kernel's time
  };
  [[nodiscard]] Measured measured(const Gemm& gemm, Phase phase) const;

  void use_family_defaults();

  hw::GpuSpec gpu_;
  HostSide host_;
  hw::ComputeDefaults defaults_;
  double gemm_ceiling_ = kGemmEfficiency;
  Seconds gemm_call_ = microseconds(kGemmCallUs);
  double memory_kernel_efficiency_ = kMemoryKernelEfficiency;
  Seconds memory_kernel_fixed_ = microseconds(kMemoryKernelUs);
  double copy_efficiency_ = kMemoryEfficiency;
  const CalibrationProfile* calibration_ = nullptr;  // only when it applies to gpu_
  AttentionIssue attention_ = AttentionIssue::kPerKernel;
  // By dtype: the profile's fastest GEMM row, the least a GEMM call takes (0 without a row), found once.
  std::array<Seconds, kDataTypeCount> gemm_floor_{};
  // By dtype: the part of a GEMM call's time that does not grow with its work: the fastest row, at most
  // the catalog's call time kGemmCallUs (a profile whose fastest row is a large GEMM, or fp32's 256^3 at
  // 46 us on CUDA cores, is not all fixed cost). On the H200s, 256^3 bf16 takes 6.1-7.4 us, 0.03 us of
  // it work at the peak rate. Small batched calls grow from it with their work, not in proportion to
  // their FLOPs: q05's 512 x 320 x 64 x 14 products ran 8.0 us in a step, the rows of batch 8 and 16 7.0
  // and 8.3, and efficiency carried over from the nearest rows priced them at 6.8
  // (results/h200x1-2026-12-03e section 1b).
  std::array<Seconds, kDataTypeCount> gemm_fixed_{};
  std::vector<std::string> notes_;
};

}  // namespace commscale::predict
