#include "parallel/plan_summary.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "program/checker.hpp"
#include "workload/flops.hpp"
#include "workload/model_spec.hpp"

namespace commscale {
namespace {

Flops program_gemm_flops(const std::vector<Op>& ops) {
  Flops total;
  for (const Op& op : ops) {
    if (const auto* g = std::get_if<Gemm>(&op.payload)) total += g->flops;
  }
  return total;
}

// A key to_json derives from others must agree with them: a file that disagrees with itself was
// edited, and the report would draw one figure from the key and another from the fields.
void check_derived(const JsonAt& in, std::string_view key, double derived, std::string_view from) {
  if (const double written = in.number(key); written != derived)
    throw InputError(in.at(key).where(), fmt::format("is {}", written), fmt::format("{}, {}", derived, from));
}

StageSummary stage_from_json(const JsonAt& in) {
  StageSummary stage;
  stage.stage = static_cast<int>(in.number("stage"));
  stage.ops = static_cast<std::size_t>(in.number("ops"));
  stage.gemm_flops = Flops(in.number("gemm_flops"));
  for (const JsonAt& t : in.array("traffic_per_step")) {
    stage.traffic.push_back({t.string("group"), t.string("kind"), static_cast<std::uint64_t>(t.number("count")),
                             Bytes(static_cast<std::uint64_t>(t.number("bytes")))});
  }
  return stage;
}

FitVerdict fit_from_json(const JsonAt& in, const std::vector<StageMemory>& memory) {
  FitVerdict fit;
  fit.capacity = Bytes(static_cast<std::uint64_t>(in.number("gpu_memory_bytes")));
  fit.fits = in.flag("fits");
  fit.worst_stage = static_cast<int>(in.number("worst_stage"));
  if (fit.worst_stage < 0 || static_cast<std::size_t>(fit.worst_stage) >= memory.size()) {
    throw InputError(in.at("worst_stage").where(), fmt::format("is {}", fit.worst_stage),
                     fmt::format("a stage of memory_per_rank (0 to {})", memory.size() - 1));
  }
  fit.worst_total = memory[static_cast<std::size_t>(fit.worst_stage)].bytes.total();
  fit.over = Bytes(static_cast<std::uint64_t>(in.number("over_bytes")));
  fit.message = in.string("message");
  return fit;
}

}  // namespace

std::vector<GroupTraffic> stage_traffic(const ProgramSet& set, int rank) {
  const RankProgram& r = set.ranks.at(static_cast<std::size_t>(rank));
  std::map<std::pair<std::string, std::string>, GroupTraffic> by_kind;
  for (const Op& op : ops_of(set, rank)) {
    std::string group;
    std::string kind;
    Bytes bytes;
    if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
      group = name(r.groups.at(c->group).role);
      kind = name(c->kind);
      bytes = c->bytes;
    } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
      group = name(r.groups.at(p->group).role);
      kind = name(p->direction);
      bytes = p->bytes;
    } else if (const auto* h = std::get_if<HostCopy>(&op.payload)) {
      group = kOffloadGroup;
      kind = name(h->direction);
      bytes = h->bytes;
    } else {
      continue;
    }
    GroupTraffic& t = by_kind[{group, kind}];
    t.group = group;
    t.kind = kind;
    ++t.count;
    t.bytes += bytes;
  }
  std::vector<GroupTraffic> out;
  out.reserve(by_kind.size());
  for (auto& [key, traffic] : by_kind) out.push_back(std::move(traffic));
  return out;
}

