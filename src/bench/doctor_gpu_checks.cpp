// Rank 0's judgement of one GPU's measurement, and the JSON that carries a measurement to it.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/doctor_gpu.hpp"
#include "core/json_optional.hpp"

namespace commscale {
namespace {

using predict::CheckStatus;
using predict::DoctorCheck;
using predict::Expected;

// The reasons that mean something is wrong with the GPU or its cooling, not that it works hard: a
// power cap under a sustained GEMM is how these GPUs run.
constexpr std::uint64_t kBadReasons = kClockHwSlowdown | kClockSwThermal | kClockHwThermal | kClockHwPowerBrake;

DoctorCheck base(const GpuMeasurement& m, const char* check) {
  DoctorCheck c;
  c.phase = "gpu";
  c.check = check;
  c.subject = describe_rank(m.placement);
  c.place = place_of(m.placement);
  return c;
}

DoctorCheck with_expectation(DoctorCheck c, const std::optional<Expected>& e) {
  if (!e) return c;
  c.expected = e->value;
  c.basis = e->basis;
  return c;
}

DoctorCheck identity(const GpuMeasurement& m, const predict::DoctorExpectations& expect) {
  DoctorCheck c = base(m, "identity");
  c.detail =
      fmt::format("{}, {:.0f} GiB, compute capability {}.{}, UUID {}", m.placement.gpu_name, m.placement.gpu_memory_GiB,
                  m.placement.compute_capability / 10, m.placement.compute_capability % 10, m.placement.gpu_uuid);
  bool matches = false;
  const std::optional<Expected> e = expect.gpu_model(m.placement.gpu_name, &matches);
  if (!e) return c;  // info: nothing to compare the model with
  c.basis = e->basis;
  c.status = matches ? CheckStatus::kPass : CheckStatus::kFail;
  return c;
}

DoctorCheck pcie(const GpuMeasurement& m, const predict::DoctorExpectations& expect, double min_ratio) {
  DoctorCheck c = base(m, "pcie_link");
  c.unit = "GB/s";
  c.place.link = "PCIe";
  if (!m.pcie_loaded.known()) {
    c.status = CheckStatus::kNotRun;
    c.detail = m.nvml_status.empty() ? "NVML gave no current PCIe link" : "no NVML: " + m.nvml_status;
    return c;
  }
  int generation = m.pcie_max.generation;
  int width = m.pcie_max.width;
  std::optional<Expected> e = expect.pcie_link(m.placement.device, &generation, &width);
  std::string basis = e ? e->basis : "the link this GPU and its slot can run at (NVML maximum)";
  c.measured = expect.pcie_GBps(m.pcie_loaded.generation, m.pcie_loaded.width);
  c.expected = expect.pcie_GBps(generation, width);
  c.basis = std::move(basis);
  c.detail =
      fmt::format("gen{} x{} while the GEMM ran (NVML maximum gen{} x{}; expected gen{} x{})", m.pcie_loaded.generation,
                  m.pcie_loaded.width, m.pcie_max.generation, m.pcie_max.width, generation, width);
  return predict::judge(std::move(c), min_ratio);
}

DoctorCheck nvlink(const GpuMeasurement& m, const predict::DoctorExpectations& expect) {
  DoctorCheck c = base(m, "nvlink_links");
  c.unit = "links";
  c.place.link = "NVLink";
  if (!m.nvml_status.empty()) {
    c.status = CheckStatus::kNotRun;
    c.detail = "no NVML: " + m.nvml_status;
    return c;
  }
  c.measured = m.nvlinks_active;
  c = with_expectation(std::move(c), expect.nvlink_links(m.placement.device));
  c.detail = fmt::format("{} of the {} links NVML reports are active", m.nvlinks_active, m.nvlinks_present);
  if (!c.expected) return c;
  // Links are whole: every expected link must be up (a missing one takes 1/18 of an H200's NVLink).
  c.threshold = 1.0;
  c.status = m.nvlinks_active >= *c.expected ? CheckStatus::kPass : CheckStatus::kFail;
  return c;
}

DoctorCheck clocks(const GpuMeasurement& m) {
  DoctorCheck c = base(m, "clocks");
  c.unit = "MHz";
  if (!m.nvml_status.empty() || !m.clock_reasons) {
    c.status = CheckStatus::kNotRun;
    c.detail =
        m.nvml_status.empty() ? "NVML gave no clock event reasons while the GEMM ran" : "no NVML: " + m.nvml_status;
    return c;
  }
  if (m.sm_clock_MHz) c.measured = *m.sm_clock_MHz;
  if (m.sm_clock_max_MHz) c.expected = *m.sm_clock_max_MHz;
  c.basis = "NVML's maximum SM clock; judged by the reasons NVML gives, not the ratio";
  const std::uint64_t bad = *m.clock_reasons & kBadReasons;
  c.status = bad != 0 ? CheckStatus::kFail : CheckStatus::kPass;
  c.detail =
      fmt::format("median SM clock over {} samples while the GEMM ran; reasons seen: {}{}{}{}", m.samples,
                  describe_clock_reasons(*m.clock_reasons), m.power_W ? fmt::format("; {:.0f} W", *m.power_W) : "",
                  m.power_limit_W ? fmt::format(" of {:.0f} W", *m.power_limit_W) : "",
                  m.temperature_C ? fmt::format("; up to {} C", *m.temperature_C) : "");
  return c;
}

DoctorCheck ecc(const GpuMeasurement& m) {
  DoctorCheck c = base(m, "ecc");
  const GpuErrorState& e = m.errors;
  if (!m.nvml_status.empty()) return predict::not_run("gpu", "ecc", c.subject, "no NVML: " + m.nvml_status);
  std::vector<std::string> bad;
  if (e.ecc_uncorrected_volatile.value_or(0) > 0) {
    bad.push_back(fmt::format("{} uncorrected ECC errors since the driver loaded", *e.ecc_uncorrected_volatile));
  }
  if (e.retirement_pending.value_or(false)) bad.push_back("a retired page waits for the next driver load");
  if (e.remap_pending.value_or(false)) bad.push_back("a remapped row waits for the next GPU reset");
  if (e.remap_failed.value_or(false)) bad.push_back("row remapping failed (no spare rows left)");
  const auto text = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string("n/a"); };
  c.detail = fmt::format(
      "ECC {}; volatile uncorrected {}, corrected {}; aggregate uncorrected {}; retired pages {} single-bit, {} "
      "double-bit; remapped rows {} correctable, {} uncorrectable",
      e.ecc_enabled ? (*e.ecc_enabled ? "on" : "OFF") : "n/a", text(e.ecc_uncorrected_volatile),
      text(e.ecc_corrected_volatile), text(e.ecc_uncorrected_aggregate), text(e.retired_pages_single_bit),
      text(e.retired_pages_double_bit), text(e.remapped_rows_correctable), text(e.remapped_rows_uncorrectable));
  if (!bad.empty()) {
    c.status = CheckStatus::kFail;
    std::string first = bad.front();
    for (std::size_t i = 1; i < bad.size(); ++i) first += "; " + bad[i];
    c.detail = first + ". " + c.detail;
  } else {
    c.status =
        e.ecc_uncorrected_volatile || e.remap_pending || e.retirement_pending ? CheckStatus::kPass : CheckStatus::kInfo;
  }
  return c;
}

}  // namespace

