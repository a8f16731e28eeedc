#include "predict/stage_model.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <variant>

#include "parallel/program_builder.hpp"
#include "parallel/rank_layout.hpp"
#include "predict/prediction.hpp"
#include "predict/timed_simulation.hpp"
#include "workload/flops.hpp"
#include "workload/layer_ops.hpp"

namespace commscale::predict {
namespace {

// The slowest of a kind: least bandwidth, then most latency.
const GroupLinks& slowest(const std::vector<GroupLinks>& all) {
  const GroupLinks* worst = &all.front();
  for (const GroupLinks& g : all) {
    if (g.bus_bw() < worst->bus_bw() ||
        (g.bus_bw() == worst->bus_bw() &&
         g.intra_latency + g.inter_latency > worst->intra_latency + worst->inter_latency)) {
      worst = &g;
    }
  }
  return *worst;
}

FlowLinks slowest(const std::vector<FlowLinks>& all) {
  FlowLinks worst;
  for (const FlowLinks& f : all) {
    if (f.bw < worst.bw || (f.bw == worst.bw && f.latency > worst.latency)) worst = f;
  }
  return worst;
}

// a + (b - a) x t, figure by figure.
CoarseFigures extend(const CoarseFigures& a, const CoarseFigures& b, double t) {
  const auto line = [t](double x, double y) { return x + (y - x) * t; };
  CoarseFigures f;
  f.step = line(a.step, b.step);
  f.compute = line(a.compute, b.compute);
  f.exposed = line(a.exposed, b.exposed);
  f.gemm_flops = line(a.gemm_flops, b.gemm_flops);
  f.host_wait = line(a.host_wait, b.host_wait);
  for (const auto& [name, g] : b.groups) {
    const auto found = a.groups.find(name);
    const GroupTime base = found == a.groups.end() ? GroupTime{} : found->second;
    f.groups[name] = {Seconds(line(base.busy.value(), g.busy.value())),
                      Seconds(line(base.exposed.value(), g.exposed.value()))};
  }
  return f;
}

const auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };

}  // namespace

// Means over the stages, which have equally many ranks. Each stream's intervals come sorted; the
// pipeline group's two streams and the communication streams are merged in order.
CoarseFigures PlanEvaluator::coarse_breakdown(const ProgramSet& set, const std::vector<ProgramIndex>& indexes,
                                              const Simulation& sim) {
  CoarseFigures f;
  f.step = sim.step_time.value();
  const double n = static_cast<double>(sim.simulated.size());
  Scratch& s = scratch_;
  for (std::size_t st = 0; st < sim.simulated.size(); ++st) {
    for (auto& v : s.by_stream) v.clear();
    for (auto& v : s.by_group) v.clear();
    s.offload.clear();
    const std::vector<OpInfo>& ops =
        indexes[static_cast<std::size_t>(set.ranks[static_cast<std::size_t>(sim.simulated[st])].program)].info;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Interval moving{sim.data_start[st][i], sim.end[st][i]};
      const OpInfo& op = ops[i];
      s.by_stream[static_cast<std::size_t>(op.stream)].push_back(moving);
      if (op.compute()) continue;
      if (op.category == OpCategory::kHostCopy) {
        s.offload.push_back(moving);  // two streams (h2d, d2h): sorted below
        continue;
      }
      // The two pipeline directions are one group, "pp", as the breakdown charges them; per stream.
      const std::size_t group = op.group == kPpBackwardGroup ? kPpForwardGroup : op.group;
      s.by_group[2 * group + (op.stream == Stream::kPpRecv ? 1 : 0)].push_back(moving);
    }
    merge_sorted(s.by_stream[0], s.compute);
    s.all.clear();
    for (std::size_t k = 1; k < kStreamCount; ++k) {
      s.both.clear();
      std::merge(s.all.begin(), s.all.end(), s.by_stream[k].begin(), s.by_stream[k].end(), std::back_inserter(s.both),
                 by_start);
      std::swap(s.all, s.both);
    }
    merge_sorted(s.all, s.merged);
    f.compute += merged_length(s.compute) / n;
    f.exposed += uncovered_merged_length(s.merged, s.compute) / n;
    for (std::size_t g = 0; g < static_cast<std::size_t>(kGroupRoleCount); ++g) {
      const auto& a = s.by_group[2 * g];
      const auto& b = s.by_group[2 * g + 1];
      if (a.empty() && b.empty()) continue;
      s.both.clear();
      std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(s.both), by_start);
      merge_sorted(s.both, s.merged);
      GroupTime& time = f.groups[std::string(charged_name(static_cast<GroupRole>(g)))];  // handle = role
      time.busy += Seconds(merged_length(s.merged) / n);
      time.exposed += Seconds(uncovered_merged_length(s.merged, s.compute) / n);
    }
    if (!s.offload.empty()) {
      std::sort(s.offload.begin(), s.offload.end(), by_start);
      merge_sorted(s.offload, s.merged);
      GroupTime& time = f.groups[std::string(kOffloadGroup)];
      time.busy += Seconds(merged_length(s.merged) / n);
      time.exposed += Seconds(uncovered_merged_length(s.merged, s.compute) / n);
    }
  }
  return f;
}

