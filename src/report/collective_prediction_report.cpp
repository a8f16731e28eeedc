// The predicted collective sweep as JSON and as text (report/collective_prediction_report.hpp).

#include "report/collective_prediction_report.hpp"

#include <fmt/format.h>

namespace commscale::predict {
namespace {

nlohmann::json group_json(const CollectiveSweepPrediction& p) {
  const GroupLinks& g = p.group;
  nlohmann::json out = {{"path_class", hw::name(g.bottleneck_class())},
                        {"intra_class", hw::name(g.intra_class)},
                        {"local_ranks", g.local},
                        {"bus_bw_GBps", p.ranks > 1 ? nlohmann::json(g.bus_bw().value()) : nlohmann::json()},
                        {"intra_latency_us", to_us(g.intra_latency)},
                        {"inter_latency_us", to_us(g.inter_latency)}};
  return out;
}

std::string calibration_text(const Target& t) {
  if (!t.calibration) return "none";
  return t.calibration->file.empty() ? t.calibration->gpu.name : t.calibration->file;
}

}  // namespace

nlohmann::json collective_prediction_to_json(const Target& target, const CollectiveSweepPrediction& p) {
  nlohmann::json results = nlohmann::json::array();
  for (const PredictedCollectiveRow& r : p.rows) {
    results.push_back({{"collective", name(r.collective)},
                       {"size_bytes", r.size.count()},
                       {"time_us", to_us(r.estimate.time)},
                       {"latency_us", to_us(r.estimate.latency)},
                       {"algbw_GBps", r.algbw.value()},
                       {"busbw_GBps", r.busbw.value()},
                       {"algo", name(r.estimate.algo)},
                       {"proto", name(r.estimate.proto)},
                       {"calibrated", r.estimate.calibrated}});
    if (r.traffic) {
      results.back()["traffic"] = {{"max_send_bytes", r.traffic->max_send_bytes},
                                   {"max_recv_bytes", r.traffic->max_recv_bytes},
                                   {"recv_max_over_mean", r.traffic->recv_max_over_mean},
                                   {"max_intra_node_bytes", r.traffic->max_intra_bytes},
                                   {"max_inter_node_bytes", r.traffic->max_inter_bytes}};
    }
  }
  nlohmann::json doc = {{"schema_version", 1},
                        {"kind", "commscale-collective-prediction"},
                        {"cluster", target.cluster.name},
                        {"gpu", target.cluster.gpu.name},
                        {"nodes", p.nodes},
                        {"ranks", p.ranks},
                        {"calibration", target.calibration ? nlohmann::json(calibration_text(target)) : nlohmann::json()},
                        {"group", group_json(p)},
                        {"results", std::move(results)},
                        {"notes", target.notes}};
  if (!p.traffic_source.empty()) doc["alltoallv"] = {{"source", p.traffic_source}};
  return doc;
}

void print_collective_prediction(std::ostream& out, const Target& target, const CollectiveSweepPrediction& p) {
  const GroupLinks& g = p.group;
  out << fmt::format("cluster  {}: {} rank(s) on {} node(s) of {} x {}; calibration: {}\n", target.cluster.name,
                     p.ranks, p.nodes, target.cluster.gpus_per_node(), target.cluster.gpu.name,
                     calibration_text(target));
  if (p.ranks > 1) {
    out << fmt::format("group    {} ring ({} per node): bus {:.1f} GB/s; link-graph step latency {:.2f} us inside "
                       "nodes{}\n",
                       hw::name(g.bottleneck_class()), g.local, g.bus_bw().value(), to_us(g.intra_latency),
                       p.nodes > 1 ? fmt::format(", {:.2f} us between", to_us(g.inter_latency)) : "");
  }
  for (const std::string& note : target.notes) out << "note     " << note << "\n";
  if (!p.traffic_source.empty()) {
    out << fmt::format("traffic  alltoallv: {}; priced from the busiest rank's bytes inside and between nodes\n",
                       p.traffic_source);
  }
  out << "# time: the collective model's (src/predict/comm_model.hpp); latency: its latency term\n";
  out << fmt::format("#{:>15} {:>12} {:>10} {:>10} {:>10} {:>10}  {:<5} {:<6}\n", "collective", "size", "time",
                     "latency", "algbw", "busbw", "algo", "proto");
  out << fmt::format("#{:>15} {:>12} {:>10} {:>10} {:>10} {:>10}\n", "", "(B)", "(us)", "(us)", "(GB/s)", "(GB/s)");
  for (const PredictedCollectiveRow& r : p.rows) {
    out << fmt::format(" {:>15} {:>12} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}  {:<5} {:<6}{}\n", name(r.collective),
                       r.size.count(), to_us(r.estimate.time), to_us(r.estimate.latency), r.algbw.value(),
                       r.busbw.value(), name(r.estimate.algo), name(r.estimate.proto),
                       r.estimate.calibrated ? "  (calibration curve)" : "");
  }
}

}  // namespace commscale::predict
