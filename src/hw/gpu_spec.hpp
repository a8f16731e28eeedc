#pragma once

// One GPU of the catalog (topologies/gpus/*.json): compute rates, memory, interconnect, power and
// price, each figure with its source. Rates are dense (no sparsity), in FLOP/s.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/units.hpp"
#include "hw/figure.hpp"
#include "hw/reference.hpp"

namespace commscale::hw {

// GeForce parts run FP16/BF16 tensor math with FP32 accumulate at half the FP16-accumulate rate;
// data-centre and professional parts do not.
enum class Market : std::uint8_t { kDatacenter, kProfessional, kGeforce };
[[nodiscard]] std::string_view name(Market m) noexcept;  // datacenter professional geforce

// The dense math rates of the catalog, one key each ("fp16_tensor_fp32acc_TFLOPS", ...).
enum class MathRate : std::uint8_t {
  kFp64,
  kFp64Tensor,
  kFp32,  // non-tensor FP32
  kTf32Tensor,
  kFp16Fp16Acc,  // FP16 tensor, FP16 accumulate
  kFp16Fp32Acc,  // FP16 tensor, FP32 accumulate: what mixed-precision training uses
  kBf16Fp32Acc,  // BF16 tensor, FP32 accumulate
  kFp8Tensor,    // FP8 tensor, FP32 accumulate (what TransformerEngine's GEMMs ask for)
  kFp8Fp16Acc,   // FP8 tensor, FP16 accumulate: twice the FP32-accumulate rate on GeForce, the same elsewhere
};
inline constexpr std::size_t kMathRateCount = 9;
[[nodiscard]] std::string_view rate_key(MathRate r) noexcept;  // the file key, with its _TFLOPS unit
// The rate a GEMM of inputs `dtype` accumulating in `accumulate` runs at: BF16 and FP16 on tensor cores
// (FP16 accumulate only when asked), FP8 (E4M3 or E5M2) on FP8 tensor cores (FP16 accumulate only when asked:
// GeForce runs it twice as fast), FP64 on FP64 tensor cores, anything else at the non-tensor FP32 rate.
[[nodiscard]] MathRate gemm_rate(DataType dtype, DataType accumulate = DataType::kFloat32) noexcept;

struct NvlinkSpec {
  Figure<int> generation;
  Figure<int> links;     // 0 when the part has no NVLink
  Figure<GBps> link_bw;  // one link, one direction
  // All links together, one direction (0 without NVLink).
  [[nodiscard]] GBps bw_per_direction() const noexcept;
  bool operator==(const NvlinkSpec&) const = default;
};

struct PcieSpec {
  Figure<int> generation;
  Figure<int> lanes;
  bool operator==(const PcieSpec&) const = default;
};

struct GpuSpec {
  std::string name;          // catalog name, the file's stem: "a100-sxm4-80gb"
  std::string display_name;  // "NVIDIA A100 SXM4 80GB"
  Market market = Market::kDatacenter;
  std::string file;  // where it was loaded from

  Figure<std::string> architecture;        // "Ampere GA100"
  Figure<std::string> compute_capability;  // "8.0"
  Figure<int> sm_count;
  Figure<double> boost_clock_MHz;
  std::array<Figure<FlopsPerSecond>, kMathRateCount> rates;  // by MathRate; empty value: no such unit
  Figure<Bytes> memory;  // the vendor's "80 GB" read as GiB (see topologies/README.md)
  Figure<std::string> memory_type;
  Figure<GBps> memory_bw;
  Figure<Bytes> l2;  // the vendor's "40 MB" read as MiB
  NvlinkSpec nvlink;
  PcieSpec pcie;
  Figure<bool> p2p_over_pcie;  // whether the stock driver allows P2P over PCIe; empty value: unclear
  Figure<double> tdp_W;
  Figure<double> launch_price_USD;
  Figure<std::string> launch_date;  // "2022-10"
  // What one GPU costs today, the two ways people pay for it (predict/economics.hpp), each with its
  // source and month: bought (street or used-market price) and rented (on-demand USD per GPU-hour, host
  // and energy included). Empty when the file gives none.
  Figure<double> purchase_price_USD;
  Figure<double> rental_USD_per_gpu_hour;
  std::vector<std::string> notes;

  [[nodiscard]] const Figure<FlopsPerSecond>& rate(MathRate r) const { return rates[static_cast<std::size_t>(r)]; }
  // True when FP32-accumulate tensor math runs below the FP16-accumulate rate (GeForce).
  [[nodiscard]] bool halves_fp32_accumulate() const noexcept;
  // The per-direction bandwidth of the GPU's own PCIe link, from the PCIe table.
  [[nodiscard]] Figure<GBps> pcie_bw(const ReferenceData& ref) const;

  bool operator==(const GpuSpec&) const = default;
};

// Parses a GPU file already read as JSON; `file` is the name used in messages.
[[nodiscard]] GpuSpec parse_gpu(const nlohmann::json& json, const std::string& file, const ReferenceData& ref);
// Reads and parses a GPU file.
[[nodiscard]] GpuSpec load_gpu_file(const std::filesystem::path& file, const ReferenceData& ref);
// The file form of a GPU (parse_gpu of it gives back the same GpuSpec).
[[nodiscard]] nlohmann::ordered_json gpu_to_json(const GpuSpec& gpu);

}  // namespace commscale::hw