namespace {

std::vector<std::vector<int>> groups_along(const RankLayout& layout, ParallelDim dim) {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < layout.world_size(); ++r) {
    if (layout.coords(r).get(dim) == 0) out.push_back(layout.group(r, dim));
  }
  return out;
}

}  // namespace

PlanEvaluator::PlanEvaluator(const TransformerConfig& model, const Target& target, MemoryOptions memory, int gpus)
    : model_(model),
      target_(target),
      memory_(memory),
      gpus_(gpus > 0 ? gpus : target.gpus()),
      analyzer_(target.graph, target.achievable),
      peak_(dense_rate(target.cluster.gpu, model.dtype, DataType::kFloat32).value_or(FlopsPerSecond(0.0))) {}

const LayoutLinks& PlanEvaluator::layout_links(const ParallelPlan& p) {
  const bool wraps = p.chunks > 1;  // interleaved: the last stage sends on to the first
  const auto key = std::make_tuple(p.tp, p.dp, p.pp, p.order, wraps);
  const auto found = layouts_.find(key);
  if (found != layouts_.end()) return found->second;
  const RankLayout layout(p.tp, p.dp, p.pp, p.order);
  LayoutLinks links;
  links.tp = slowest(analyzer_.groups(groups_along(layout, ParallelDim::kTp)));
  links.dp = slowest(analyzer_.groups(groups_along(layout, ParallelDim::kDp)));
  std::vector<std::pair<int, int>> forward;
  std::vector<std::pair<int, int>> backward;
  std::vector<std::vector<int>> embedding;
  for (const std::vector<int>& pipeline : groups_along(layout, ParallelDim::kPp)) {
    if (model_.vocab > 0 && model_.tied_embeddings && p.pp > 1)
      embedding.push_back({pipeline.front(), pipeline.back()});
    for (std::size_t s = 0; s + 1 < pipeline.size() || (wraps && s + 1 == pipeline.size()); ++s) {
      const int next = pipeline[(s + 1) % pipeline.size()];
      forward.emplace_back(pipeline[s], next);
      backward.emplace_back(next, pipeline[s]);
    }
  }
  if (!embedding.empty()) links.embedding = slowest(analyzer_.groups(embedding));
  if (!forward.empty()) {
    links.forward = slowest(analyzer_.flows(forward));
    links.backward = slowest(analyzer_.flows(backward));
  }
  return layouts_.emplace(key, links).first->second;
}

const UnitCosts& PlanEvaluator::unit_costs(const ParallelPlan& p, const GroupLinks& tp) {
  // The lists' durations depend on their shape only (program_builder.hpp, UnitLists::shape).
  const UnitKey key{UnitLists::shape(p), tp.bus_bw().value(), tp.intra_latency.value(), tp.inter_latency.value()};
  const auto found = units_.find(key);
  if (found != units_.end()) return found->second;
  return units_.emplace(key, UnitCosts(UnitLists(model_, p), target_, tp)).first->second;
}

PlanEstimate PlanEvaluator::memory_only(const ParallelPlan& plan) const {
  PlanEstimate e;
  e.plan = plan;
  const std::vector<StageMemory> stages = memory_per_stage(model_, plan, memory_);
  const FitVerdict fit = with_host_fit(check_fit(stages, *target_.cluster.gpu.memory.value), stages, target_.cluster,
                                       world_size(plan));
  e.fits = fit.fits;
  e.memory = fit.worst_total;
  e.fit_message = fit.message;
  return e;
}

