// The prediction as JSON and as text (report/prediction_report.hpp).

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "parallel/plan_memory.hpp"
#include "report/prediction_report.hpp"
#include "workload/model_spec.hpp"

namespace commscale::predict {
namespace {

nlohmann::json groups_json(const Prediction& p) {
  nlohmann::json out = nlohmann::json::array();
  for (const GroupReport& g : p.groups) {
    out.push_back({{"group", g.name},
                   {"ranks", g.ranks},
                   {"nodes", g.nodes},
                   {"link", hw::name(g.link)},
                   {"bus_bw_GBps", g.bus_bw.value()},
                   {"busy_s", g.busy.value()},
                   {"exposed_s", g.exposed.value()}});
  }
  return out;
}

std::string percent(double part, double whole) { return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-"; }
std::string gib(Bytes b) { return fmt::format("{:.2f}", b.gib()); }

// A row's source in the text: who measured it, where and when, the part before its first ": " (a
// profile's sources run to a paragraph of method); --json has it whole.
std::string source_head(std::string_view source) {
  constexpr std::size_t kLongest = 160;
  const std::size_t colon = source.find(": ");
  if (colon == std::string_view::npos && source.size() <= kLongest) return std::string(source);
  const std::string_view head = source.substr(0, std::min(colon, kLongest));
  return fmt::format("{} ...; the whole source: --json", head);
}

void print_summary(std::ostream& out, const Prediction& p) {
  const JobSummary& s = p.summary;
  out << fmt::format("step     {:.4f} s, {:.0f} tokens/s", s.step_time_s, s.tokens_per_s);
  if (s.mfu) {
    out << fmt::format("; MFU {:.1f}% (HFU {:.1f}%): {:.1f} TFLOP/s per GPU of {:.1f} peak ({})", 100 * *s.mfu,
                       100 * s.hfu.value_or(0.0), s.tflops_per_gpu, p.peak.value() / 1e12, name(p.model.dtype));
  }
  out << fmt::format("\n         compute {:.4f} s ({}), exposed communication {:.4f} s ({}), bubble {:.4f} s ({})\n",
                     s.compute_s, percent(s.compute_s, s.step_time_s), s.exposed_comm_s,
                     percent(s.exposed_comm_s, s.step_time_s), s.bubble_s, percent(s.bubble_s, s.step_time_s));
}

void print_groups(std::ostream& out, const Prediction& p) {
  if (p.groups.empty()) return;
  out << "\ncommunication per rank per step (busy: moving data; exposed: while the compute stream is idle)\n";
  out << fmt::format("{:<10} {:>6} {:>6}  {:<12} {:>10} {:>10} {:>10}\n", "group", "ranks", "nodes", "link", "bus GB/s",
                     "busy s", "exposed s");
  for (const GroupReport& g : p.groups) {
    out << fmt::format("{:<10} {:>6} {:>6}  {:<12} {:>10.1f} {:>10.4f} {:>10.4f}\n", g.name, g.ranks, g.nodes,
                       hw::name(g.link), g.bus_bw.value(), g.busy.value(), g.exposed.value());
  }
  std::string links;
  for (const auto& [link, t] : p.exposed_by_link)
    links += fmt::format("{}{} {:.4f} s", links.empty() ? "" : ", ", link, t.value());
  out << "exposed by link type: " << links << "\n";
}

void print_memory(std::ostream& out, const Prediction& p) {
  out << "\nmemory per rank, GiB\n";
  out << fmt::format("{:>6} {:>8} {:>8} {:>9} {:>11} {:>7} {:>6} {:>9} {:>8}\n", "stage", "weights", "grads",
                     "optimizer", "activations", "logits", "comm", "workspace", "total");
  for (const StageMemory& st : p.memory) {
    const MemoryBreakdown& b = st.bytes;
    out << fmt::format("{:>6} {:>8} {:>8} {:>9} {:>11} {:>7} {:>6} {:>9} {:>8}\n", st.stage, gib(b.weights),
                       gib(b.gradients), gib(b.optimizer), gib(b.activations), gib(b.logits), gib(b.communication),
                       gib(b.workspace), gib(b.total()));
  }
  out << "fit      " << p.fit.message << "\n";
}

}  // namespace

nlohmann::json prediction_to_json(const Prediction& p) {
  nlohmann::json memory = nlohmann::json::array();
  for (const StageMemory& s : p.memory) memory.push_back(memory_to_json(s));
  nlohmann::json by_link = nlohmann::json::object();
  for (const auto& [link, t] : p.exposed_by_link) by_link[link] = t.value();
  return {{"schema_version", kPredictionSchemaVersion},
          {"kind", "commscale-prediction"},
          {"model", model_to_json(p.model)},
          {"plan", plan_to_json(p.plan)},
          {"world_size", world_size(p.plan)},
          {"cluster",
           {{"name", p.cluster},
            {"file", p.cluster_file},
            {"gpu", p.gpu},
            {"nodes", p.nodes},
            {"gpus_per_node", p.gpus_per_node}}},
          {"calibration", p.calibration.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.calibration)},
          {"host",
           {{"framework", p.host_framework},
            {"source", p.host_source},
            {"issue_s", p.host_issue.value()},
            {"sync_after_p2p", p.host_sync_after_p2p},
            {"gpu_waited_s", p.host_wait.value()}}},
          {"interference",
           {{"source", p.interference_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.interference_source)},
            {"added_compute_s", p.interference_compute.value()},
            {"added_comm_s", p.interference_comm.value()},
            {"iterations", p.interference_iterations}}},
          {"clock",
           {{"source", p.clock_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.clock_source)},
            {"gemm_share", p.clock_gemm_share},
            {"gemm_speedup", p.clock_speedup},
            {"iterations", p.clock_iterations}}},
          {"summary", p.summary},
          {"model_flops_per_step", p.model_flops.value()},
          {"hardware_flops_per_step", p.hardware_flops.value()},
          {"peak_tflops", p.peak.value() / 1e12},
          {"groups", groups_json(p)},
          {"exposed_comm_by_link_s", by_link},
          {"memory_per_rank", memory},
          {"max_memory_per_rank_bytes", largest_total(p.memory).count()},
          {"fit",
           {{"gpu_memory_bytes", p.fit.capacity.count()},
            {"fits", p.fit.fits},
            {"worst_stage", p.fit.worst_stage},
            {"over_bytes", p.fit.over.count()},
            {"message", p.fit.message}}},
          {"simulated_ranks", p.simulated_ranks},
          {"simulated_ops", p.simulated_ops},
          {"notes", p.notes},
          {"framework", {{"name", name(p.plan.framework)}, {"runs", defaults_of(p.plan.framework).why}}},
          {"validation", p.validation}};
}

