// Report sections for `commscale bench`, `p2p` and `topo` files.

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/run_context.hpp"
#include "report/bench_reporters.hpp"
#include "report/charts.hpp"
#include "report/p2p_reporters.hpp"
#include "report/topo_reporters.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

RunContext context_of(const ResultFile& f) {
  RunContext c;
  from_json(root_of(f).at("context"), c);
  return c;
}

std::string env_value(const RunContext& context, const char* name) {
  const auto it = context.environment.find(name);
  return it == context.environment.end() ? std::string() : it->second;
}

std::string first_host(const RunContext& context) { return context.hosts.empty() ? std::string() : context.hosts.front(); }

std::set<std::string> bench_bus_ids(const RunContext& context) {
  std::set<std::string> ids;
  for (const RankPlacement& r : context.ranks) {
    if (!r.pci_bus_id.empty()) ids.insert(r.pci_bus_id);
  }
  return ids;
}

P2pReport p2p_of(const ResultFile& f) {
  P2pReport r;
  p2p_from_json(root_of(f), r);
  return r;
}

// The lowest line rate among the p2p file's GPU pairs that the bench used (all pairs when none match),
// or, with `staged`, among its host links.
std::optional<std::pair<double, std::string>> p2p_line_rate(const P2pReport& p2p, const std::set<std::string>& ids,
                                                            bool staged) {
  std::optional<std::pair<double, std::string>> best;
  const auto consider = [&](const BandwidthResult& measurement, const std::string& link) {
    if (!measurement.measured || !measurement.line_rate) return;
    const double rate = measurement.line_rate->value();
    if (!best || rate < best->first) best = std::pair{rate, link};
  };
  if (staged) {
    for (const HostResult& h : p2p.hosts) consider(h.h2d, "staged over " + (h.link.empty() ? "PCIe" : h.link));
    return best;
  }
  const auto used = [&](int g) {
    return ids.empty() || (g >= 0 && static_cast<std::size_t>(g) < p2p.gpus.size() &&
                           ids.count(p2p.gpus[static_cast<std::size_t>(g)].pci_bus_id) > 0);
  };
  bool any_used = false;
  for (const PairResult& p : p2p.pairs) any_used = any_used || (used(p.src) && used(p.dst));
  for (const PairResult& p : p2p.pairs) {
    if (p.path != PeerPath::kP2p || !p.ce_uni.measured) continue;
    if (any_used && !(used(p.src) && used(p.dst))) continue;
    consider(p.ce_uni, p.link.empty() ? "P2P" : p.link);
  }
  return best;
}

struct SeriesKey {
  std::string collective;
  std::string name;
  bool operator<(const SeriesKey& o) const { return std::tie(collective, name) < std::tie(o.collective, o.name); }
};

// A sweep whose groups are one rank each moved no data between ranks: every "collective" was a
// copy inside one device (or host), so its busbw is no bus bandwidth.
bool one_rank_groups(const JsonAt& root) {
  if (!root.has("config")) return false;
  BenchSetup setup;
  from_json(root.at("config"), setup);
  return setup.group_size == 1;
}

std::vector<BenchRow> bench_rows(const JsonAt& root) {
  std::vector<BenchRow> rows;
  for (const JsonAt& r : root.array("results")) from_json(r, rows.emplace_back());
  return rows;
}

std::string one_rank_note(const std::string& file) {
  return fmt::format(
      "{}: one rank per group, so this run measured local copies only (no communication between ranks, no "
      "link): its algbw and busbw are copy rates within one GPU (or host memory), not bus bandwidth, and no "
      "bus-bandwidth "
      "chart is drawn for it. Run it on two or more ranks to measure a link; its rows are in the table.",
      file);
}

std::string cell(double v, const char* format = "{:.2f}") { return fmt::format(fmt::runtime(format), v); }

}  // namespace

