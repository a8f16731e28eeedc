#include "hw/gpu_spec.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/figure_io.hpp"

namespace commscale::hw {
namespace {

constexpr const char* kNoPrice = "the GPU file gives no price";
constexpr std::array<std::string_view, 3> kMarketNames = {"datacenter", "professional", "geforce"};
constexpr std::array<std::string_view, kMathRateCount> kRateKeys = {
    "fp64_TFLOPS",
    "fp64_tensor_TFLOPS",
    "fp32_TFLOPS",
    "tf32_tensor_TFLOPS",
    "fp16_tensor_fp16acc_TFLOPS",
    "fp16_tensor_fp32acc_TFLOPS",
    "bf16_tensor_fp32acc_TFLOPS",
    "fp8_tensor_TFLOPS",
    "fp8_tensor_fp16acc_TFLOPS",
};

Market parse_market(JsonObject& top) {
  const std::string text = top.string("market");
  for (std::size_t i = 0; i < kMarketNames.size(); ++i) {
    if (kMarketNames[i] == text) return static_cast<Market>(i);
  }
  throw InputError(top.where("market"), fmt::format("\"{}\" is not a market", text),
                   "datacenter, professional or geforce");
}

NvlinkSpec parse_nvlink(JsonObject& parent, const SourceCitations& c) {
  JsonObject o = parent.object("nvlink");
  NvlinkSpec n;
  n.links = read_integer_figure(o, "links", c, Nullable::kNo, 0, 64);
  const Nullable when_none = *n.links.value == 0 ? Nullable::kYes : Nullable::kNo;
  n.generation = read_integer_figure(o, "generation", c, when_none, 1, 9);
  n.link_bw = as_gbps(read_number_figure(o, "link_bw_GBps", c, when_none, 1e-9));
  o.finish();
  return n;
}

PcieSpec parse_pcie(JsonObject& parent, const ReferenceData& ref) {
  JsonObject o = parent.object("pcie");
  PcieSpec p;
  p.generation = read_integer_figure(o, "generation", ref.citations, Nullable::kNo, 1, 7);
  p.lanes = read_integer_figure(o, "lanes", ref.citations, Nullable::kNo, 1, 32);
  (void)ref.pcie_bw(*p.generation.value, *p.lanes.value, o.where("generation"));  // a generation we know
  o.finish();
  return p;
}

void parse_rates(JsonObject& top, const SourceCitations& c, GpuSpec& gpu) {
  for (std::size_t i = 0; i < kMathRateCount; ++i) {
    // Every part has FP32 and FP16 tensor math with FP32 accumulate; the others may be absent (null).
    const auto rate = static_cast<MathRate>(i);
    const bool required = rate == MathRate::kFp32 || rate == MathRate::kFp16Fp32Acc;
    gpu.rates[i] =
        from_tflops(read_number_figure(top, kRateKeys[i], c, required ? Nullable::kNo : Nullable::kYes, 1e-9));
  }
}

// Most a price may be: a guard against a slipped digit, far above any GPU's.
constexpr double kMaxPurchaseUsd = 1e6;
constexpr double kMaxRentalUsdPerHour = 1e3;

// A price figure, which a file may leave out (no price then, and its source says so); a value must be
// more than 0 and at most `max`.
Figure<double> read_price(JsonObject& top, std::string_view key, const SourceCitations& c, double max,
                          std::string_view unit) {
  if (!top.has(key)) return Figure<double>{std::nullopt, Provenance{SourceTag::kUnverified, kNoPrice, {}}};
  Figure<double> f = read_number_figure(top, key, c, Nullable::kYes, 1e-9);
  if (f.value && *f.value > max) {
    throw InputError(top.where(key) + ".value", fmt::format("is {:g}", *f.value),
                     fmt::format("more than 0 and at most {:g} {}", max, unit));
  }
  return f;
}

std::vector<std::string> parse_notes(JsonObject& top) {
  return top.has("notes") ? top.strings("notes") : std::vector<std::string>{};
}

}  // namespace

std::string_view name(Market m) noexcept { return kMarketNames[static_cast<std::size_t>(m)]; }
std::string_view rate_key(MathRate r) noexcept { return kRateKeys[static_cast<std::size_t>(r)]; }

MathRate gemm_rate(DataType dtype, DataType accumulate) noexcept {
  switch (dtype) {
    case DataType::kBFloat16:
      return MathRate::kBf16Fp32Acc;
    case DataType::kFloat16:
      return accumulate == DataType::kFloat16 ? MathRate::kFp16Fp16Acc : MathRate::kFp16Fp32Acc;
    case DataType::kFloat64:
      return MathRate::kFp64Tensor;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return accumulate == DataType::kFloat16 ? MathRate::kFp8Fp16Acc : MathRate::kFp8Tensor;
    default:
      return MathRate::kFp32;
  }
}

GBps NvlinkSpec::bw_per_direction() const noexcept {
  if (!links.value || *links.value == 0 || !link_bw.value) return GBps(0.0);
  return *link_bw.value * static_cast<double>(*links.value);
}

bool GpuSpec::halves_fp32_accumulate() const noexcept {
  const auto& fp16acc = rate(MathRate::kFp16Fp16Acc).value;
  const auto& fp32acc = rate(MathRate::kFp16Fp32Acc).value;
  return fp16acc && fp32acc && *fp32acc < *fp16acc;
}

Figure<GBps> GpuSpec::pcie_bw(const ReferenceData& ref) const {
  return ref.pcie_bw(*pcie.generation.value, *pcie.lanes.value, file + ": pcie");
}

GpuSpec parse_gpu(const nlohmann::json& json, const std::string& file, const ReferenceData& ref) {
  const SourceCitations& c = ref.citations;
  JsonObject top(json, file, "");
  read_file_header(top, "gpu");
  GpuSpec gpu;
  gpu.file = file;
  gpu.name = top.string("name");
  if (gpu.name.empty()) throw InputError(top.where("name"), "is empty", "the catalog name, e.g. a100-sxm4-80gb");
  gpu.display_name = top.string("display_name");
  gpu.market = parse_market(top);
  gpu.architecture = read_string_figure(top, "architecture", c, Nullable::kNo);
  gpu.compute_capability = read_string_figure(top, "compute_capability", c, Nullable::kNo);
  gpu.sm_count = read_integer_figure(top, "sm_count", c, Nullable::kNo, 1, 10'000);
  gpu.boost_clock_MHz = read_number_figure(top, "boost_clock_MHz", c, Nullable::kYes, 1.0);
  parse_rates(top, c, gpu);
  gpu.memory = from_gib(read_number_figure(top, "memory_GiB", c, Nullable::kNo, 1e-9));
  gpu.memory_type = read_string_figure(top, "memory_type", c, Nullable::kYes);
  gpu.memory_bw = as_gbps(read_number_figure(top, "memory_bw_GBps", c, Nullable::kNo, 1e-9));
  gpu.l2 = from_mib(read_number_figure(top, "l2_MiB", c, Nullable::kYes));
  gpu.nvlink = parse_nvlink(top, c);
  gpu.pcie = parse_pcie(top, ref);
  gpu.p2p_over_pcie = read_bool_figure(top, "p2p_over_pcie", c, Nullable::kYes);
  gpu.tdp_W = read_number_figure(top, "tdp_W", c, Nullable::kYes, 1.0);
  gpu.launch_price_USD = read_number_figure(top, "launch_price_USD", c, Nullable::kYes);
  gpu.launch_date = read_string_figure(top, "launch_date", c, Nullable::kYes);
  gpu.purchase_price_USD = read_price(top, "purchase_price_USD", c, kMaxPurchaseUsd, "USD");
  gpu.rental_USD_per_gpu_hour = read_price(top, "rental_USD_per_gpu_hour", c, kMaxRentalUsdPerHour, "USD per GPU-hour");
  gpu.notes = parse_notes(top);
  top.finish();
  return gpu;
}

GpuSpec load_gpu_file(const std::filesystem::path& file, const ReferenceData& ref) {
  return parse_gpu(read_json_file(file), file.string(), ref);
}

nlohmann::ordered_json gpu_to_json(const GpuSpec& gpu) {
  nlohmann::ordered_json out;
  out["schema_version"] = kSchemaVersion;
  out["kind"] = "gpu";
  out["name"] = gpu.name;
  out["display_name"] = gpu.display_name;
  out["market"] = name(gpu.market);
  out["architecture"] = figure_json(gpu.architecture);
  out["compute_capability"] = figure_json(gpu.compute_capability);
  out["sm_count"] = figure_json(gpu.sm_count);
  out["boost_clock_MHz"] = figure_json(gpu.boost_clock_MHz);
  for (std::size_t i = 0; i < kMathRateCount; ++i)
    out[std::string(kRateKeys[i])] = figure_json(gpu.rates[i], to_tflops);
  out["memory_GiB"] = figure_json(gpu.memory, to_gib);
  out["memory_type"] = figure_json(gpu.memory_type);
  out["memory_bw_GBps"] = figure_json(gpu.memory_bw, [](GBps b) { return b.value(); });
  out["l2_MiB"] = figure_json(gpu.l2, to_mib);
  nlohmann::ordered_json& nvlink = out["nvlink"];
  nvlink["generation"] = figure_json(gpu.nvlink.generation);
  nvlink["links"] = figure_json(gpu.nvlink.links);
  nvlink["link_bw_GBps"] = figure_json(gpu.nvlink.link_bw, [](GBps b) { return b.value(); });
  nlohmann::ordered_json& pcie = out["pcie"];
  pcie["generation"] = figure_json(gpu.pcie.generation);
  pcie["lanes"] = figure_json(gpu.pcie.lanes);
  out["p2p_over_pcie"] = figure_json(gpu.p2p_over_pcie);
  out["tdp_W"] = figure_json(gpu.tdp_W);
  out["launch_price_USD"] = figure_json(gpu.launch_price_USD);
  out["launch_date"] = figure_json(gpu.launch_date);
  out["purchase_price_USD"] = figure_json(gpu.purchase_price_USD);
  out["rental_USD_per_gpu_hour"] = figure_json(gpu.rental_USD_per_gpu_hour);
  if (!gpu.notes.empty()) out["notes"] = gpu.notes;
  return out;
}

}  // namespace commscale::hw