void print_prediction(std::ostream& out, const Prediction& p) {
  const TransformerConfig& m = p.model;
  const ParallelPlan& pl = p.plan;
  out << fmt::format("model    {}: {} layers, hidden {}, {} heads, seq {}, {}\n", m.name, m.layers, m.hidden, m.heads,
                     m.seq, name(m.dtype));
  out << fmt::format(
      "plan     {} ranks = dp {} x tp {} x pp {}{}; {}{}, micro-batch {}, global batch {} ({} microbatches); ZeRO {}, "
      "recompute {}, sp {}{}, {} kernels\n",
      world_size(pl), pl.dp, pl.tp, pl.pp, pl.cp > 1 ? fmt::format(" x cp {}", pl.cp) : "", name(pl.schedule),
      pl.chunks > 1 ? fmt::format(" x{} chunks", pl.chunks) : stage_split_text(m, pl), pl.micro_batch, pl.global_batch,
      microbatches_per_step(pl), pl.zero_stage, name(pl.recompute), pl.sequence_parallel ? "on" : "off",
      pl.flash_attention ? ", flash attention" : "", name(pl.kernels));
  if (const std::string saving = memory_saving_text(pl); !saving.empty()) out << "         " << saving << "\n";
  if (const std::string experts = experts_plan_text(m, pl); !experts.empty()) out << "experts  " << experts << "\n";
  if (const std::string context = context_parallel_text(m, pl); !context.empty()) out << "context  " << context << "\n";
  out << fmt::format("cluster  {}: {} node{} x {} {}; calibration: {}\n", p.cluster, p.nodes, p.nodes == 1 ? "" : "s",
                     p.gpus_per_node, p.gpu, p.calibration.empty() ? "none (default efficiencies)" : p.calibration);
  out << fmt::format("framework {} (--framework)\n", framework_text(pl.framework, m.dtype));
  out << fmt::format("checked  {}\n", p.validation);
  if (p.host_framework != "none") {
    out << fmt::format("host     {}: issues one rank's step in {:.3f} ms; the GPU waited {:.3f} ms of the step for it{} "
                       "({})\n",
                       p.host_framework, to_ms(p.host_issue), to_ms(p.host_wait),
                       p.host_sync_after_p2p ? "; waits for the GPU after each pipeline send and receive" : "",
                       source_head(p.host_source));
  } else {
    out << "host     none: device time only (no host issue costs)\n";
  }
  if (p.interference_source.empty()) {
    out << "overlap  free: no interference figures (calibrate --measure interference)\n";
  } else if (p.interference_iterations > 0) {
    out << fmt::format("overlap  compute +{:.3f} ms, communication +{:.3f} ms where they run together ({})\n",
                       to_ms(p.interference_compute), to_ms(p.interference_comm), source_head(p.interference_source));
  }
  if (!p.clock_source.empty()) {
    out << fmt::format("clock    GEMMs take {:.0f}% of the step: at the clock that leaves, {:.3f}x their rows' rate ({})\n",
                       100 * p.clock_gemm_share, p.clock_speedup, source_head(p.clock_source));
  }
  out << "\n";
  print_summary(out, p);
  print_groups(out, p);
  print_memory(out, p);
  for (const std::string& note : p.notes) out << "note     " << note << "\n";
  out << fmt::format("simulated {} of {} ranks (one per symmetry class), {} ops\n", p.simulated_ranks, world_size(pl),
                     p.simulated_ops);
}

}  // namespace commscale::predict