CeilingChoice bench_ceiling(const ResultFile& bench, const ResultRefs& p2p, const ReportOptions& options) {
  const RunContext context = context_of(bench);
  const bool p2p_off = env_value(context, "NCCL_P2P_DISABLE") == "1";
  const bool shm_off = env_value(context, "NCCL_SHM_DISABLE") == "1";
  if (context.backend == "cpu") {
    return {std::nullopt, "no ceiling: the CPU backend (MPI over host memory) has no GPU link"};
  }
  if (context.hosts.size() > 1) {
    return {std::nullopt, "no ceiling: the job spans several hosts and the network's line rate is not in the inputs"};
  }
  if (p2p_off && shm_off) {
    return {std::nullopt,
            "no ceiling: NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 (sockets); the inputs do not give the "
            "socket path's line rate"};
  }
  const std::string host = first_host(context);
  for (const ResultFile* p : p2p) {
    if (first_host(context_of(*p)) != host) continue;
    const auto rate = p2p_line_rate(p2p_of(*p), bench_bus_ids(context), p2p_off);
    if (rate)
      return {rate->first, fmt::format("{} line rate {} GB/s per direction (from {})", rate->second,
                                       cell(rate->first, "{:.0f}"), p->label)};
  }
  if (options.line_rate_GBps && !p2p_off) {
    const std::string what = options.line_rate_label.empty() ? "stated with --line-rate" : options.line_rate_label;
    return {options.line_rate_GBps,
            fmt::format("line rate {} GB/s per direction ({})", cell(*options.line_rate_GBps, "{:.0f}"), what)};
  }
  if (p2p_off) {
    return {std::nullopt,
            "no ceiling: NCCL_P2P_DISABLE=1 (host-staged path) and no p2p file of this host gives the "
            "PCIe line rate"};
  }
  return {std::nullopt,
          "no ceiling: the bench file does not record which link joins its GPUs; add a `commscale p2p -J` "
          "file from the same host, or --line-rate"};
}