PlanSummary summarize_plan(const TransformerConfig& m, const ParallelPlan& p, const ProgramSet& set,
                           const MemoryOptions& memory, std::optional<Bytes> gpu_memory) {
  PlanSummary s;
  s.model = m;
  s.plan = p;
  s.parameters = parameter_count(m);
  s.microbatches = microbatches_per_step(p);
  s.model_flops_per_step = model_flops(m, p.lora, p.global_batch);
  s.memory = memory_per_stage(m, p, memory);
  if (gpu_memory) s.fit = check_fit(s.memory, *gpu_memory);
  std::vector<int> stage_rank(set.programs.size(), -1);
  for (const RankProgram& r : set.ranks) {
    if (stage_rank[static_cast<std::size_t>(r.program)] < 0) stage_rank[static_cast<std::size_t>(r.program)] = r.rank;
  }
  std::vector<Flops> program_flops;
  for (const auto& ops : set.programs) program_flops.push_back(program_gemm_flops(ops));
  for (const RankProgram& r : set.ranks)
    s.hardware_flops_per_step += program_flops[static_cast<std::size_t>(r.program)];
  for (std::size_t i = 0; i < set.programs.size(); ++i) {
    if (stage_rank[i] < 0) continue;
    StageSummary stage;
    stage.stage = static_cast<int>(s.stages.size());
    stage.ops = set.programs[i].size();
    stage.gemm_flops = program_flops[i];
    stage.traffic = stage_traffic(set, stage_rank[i]);
    s.stages.push_back(std::move(stage));
  }
  s.program_problems = check_program(set).problems;
  return s;
}

nlohmann::json summary_to_json(const PlanSummary& s) {
  nlohmann::json memory = nlohmann::json::array();
  for (const StageMemory& stage : s.memory) memory.push_back(memory_to_json(stage));
  nlohmann::json stages = nlohmann::json::array();
  for (const StageSummary& stage : s.stages) {
    nlohmann::json traffic = nlohmann::json::array();
    for (const GroupTraffic& t : stage.traffic) {
      traffic.push_back({{"group", t.group}, {"kind", t.kind}, {"count", t.count}, {"bytes", t.bytes.count()}});
    }
    stages.push_back({{"stage", stage.stage},
                      {"ops", stage.ops},
                      {"gemm_flops", stage.gemm_flops.value()},
                      {"traffic_per_step", traffic}});
  }
  nlohmann::json doc = {{"schema_version", 1},
                        {"kind", "commscale-plan"},
                        {"model", model_to_json(s.model)},
                        {"plan", plan_to_json(s.plan)},
                        {"world_size", world_size(s.plan)},
                        {"parameters", s.parameters},
                        {"microbatches_per_step", s.microbatches},
                        {"model_flops_per_step", s.model_flops_per_step.value()},
                        {"hardware_flops_per_step", s.hardware_flops_per_step.value()},
                        {"memory_per_rank", memory},
                        {"max_memory_per_rank_bytes", largest_total(s.memory).count()},
                        {"stages", stages},
                        {"program_deadlock_free", s.program_problems.empty()},
                        {"program_problems", s.program_problems}};
  if (s.fit) {
    doc["fit"] = {{"gpu_memory_bytes", s.fit->capacity.count()},
                  {"fits", s.fit->fits},
                  {"worst_stage", s.fit->worst_stage},
                  {"over_bytes", s.fit->over.count()},
                  {"message", s.fit->message}};
  }
  return doc;
}

PlanSummary summary_from_json(const JsonAt& in) {
  PlanSummary s;
  s.model = model_from_json(in.at("model"));
  s.plan = plan_from_json(in.at("plan"));
  check_derived(in, "world_size", world_size(s.plan), "dp × tp × pp of its plan");
  s.parameters = static_cast<std::uint64_t>(in.number("parameters"));
  s.microbatches = static_cast<int>(in.number("microbatches_per_step"));
  s.model_flops_per_step = Flops(in.number("model_flops_per_step"));
  s.hardware_flops_per_step = Flops(in.number("hardware_flops_per_step"));
  for (const JsonAt& m : in.array("memory_per_rank")) s.memory.push_back(memory_from_json(m));
  check_derived(in, "max_memory_per_rank_bytes", static_cast<double>(largest_total(s.memory).count()),
                "the largest total_bytes of memory_per_rank");
  for (const JsonAt& stage : in.array("stages")) s.stages.push_back(stage_from_json(stage));
  for (const JsonAt& problem : in.array("program_problems")) s.program_problems.push_back(problem.as_string());
  const bool proven = s.program_problems.empty();
  if (in.flag_or("program_deadlock_free", proven) != proven) {
    throw InputError(in.at("program_deadlock_free").where(), fmt::format("is {}", !proven),
                     fmt::format("{}, as program_problems says", proven));
  }
  if (in.has("fit")) s.fit = fit_from_json(in.at("fit"), s.memory);
  return s;
}

}  // namespace commscale
