// The JSON and CSV forms of `commscale p2p`.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "report/p2p_reporters.hpp"

namespace commscale {
namespace {

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json bandwidth_json(const BandwidthResult& r) {
  if (!r.measured) return nullptr;
  const Summary& t = r.stats;
  return {{"bw_GBps", r.bw.value()},
          {"bw_min_GBps", r.bw_at(t.max).value()},
          {"bw_max_GBps", r.bw_at(t.min).value()},
          {"line_rate_GBps", optional_number(r.line_rate ? std::optional<double>(r.line_rate->value()) : std::nullopt)},
          {"fraction_of_line_rate", optional_number(r.fraction_of_line_rate())},
          {"bytes_per_copy", r.bytes_per_copy.count()},
          {"wrong_bytes", r.wrong_bytes},
          {"samples", summary_us_json(t)},
          {"samples_us", r.samples_us}};
}

nlohmann::json latency_json(const LatencyResult& r) {
  if (!r.measured) return nullptr;
  const Summary& t = r.stats;
  return {{"latency_ns", t.median},
          {"wrong_bytes", r.wrong_bytes},
          {"samples",
           {{"min_ns", t.min},
            {"median_ns", t.median},
            {"mean_ns", t.mean},
            {"p99_ns", t.p99},
            {"max_ns", t.max},
            {"stddev_ns", t.stddev},
            {"cv", t.cv}}},
          {"samples_ns", r.samples_ns}};
}

nlohmann::json config_json(const P2pReport& r) {
  const P2pOptions& o = r.options;
  nlohmann::json tests = nlohmann::json::array();
  if (o.copy_engine) tests.push_back("ce");
  if (o.sm) tests.push_back("sm");
  if (o.latency) tests.push_back("latency");
  if (o.host) tests.push_back("host");
  return {{"size_bytes", o.size.count()},
          {"copies_per_sample", o.copies},
          {"samples", o.iters},
          {"warmup_batches", o.warmup},
          {"latency_accesses", o.latency_accesses},
          {"tests", tests},
          {"no_p2p", o.no_p2p},
          {"timing", r.timing}};
}

// One CSV line; `bw` or `latency` may be null.
std::string csv_line(std::string_view what, const std::string& src, const std::string& dst, std::string_view path,
                     const std::string& link, const BandwidthResult* bw, const LatencyResult* latency) {
  std::string bw_cells = ",,,,,,,";
  if (bw != nullptr) {
    const std::optional<double> f = bw->fraction_of_line_rate();
    bw_cells = fmt::format("{},{:.4f},{:.4f},{:.4f},{:.3f},{:.3f},{},{}", bw->bytes_per_copy.count(), bw->bw.value(),
                           bw->bw_at(bw->stats.max).value(), bw->bw_at(bw->stats.min).value(), bw->stats.median,
                           bw->stats.p99, bw->line_rate ? fmt::format("{:.4f}", bw->line_rate->value()) : "",
                           f ? fmt::format("{:.4f}", *f) : "");
  }
  const std::string latency_cells =
      latency != nullptr ? fmt::format("{:.2f},{:.2f}", latency->stats.median, latency->stats.p99) : ",";
  const std::size_t samples = bw != nullptr ? bw->samples_us.size() : latency->samples_ns.size();
  const std::uint64_t wrong = bw != nullptr ? bw->wrong_bytes : latency->wrong_bytes;
  return fmt::format("{},{},{},{},{},{},{},{},{}\n", what, src, dst, path, link, samples, bw_cells, latency_cells,
                     wrong);
}

}  // namespace

std::string_view path_name(PeerPath p) { return p == PeerPath::kP2p ? "p2p" : "staged"; }

namespace {

BandwidthResult bandwidth_from_json(const JsonAt& in, std::string_view key) {
  BandwidthResult r;
  if (!in.has(key)) return r;
  const JsonAt b = in.at(key);
  r.measured = true;
  r.bw = GBps(b.number("bw_GBps"));
  if (const std::optional<double> line = b.optional_number("line_rate_GBps")) r.line_rate = GBps(*line);
  r.bytes_per_copy = Bytes(static_cast<std::uint64_t>(b.number_or("bytes_per_copy", 0.0)));
  r.wrong_bytes = static_cast<std::uint64_t>(b.number_or("wrong_bytes", 0.0));
  return r;
}

LatencyResult latency_from_json(const JsonAt& in) {
  LatencyResult r;
  if (!in.has("latency")) return r;
  const JsonAt l = in.at("latency");
  r.measured = true;
  r.stats.median = l.number("latency_ns");
  r.wrong_bytes = static_cast<std::uint64_t>(l.number_or("wrong_bytes", 0.0));
  return r;
}

PeerPath path_from_json(const JsonAt& in) {
  const std::string path = in.string_or("path", "p2p");
  if (path != "p2p" && path != "staged")
    throw InputError(in.at("path").where(), fmt::format("is \"{}\"", path), "p2p or staged");
  return path == "p2p" ? PeerPath::kP2p : PeerPath::kStaged;
}

}  // namespace

void p2p_from_json(const JsonAt& in, P2pReport& r) {
  r = P2pReport{};
  if (in.has("context")) from_json(in.at("context"), r.context);
  for (const JsonAt& g : in.array("gpus")) {
    const double index = g.number("index");
    if (index != static_cast<double>(r.gpus.size()))
      throw InputError(g.at("index").where(), fmt::format("is {}", index), fmt::format("{}, its place in the list", r.gpus.size()));
    r.gpus.push_back({static_cast<int>(g.number_or("device", index)), g.string_or("name", ""), g.string_or("pci_bus_id", "")});
  }
  r.timing = in.has("config") ? in.at("config").string_or("timing", "") : "";
  for (const JsonAt& p : in.array("pairs")) {
    PairResult pair;
    pair.src = static_cast<int>(p.number("src"));
    pair.dst = static_cast<int>(p.number("dst"));
    pair.path = path_from_json(p);
    pair.why_staged = p.string_or("why_staged", "");
    pair.link = p.string_or("link", "");
    pair.ce_uni = bandwidth_from_json(p, "ce_unidirectional");
    pair.ce_bi = bandwidth_from_json(p, "ce_bidirectional");
    pair.sm_uni = bandwidth_from_json(p, "sm_unidirectional");
    pair.sm_bi = bandwidth_from_json(p, "sm_bidirectional");
    pair.latency = latency_from_json(p);
    r.pairs.push_back(std::move(pair));
  }
  for (const JsonAt& h : in.array("host")) {
    HostResult host;
    host.gpu = static_cast<int>(h.number("gpu"));
    host.link = h.string_or("link", "");
    host.h2d = bandwidth_from_json(h, "host_to_gpu");
    host.d2h = bandwidth_from_json(h, "gpu_to_host");
    host.bidir = bandwidth_from_json(h, "bidirectional");
    host.latency = latency_from_json(h);
    r.hosts.push_back(std::move(host));
  }
}

nlohmann::json p2p_json(const P2pReport& r) {
  nlohmann::json gpus = nlohmann::json::array();
  for (std::size_t g = 0; g < r.gpus.size(); ++g) {
    gpus.push_back(
        {{"index", g}, {"device", r.gpus[g].device}, {"name", r.gpus[g].name}, {"pci_bus_id", r.gpus[g].pci_bus_id}});
  }
  nlohmann::json pairs = nlohmann::json::array();
  for (const PairResult& p : r.pairs) {
    pairs.push_back({{"src", p.src},
                     {"dst", p.dst},
                     {"path", path_name(p.path)},
                     {"why_staged", p.why_staged.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.why_staged)},
                     {"link", p.link},
                     {"ce_unidirectional", bandwidth_json(p.ce_uni)},
                     {"ce_bidirectional", bandwidth_json(p.ce_bi)},
                     {"sm_unidirectional", bandwidth_json(p.sm_uni)},
                     {"sm_bidirectional", bandwidth_json(p.sm_bi)},
                     {"latency", latency_json(p.latency)}});
  }
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostResult& h : r.hosts) {
    hosts.push_back({{"gpu", h.gpu},
                     {"link", h.link},
                     {"host_to_gpu", bandwidth_json(h.h2d)},
                     {"gpu_to_host", bandwidth_json(h.d2h)},
                     {"bidirectional", bandwidth_json(h.bidir)},
                     {"latency", latency_json(h.latency)}});
  }
  return {{"schema_version", kP2pSchemaVersion},
          {"kind", "commscale-p2p"},
          {"complete", true},
          {"context", r.context},
          {"config", config_json(r)},
          {"gpus", gpus},
          {"pairs", pairs},
          {"host", hosts},
          {"notes", r.notes},
          {"summary", {{"wrong_bytes", r.wrong_bytes()}, {"passed", r.passed()}}}};
}