std::vector<HtmlSection> bench_sections(const ResultRefs& bench, const ResultRefs& p2p, const ReportOptions& options) {
  std::vector<std::string> collectives;  // in order of first appearance
  std::map<SeriesKey, ChartSeries> series;
  std::map<std::string, std::vector<std::string>> series_order;
  std::map<std::string, HtmlTable> tables;
  std::map<std::string, std::map<std::string, std::optional<double>>> ceilings;  // collective -> label -> value
  std::map<std::string, std::set<std::string>> local_files;  // collective -> files of one-rank groups
  for (const ResultFile* f : bench) {
    const JsonAt root = root_of(*f);
    const std::vector<BenchRow> rows = bench_rows(root);
    std::set<std::string> combos;
    for (const BenchRow& r : rows)
      combos.insert(fmt::format("{}/{}/{}", name(r.type), r.op ? name(*r.op) : "", r.root.value_or(0)));
    const CeilingChoice ceiling = bench_ceiling(*f, p2p, options);
    const bool local = one_rank_groups(root);
    for (const BenchRow& r : rows) {
      const std::string collective(name(r.collective));
      if (std::find(collectives.begin(), collectives.end(), collective) == collectives.end())
        collectives.push_back(collective);
      std::string series_name = f->label;
      if (combos.size() > 1) {
        series_name += fmt::format(" {}", name(r.type));
        if (r.op) series_name += fmt::format(" {}", name(*r.op));
        if (r.root) series_name += fmt::format(" root {}", *r.root);
      }
      const PlacementResult& oop = r.out_of_place;
      const auto size = static_cast<double>(r.size.count());
      if (local) {
        local_files[collective].insert(f->label);
        series_name += " (one rank: local copies)";
      } else {
        const SeriesKey key{collective, series_name};
        if (!series.count(key)) series_order[collective].push_back(series_name);
        ChartSeries& s = series[key];
        s.name = series_name;
        s.points.emplace_back(size, oop.busbw.value());
        ceilings[collective][ceiling.label] = ceiling.GBps;
      }
      HtmlTable& t = tables[collective];
      const PlacementResult& ip = r.in_place;
      t.rows.push_back({series_name, short_bytes(size), cell(oop.time_us), cell(oop.algbw.value()),
                        cell(oop.busbw.value()), cell(ip.time_us), cell(ip.busbw.value()),
                        fmt::format("{}", oop.wrong + ip.wrong)});
    }
  }
  std::vector<HtmlSection> out;
  for (const std::string& c : collectives) {
    LineChart chart;
    chart.title = fmt::format("{}: bus bandwidth against message size", c);
    chart.x_label = "message size (nccl-tests' size column)";
    chart.y_label = "busbw, GB/s (out of place)";
    chart.x_scale = AxisScale::kLog2;
    chart.x_bytes = true;
    for (const std::string& name : series_order[c]) chart.series.push_back(series[{c, name}]);
    HtmlSection s;
    s.id = "bench-" + c;
    s.title = fmt::format("bench: {}", c);
    for (const std::string& file : local_files[c]) s.paragraphs.push_back(one_rank_note(file));
    if (!chart.series.empty()) {
      s.paragraphs.push_back(
          "Bus bandwidth from the time of all timed iterations together, as nccl-tests derives it "
          "(src/bench/BUSBW.md); one line per bench file.");
      for (const auto& [label, value] : ceilings[c]) {
        if (value) {
          chart.ceilings.push_back({*value, label});
          s.paragraphs.push_back("Ceiling (dashed): " + label + ".");
        } else {
          s.paragraphs.push_back(label + ".");
        }
      }
      s.charts.push_back(line_chart_svg(chart));
    }
    HtmlTable& t = tables[c];
    t.caption = fmt::format("{}: every row", c);
    t.header = {"series", "size", "time µs", "algbw GB/s", "busbw GB/s", "in-place time µs", "in-place busbw GB/s",
                "#wrong"};
    s.tables.push_back(t);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<HtmlSection> p2p_sections(const ResultRefs& p2p) {
  std::vector<HtmlSection> out;
  for (const ResultFile* f : p2p) {
    const P2pReport report = p2p_of(*f);
    std::vector<std::string> names;
    for (std::size_t g = 0; g < report.gpus.size(); ++g) names.push_back(fmt::format("GPU {}", g));
    HtmlSection s;
    s.id = "p2p-" + std::to_string(out.size());
    s.title = "p2p: " + f->label;
    s.paragraphs.push_back(
        "Copy bandwidth between every pair of GPUs (src/bench/P2P.md): rows are the source, columns "
        "the destination; grey where not measured.");
    HtmlTable t{"every pair",
                {"src", "dst", "path", "link", "CE GB/s", "of line rate", "CE bidir GB/s", "SM GB/s", "latency ns"},
                {}};
    const auto bw = [](const BandwidthResult& r) -> std::optional<double> {
      return r.measured ? std::optional(r.bw.value()) : std::nullopt;
    };
    const auto text = [](const std::optional<double>& v, const char* format = "{:.1f}") {
      return v ? fmt::format(fmt::runtime(format), *v) : std::string("n/a");
    };
    for (const bool copy_engine : {true, false}) {
      Heatmap h;
      h.title = fmt::format("{}: {} bandwidth", f->label, copy_engine ? "copy-engine" : "kernel (SM) copy");
      h.unit = "GB/s";
      h.rows = names;
      h.columns = names;
      h.values.assign(names.size(), std::vector<std::optional<double>>(names.size()));
      bool any = false;
      for (const PairResult& p : report.pairs) {
        const auto src = static_cast<std::size_t>(p.src);
        const auto dst = static_cast<std::size_t>(p.dst);
        if (src >= names.size() || dst >= names.size()) continue;
        h.values[src][dst] = bw(copy_engine ? p.ce_uni : p.sm_uni);
        any = any || h.values[src][dst].has_value();
      }
      if (any || copy_engine) s.charts.push_back(heatmap_svg(h));
    }
    for (const PairResult& p : report.pairs) {
      const std::optional<double> fraction = p.ce_uni.fraction_of_line_rate();
      std::optional<double> latency;
      if (p.latency.measured) latency = p.latency.stats.median;
      t.rows.push_back({fmt::format("GPU {}", p.src), fmt::format("GPU {}", p.dst), std::string(path_name(p.path)),
                        p.link, text(bw(p.ce_uni)), fraction ? fmt::format("{:.0f}%", 100 * *fraction) : "n/a",
                        text(bw(p.ce_bi)), text(bw(p.sm_uni)), text(latency, "{:.0f}")});
    }
    s.tables.push_back(std::move(t));
    HtmlTable hosts{"host memory and each GPU", {"GPU", "link", "host→GPU GB/s", "GPU→host GB/s", "bidir GB/s"}, {}};
    for (const HostResult& h : report.hosts) {
      hosts.rows.push_back({fmt::format("GPU {}", h.gpu), h.link, text(bw(h.h2d)), text(bw(h.d2h)), text(bw(h.bidir))});
    }
    if (!hosts.rows.empty()) s.tables.push_back(std::move(hosts));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<HtmlSection> topo_sections(const ResultRefs& topo) {
  std::vector<HtmlSection> out;
  for (const ResultFile* f : topo) {
    const TopoFile t = topo_from_json(root_of(*f));
    HtmlSection s;
    s.id = "topo-" + std::to_string(out.size());
    s.title = "topo: " + f->label;
    s.paragraphs.push_back(
        fmt::format("Host {}: {} GPUs, driver {}, CUDA {}.", t.host, t.gpus.size(), t.gpu_driver, t.cuda_driver));
    HtmlTable gpus{"GPUs", {"device", "name", "PCI bus", "catalog GPU"}, {}};
    for (const DiscoveredGpu& g : t.gpus) gpus.rows.push_back({fmt::format("{}", g.device), g.name, g.pci_bus_id, g.catalog_gpu});
    HtmlTable pairs{"pairs", {"a", "b", "link", "NVLink lanes", "P2P access"}, {}};
    for (const TopoPair& p : t.pairs) {
      pairs.rows.push_back({fmt::format("{}", p.a), fmt::format("{}", p.b), p.link, fmt::format("{}", p.nvlink_lanes),
                            p.facts.can_access_peer ? "true" : "false"});
    }
    s.tables.push_back(std::move(gpus));
    if (!pairs.rows.empty()) s.tables.push_back(std::move(pairs));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace commscale