DoctorCheck xid_check(const GpuMeasurement& m) {
  DoctorCheck c = base(m, "xid");
  if (!m.nvml_status.empty()) return predict::not_run("gpu", "xid", c.subject, "no NVML: " + m.nvml_status);
  if (!m.xids) return predict::not_run("gpu", "xid", c.subject, "NVML cannot watch XID events on this GPU");
  c.measured = static_cast<double>(m.xids->size());
  c.unit = "events";
  c.status = m.xids->empty() ? CheckStatus::kPass : CheckStatus::kFail;
  std::string list;
  for (std::uint64_t x : *m.xids) list += fmt::format("{}XID {}", list.empty() ? "" : ", ", x);
  c.detail = m.xids->empty() ? "no XID event while doctor ran" : list + " while doctor ran";
  return c;
}

namespace {

DoctorCheck gemm(const GpuMeasurement& m, const predict::DoctorExpectations& expect, double min_ratio) {
  DoctorCheck c = base(m, "gemm");
  if (!m.gemm_status.empty()) return predict::not_run("gpu", "gemm", c.subject, m.gemm_status);
  c.unit = "TFLOP/s";
  c.measured = m.gemm_TFLOPS;
  c = with_expectation(std::move(c), expect.gemm_TFLOPS(m.gemm_type));
  c.detail = m.gemm_what;
  return predict::judge(std::move(c), min_ratio);
}

}  // namespace

std::vector<DoctorCheck> gpu_checks(const GpuMeasurement& m, const predict::DoctorExpectations& expect,
                                    double min_ratio) {
  return {identity(m, expect),       pcie(m, expect, min_ratio), nvlink(m, expect), clocks(m), ecc(m),
          gemm(m, expect, min_ratio)};
}