std::shared_ptr<const PlanEvaluator::Prepared> PlanEvaluator::coarse_program(const ParallelPlan& p) {
  // A search estimates a layout's plans shape by shape (search.cpp, estimate_all): the plans of one
  // shape differ in recompute and micro-batch size, and take the same two programs (at the two
  // microbatch counts of the steady-state line) or their own at few microbatches, transfers resized.
  // Three kept: the two of the line and one more. GPT-3 175B on 1024 A100s (one thread): peak memory
  // 359 MB with 8 kept, 314 MB with 4, 275 MB with 3, the same CPU time; with 2 the programs are
  // rebuilt plan after plan (+20% CPU).
  constexpr std::size_t kKept = 3;
  const CoarseShape shape = coarse_shape(p);
  const Bytes transfers = pipeline_transfer_bytes(model_, p);
  for (auto& [kept, program] : programs_) {
    if (kept != shape) continue;
    if (program->transfers != transfers) {
      if (program.use_count() > 1) break;  // still read elsewhere: build another
      resize_transfers(program->coarse, transfers);
      program->transfers = transfers;
    }
    return program;
  }
  CoarseProgram coarse = build_coarse_program(model_, p);
  std::vector<ProgramIndex> indexes = index_programs(coarse.set);  // resizing transfers changes no index
  CostClasses classes(coarse);                                     // nor a class
  auto program = std::make_shared<Prepared>(Prepared{std::move(coarse), std::move(indexes), std::move(classes), transfers});
  if (programs_.size() < kKept) {
    programs_.emplace_back(shape, program);
  } else {
    programs_[next_program_] = {shape, program};
    next_program_ = (next_program_ + 1) % kKept;
  }
  return program;
}

Seconds PlanEvaluator::step_lower_bound(const ParallelPlan& p) {
  const double m = microbatches_per_step(p);
  // A unit's forward, then its first microbatch's backward and the accumulating ones' (UnitLists::of), each
  // taking `seconds` of the compute stream.
  const auto per_step = [m](const auto& seconds, UnitKind kind, bool moe) {
    return m * seconds(kind, Phase::kForward, false, moe) + seconds(kind, Phase::kBackward, false, moe) +
           (m - 1) * seconds(kind, Phase::kBackward, true, moe);
  };
  std::array<double, 4> unit{};  // a step's embedding, dense layer, MoE layer, head
  const auto fill = [&](const auto& seconds) {
    unit = {per_step(seconds, UnitKind::kEmbedding, false), per_step(seconds, UnitKind::kLayer, false),
            model_.moe.enabled() ? per_step(seconds, UnitKind::kLayer, true) : 0.0,
            per_step(seconds, UnitKind::kHead, false)};
  };
  if (model_.moe.enabled() || p.cp > 1) {
    // Predicted in full: the compute ops of the lists its program stamps, each at its cost model's time (the
    // stream runs them one at a time; their communication, host and interference only add).
    auto found = list_compute_.find(UnitLists::shape(p));
    if (found == list_compute_.end()) {
      const UnitLists lists(model_, p);
      fill([&](UnitKind kind, Phase phase, bool accumulate, bool moe) {
        double total = 0.0;
        for (const WorkloadOp& op : lists.of(kind, phase, accumulate, moe)) {
          if (const auto* gemm = std::get_if<Gemm>(&op.payload)) total += target_.compute.time(*gemm, op.phase).value();
          if (const auto* kernel = std::get_if<MemoryKernel>(&op.payload))
            total += target_.compute.time(*kernel, op.phase).value();
        }
        return total;
      });
      found = list_compute_.emplace(UnitLists::shape(p), unit).first;
    }
    unit = found->second;
  } else {
    const UnitCosts& units = unit_costs(p, layout_links(p).tp);
    fill([&](UnitKind kind, Phase phase, bool accumulate, bool) { return units.of(kind, phase, accumulate).seconds; });
  }
  double busiest = 0.0;
  for (int s = 0; s < p.pp; ++s) {
    const StageUnits w = stage_units(model_, p, s);
    busiest = std::max(busiest, w.embeddings * unit[0] + (w.layers - w.moe_layers) * unit[1] + w.moe_layers * unit[2] +
                                    w.heads * unit[3]);
  }
  return Seconds(busiest / target_.clock.max_speedup());
}

