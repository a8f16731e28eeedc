// `hw list` and `hw show` for GPUs.

#include <fmt/format.h>

#include "report/hw_describe.hpp"
#include "hw/figure_io.hpp"
#include "core/text_table.hpp"

namespace commscale::hw {
namespace {

// A figure's value in the unit of its key, "-" when it has none, its tag appended unless P.
template <class T, class Convert>
std::string cell(const Figure<T>& f, Convert c) {
  const std::string value = f.value ? fmt::format("{}", c(*f.value)) : "-";
  return f.provenance.tag == SourceTag::kPrimary ? value : fmt::format("{} ({})", value, tag_letter(f.provenance.tag));
}
template <class T>
std::string cell(const Figure<T>& f) {
  return cell(f, [](const T& v) { return v; });
}
std::string bool_cell(const Figure<bool>& f) {
  return cell(f, [](bool v) { return v ? "yes" : "no"; });
}
double gbps(GBps b) { return b.value(); }

std::string nvlink_cell(const NvlinkSpec& n) {
  if (!n.links.value || *n.links.value == 0) return cell(n.links, [](int) { return "none"; });
  const std::string total =
      fmt::format("{} x {:g} = {:g}", *n.links.value, n.link_bw.value->value(), n.bw_per_direction().value());
  return n.link_bw.provenance.tag == SourceTag::kPrimary
             ? total
             : fmt::format("{} ({})", total, tag_letter(n.link_bw.provenance.tag));
}

struct Row {
  std::string key;
  std::string unit;
  std::string value;
  const Provenance* provenance;
};

template <class T, class Convert>
Row row(std::string key, std::string unit, const Figure<T>& f, Convert c) {
  return {std::move(key), std::move(unit), f.value ? fmt::format("{}", c(*f.value)) : "none", &f.provenance};
}
template <class T>
Row row(std::string key, std::string unit, const Figure<T>& f) {
  return row(std::move(key), std::move(unit), f, [](const T& v) { return v; });
}

std::vector<Row> gpu_rows(const GpuSpec& g) {
  const auto tf = [](FlopsPerSecond r) { return fmt::format("{:g}", to_tflops(r)); };
  std::vector<Row> rows = {row("architecture", "", g.architecture), row("compute capability", "", g.compute_capability),
                           row("SMs", "", g.sm_count), row("boost clock", "MHz", g.boost_clock_MHz)};
  for (std::size_t i = 0; i < kMathRateCount; ++i) {
    std::string key(rate_key(static_cast<MathRate>(i)));
    key.resize(key.size() - std::string_view("_TFLOPS").size());
    rows.push_back(row(key, "TFLOPS", g.rates[i], tf));
  }
  const auto more = {row("memory", "GiB", g.memory, to_gib),
                     row("memory type", "", g.memory_type),
                     row("memory bandwidth", "GB/s", g.memory_bw, gbps),
                     row("L2", "MiB", g.l2, to_mib),
                     row("NVLink generation", "", g.nvlink.generation),
                     row("NVLink links", "", g.nvlink.links),
                     row("NVLink per link", "GB/s/dir", g.nvlink.link_bw, gbps),
                     row("PCIe generation", "", g.pcie.generation),
                     row("PCIe lanes", "", g.pcie.lanes),
                     row("P2P over PCIe", "", g.p2p_over_pcie, [](bool v) { return v ? "yes" : "no"; }),
                     row("TDP", "W", g.tdp_W),
                     row("launch price", "USD", g.launch_price_USD),
                     row("launch date", "", g.launch_date)};
  rows.insert(rows.end(), more.begin(), more.end());
  return rows;
}

}  // namespace

std::string format_gpu_list(const std::vector<GpuSpec>& gpus) {
  TextTable t({"GPU", "architecture", "CC", "BF16 TFLOPS>", "FP16acc TFLOPS>", "memory GiB>", "mem GB/s>",
               "NVLink GB/s/dir", "PCIe", "P2P", "TDP W>", "price USD>"});
  for (const GpuSpec& g : gpus) {
    const auto tf = [](FlopsPerSecond r) { return fmt::format("{:g}", to_tflops(r)); };
    t.add({g.name, cell(g.architecture), cell(g.compute_capability), cell(g.rate(MathRate::kBf16Fp32Acc), tf),
           cell(g.rate(MathRate::kFp16Fp16Acc), tf), cell(g.memory, to_gib), cell(g.memory_bw, gbps),
           nvlink_cell(g.nvlink), fmt::format("gen{} x{}", *g.pcie.generation.value, *g.pcie.lanes.value),
           bool_cell(g.p2p_over_pcie), cell(g.tdp_W), cell(g.launch_price_USD)});
  }
  return t.render();
}

std::string format_gpu(const GpuSpec& g, const ReferenceData& ref) {
  std::string out = fmt::format("{} ({}, {})\n  file: {}\n", g.display_name, g.name, name(g.market), g.file);
  if (g.halves_fp32_accumulate()) out += "  GeForce: FP16/BF16 tensor math with FP32 accumulate runs at half rate\n";
  out += fmt::format("  PCIe per direction: {:g} GB/s\n\n", g.pcie_bw(ref).value->value());
  TextTable t({"figure", "value", "unit", "tag", "source"});
  for (const Row& r : gpu_rows(g)) {
    const std::string note = r.provenance->note.empty() ? "" : fmt::format(" (note: {})", r.provenance->note);
    t.add({r.key, r.value, r.unit, std::string(tag_letter(r.provenance->tag)), r.provenance->source + note});
  }
  out += t.render("  ");
  for (const std::string& n : g.notes) out += fmt::format("  note: {}\n", n);
  return out;
}

}  // namespace commscale::hw