void to_json(nlohmann::json& out, const GpuMeasurement& m) {
  const GpuErrorState& e = m.errors;
  out = {{"placement", m.placement},
         {"nvml_status", m.nvml_status},
         {"pcie_max", {m.pcie_max.generation, m.pcie_max.width}},
         {"pcie_loaded", {m.pcie_loaded.generation, m.pcie_loaded.width}},
         {"nvlinks_present", m.nvlinks_present},
         {"nvlinks_active", m.nvlinks_active},
         {"sm_clock_MHz", optional_json(m.sm_clock_MHz)},
         {"sm_clock_max_MHz", optional_json(m.sm_clock_max_MHz)},
         {"clock_reasons", optional_json(m.clock_reasons)},
         {"power_W", optional_json(m.power_W)},
         {"power_limit_W", optional_json(m.power_limit_W)},
         {"temperature_C", optional_json(m.temperature_C)},
         {"samples", m.samples},
         {"ecc_enabled", optional_json(e.ecc_enabled)},
         {"ecc_uncorrected_volatile", optional_json(e.ecc_uncorrected_volatile)},
         {"ecc_corrected_volatile", optional_json(e.ecc_corrected_volatile)},
         {"ecc_uncorrected_aggregate", optional_json(e.ecc_uncorrected_aggregate)},
         {"retired_pages_single_bit", optional_json(e.retired_pages_single_bit)},
         {"retired_pages_double_bit", optional_json(e.retired_pages_double_bit)},
         {"retirement_pending", optional_json(e.retirement_pending)},
         {"remapped_rows_correctable", optional_json(e.remapped_rows_correctable)},
         {"remapped_rows_uncorrectable", optional_json(e.remapped_rows_uncorrectable)},
         {"remap_pending", optional_json(e.remap_pending)},
         {"remap_failed", optional_json(e.remap_failed)},
         {"xids", optional_json(m.xids)},
         {"gemm_status", m.gemm_status},
         {"gemm_what", m.gemm_what},
         {"gemm_type", name(m.gemm_type)},
         {"gemm_TFLOPS", m.gemm_TFLOPS},
         {"hog_sms", m.hog_sms}};
}

void from_json(const nlohmann::json& in, GpuMeasurement& m) {
  GpuErrorState& e = m.errors;
  m.placement = in.at("placement").get<RankPlacement>();
  m.nvml_status = in.at("nvml_status").get<std::string>();
  m.pcie_max = {in.at("pcie_max").at(0).get<int>(), in.at("pcie_max").at(1).get<int>()};
  m.pcie_loaded = {in.at("pcie_loaded").at(0).get<int>(), in.at("pcie_loaded").at(1).get<int>()};
  m.nvlinks_present = in.at("nvlinks_present").get<int>();
  m.nvlinks_active = in.at("nvlinks_active").get<int>();
  read_optional(in, "sm_clock_MHz", m.sm_clock_MHz);
  read_optional(in, "sm_clock_max_MHz", m.sm_clock_max_MHz);
  read_optional(in, "clock_reasons", m.clock_reasons);
  read_optional(in, "power_W", m.power_W);
  read_optional(in, "power_limit_W", m.power_limit_W);
  read_optional(in, "temperature_C", m.temperature_C);
  m.samples = in.at("samples").get<int>();
  read_optional(in, "ecc_enabled", e.ecc_enabled);
  read_optional(in, "ecc_uncorrected_volatile", e.ecc_uncorrected_volatile);
  read_optional(in, "ecc_corrected_volatile", e.ecc_corrected_volatile);
  read_optional(in, "ecc_uncorrected_aggregate", e.ecc_uncorrected_aggregate);
  read_optional(in, "retired_pages_single_bit", e.retired_pages_single_bit);
  read_optional(in, "retired_pages_double_bit", e.retired_pages_double_bit);
  read_optional(in, "retirement_pending", e.retirement_pending);
  read_optional(in, "remapped_rows_correctable", e.remapped_rows_correctable);
  read_optional(in, "remapped_rows_uncorrectable", e.remapped_rows_uncorrectable);
  read_optional(in, "remap_pending", e.remap_pending);
  read_optional(in, "remap_failed", e.remap_failed);
  read_optional(in, "xids", m.xids);
  m.gemm_status = in.at("gemm_status").get<std::string>();
  m.gemm_what = in.at("gemm_what").get<std::string>();
  m.gemm_type = parse_data_type(in.at("gemm_type").get<std::string>(), "gemm_type");
  m.gemm_TFLOPS = in.at("gemm_TFLOPS").get<double>();
  m.hog_sms = in.at("hog_sms").get<int>();
}

}  // namespace commscale