CoarseFigures PlanEvaluator::simulate_coarse(const ParallelPlan& plan) {
  const LayoutLinks& links = layout_links(plan);
  const std::shared_ptr<const Prepared> program = coarse_program(plan);
  const CoarseProgram& coarse = program->coarse;
  const StageCosts costs(coarse, program->classes, unit_costs(plan, links.tp), links, target_);
  // The units hold the host's issue costs (stage_costs.hpp); the step's own host work and its
  // synchronisation stay with the simulation.
  HostCosts host;
  host.step = target_.host.step;
  host.sync = target_.host.sync;
  // Megatron's wait for the GPU after each batch of pipeline sends and receives, as predict has it (not for
  // the interleaved schedule: prediction.cpp): the data-parallel reductions queued before it are waited for too.
  host.sync_after_p2p = target_.host.sync_after_p2p && plan.schedule != ScheduleKind::kInterleaved;
  const SimulationOptions options{.reduce = false,  // every stage differs
                                  .host = &host,
                                  .indexes = &program->indexes,
                                  .storage = &sim_storage_,
                                  .recording = program->recording.get()};
  // Two re-simulations at most for each pass keep a search fast (interference's second keeps the coarse
  // model within the full simulation's figures: one alone missed them by 0.9% on a ZeRO-2 data-parallel
  // plan). Inside a unit its interference is in the unit's cost; here it is between the fused ops and the
  // data-parallel and pipeline communication beside them.
  simulate_timed(coarse.set, costs, costs, target_.clock, target_.interference, options, sim_, 2);
  CoarseFigures f = coarse_breakdown(coarse.set, program->indexes, sim_);
  for (const double waited : sim_.host_wait) f.host_wait += waited / static_cast<double>(plan.pp);
  // The tensor-parallel time the fused ops hold: exposed where compute idled inside a unit.
  const double stages = static_cast<double>(plan.pp);
  for (const StageCosts::Folded& stage : costs.folded()) {
    // Inside a fused op the GPU also waited for the host: idle, not compute.
    f.compute -= stage.host_wait / stages;
    f.host_wait += stage.host_wait / stages;
    f.compute -= stage.tp_exposed / stages;
    f.exposed += stage.tp_exposed / stages;
    if (plan.tp > 1) {
      f.groups["tp"].busy += Seconds(stage.tp_busy / stages);
      f.groups["tp"].exposed += Seconds(stage.tp_exposed / stages);
    }
    f.gemm_flops += stage.gemm_flops;
  }
  return f;
}

namespace {

// The figures of a full prediction (prediction.hpp), as the coarse simulation gives them.
CoarseFigures full_figures(const TransformerConfig& model, const ParallelPlan& plan, const Target& target,
                           const MemoryOptions& memory) {
  const Prediction p = predict_step(prepare_for(CheckedPlan(model, plan), target, memory), target);
  const JobSummary& s = p.summary;
  CoarseFigures f;
  f.step = s.step_time_s;
  f.compute = s.compute_s;
  f.exposed = s.exposed_comm_s;
  f.host_wait = p.host_wait.value();
  f.groups = s.groups;
  // One rank per stage, summed over the stages, as the coarse simulation counts it.
  f.gemm_flops = s.hardware_tflops_per_gpu * 1e12 * s.step_time_s * plan.pp;
  return f;
}

}  // namespace

PlanEstimate PlanEvaluator::estimate(const ParallelPlan& plan) {
  // A model with experts, and a plan with context parallelism, are predicted in full (the coarse program has
  // neither an MoE layer nor context-parallel attention: the header).
  const auto simulate = [&](const ParallelPlan& p) {
    return model_.moe.enabled() || p.cp > 1 ? full_figures(model_, p, target_, memory_) : simulate_coarse(p);
  };
  PlanEstimate e = memory_only(plan);
  // Two points on the steady-state line: p and p + 1 microbatches; interleaved needs multiples of p
  // and more than p (with exactly p its warm-up runs every forward first), so 2p and 3p.
  const int m = microbatches_per_step(plan);
  const bool interleaved = plan.schedule == ScheduleKind::kInterleaved;
  const int m1 = interleaved ? 2 * plan.pp : std::max(plan.pp, 2);
  const int m2 = interleaved ? 3 * plan.pp : m1 + 1;
  CoarseFigures f;
  if (m <= m2) {
    f = simulate(plan);
  } else {
    ParallelPlan shorter = plan;
    shorter.global_batch = plan.dp * plan.micro_batch * m1;
    const CoarseFigures a = simulate(shorter);
    shorter.global_batch = plan.dp * plan.micro_batch * m2;
    const CoarseFigures b = simulate(shorter);
    f = extend(a, b, static_cast<double>(m - m1) / (m2 - m1));
  }
  e.estimated = true;
  e.step_time = Seconds(f.step);
  e.compute = Seconds(f.compute);
  e.exposed_comm = Seconds(f.exposed);
  e.host_wait = Seconds(f.host_wait);
  const double bubble = f.step - f.compute - f.exposed;
  e.bubble = Seconds(bubble < 0 && bubble > -1e-9 * f.step ? 0.0 : bubble);  // rounding residue: none
  e.groups = f.groups;
  const double world = world_size(plan);
  e.tokens_per_s = static_cast<double>(plan.global_batch) * static_cast<double>(model_.seq) / f.step;
  if (peak_.value() > 0) {
    e.mfu = model_flops(model_, plan.lora, plan.global_batch).value() / (f.step * world * peak_.value());
    e.hfu = f.gemm_flops * plan.tp * plan.dp * plan.cp / (f.step * world * peak_.value());
  }
  return e;
}

}  // namespace commscale::predict