std::string p2p_csv(const P2pReport& r) {
  std::string out =
      "measurement,src,dst,path,link,samples,bytes_per_copy,bw_GBps,bw_min_GBps,bw_max_GBps,time_median_us,"
      "time_p99_us,line_rate_GBps,fraction_of_line_rate,latency_median_ns,latency_p99_ns,wrong_bytes\n";
  const auto gpu = [](int g) { return fmt::format("gpu{}", g); };
  for (const PairResult& p : r.pairs) {
    const std::string src = gpu(p.src);
    const std::string dst = gpu(p.dst);
    const std::string_view path = path_name(p.path);
    if (p.ce_uni.measured) out += csv_line("ce_unidirectional", src, dst, path, p.link, &p.ce_uni, nullptr);
    if (p.sm_uni.measured) out += csv_line("sm_unidirectional", src, dst, path, p.link, &p.sm_uni, nullptr);
    if (p.ce_bi.measured && p.src < p.dst)
      out += csv_line("ce_bidirectional", src, dst, path, p.link, &p.ce_bi, nullptr);
    if (p.sm_bi.measured && p.src < p.dst)
      out += csv_line("sm_bidirectional", src, dst, path, p.link, &p.sm_bi, nullptr);
    if (p.latency.measured) out += csv_line("latency", src, dst, path, p.link, nullptr, &p.latency);
  }
  for (const HostResult& h : r.hosts) {
    const std::string g = gpu(h.gpu);
    if (h.h2d.measured) out += csv_line("host_to_gpu", "host", g, "pcie", h.link, &h.h2d, nullptr);
    if (h.d2h.measured) out += csv_line("gpu_to_host", g, "host", "pcie", h.link, &h.d2h, nullptr);
    if (h.bidir.measured) out += csv_line("host_bidirectional", "host", g, "pcie", h.link, &h.bidir, nullptr);
    if (h.latency.measured) out += csv_line("host_latency", "host", g, "pcie", h.link, nullptr, &h.latency);
  }
  return out;
}

}  // namespace commscale
