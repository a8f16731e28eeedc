#include "predict/prediction.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "predict/op_costs.hpp"
#include "predict/timed_simulation.hpp"
#include "workload/layer_dims.hpp"

namespace commscale::predict {
namespace {

JobSummary job_summary(const StepBreakdown& b, int world, const Prediction& p) {
  JobSummary s;
  s.world_size = world;
  s.step_time_s = b.step_time.value();
  s.compute_s = b.compute.value();
  s.exposed_comm_s = b.exposed_comm.value();
  s.bubble_s = b.bubble.value();
  // The bubble is what remains of the step: rounding can leave -1e-17 s where there is none.
  if (s.bubble_s < 0 && s.bubble_s > -1e-9 * s.step_time_s) s.bubble_s = 0.0;
  s.groups = b.groups;
  if (s.step_time_s > 0) {
    const double per_gpu = s.step_time_s * world;
    s.tflops_per_gpu = p.model_flops.value() / per_gpu / 1e12;
    s.hardware_tflops_per_gpu = p.hardware_flops.value() / per_gpu / 1e12;
    s.tokens_per_s = static_cast<double>(p.plan.global_batch) * static_cast<double>(p.model.seq) / s.step_time_s;
    if (p.peak.value() > 0) {
      s.mfu = s.tflops_per_gpu * 1e12 / p.peak.value();
      s.hfu = s.hardware_tflops_per_gpu * 1e12 / p.peak.value();
    }
  }
  s.steps.push_back(b);
  return s;
}

// Per group name of the breakdown ("pp" joins the two pipeline directions): links and time.
// `host_copy`: the rate of copies to and from host memory (offload's "offload" group, where the step has one).
std::vector<GroupReport> group_reports(const ProgramCosts& costs, const StepBreakdown& b, GBps host_copy) {
  std::vector<GroupReport> out;
  for (const auto& [name, links] : costs.slowest_groups()) {
    GroupReport g{name, links.ranks, links.nodes, links.bottleneck_class(), links.bus_bw(), {}, {}};
    out.push_back(g);
  }
  for (const auto& [group, flow] : costs.slowest_flows()) {
    const std::string& name = group;  // a structured binding cannot be captured before C++20's P1091 (clang 14)
    const auto same = std::find_if(out.begin(), out.end(), [&](const GroupReport& g) { return g.name == name; });
    if (same == out.end()) {
      out.push_back({name, 2, flow.path_class == hw::PathClass::kNetwork ? 2 : 1, flow.path_class, flow.bw, {}, {}});
    } else if (flow.bw < same->bus_bw) {
      same->link = flow.path_class;
      same->bus_bw = flow.bw;
    }
  }
  if (b.groups.contains(std::string(kOffloadGroup))) {
    out.push_back({std::string(kOffloadGroup), 1, 1, hw::PathClass::kHostStaged, host_copy, {}, {}});
  }
  for (GroupReport& g : out) {
    const auto t = b.groups.find(g.name);
    if (t == b.groups.end()) continue;
    g.busy = t->second.busy;
    g.exposed = t->second.exposed;
  }
  return out;
}

// The host's figures of a simulation: issue time of the busiest simulated rank, the GPU's wait for
// the host as a mean over all ranks (each simulated rank stands for its class).
void record_host(const Simulation& sim, Prediction& p) {
  double waited = 0.0;
  int ranks = 0;
  for (std::size_t i = 0; i < sim.issued.size(); ++i) {
    if (!sim.issued[i].empty()) p.host_issue = std::max(p.host_issue, Seconds(sim.issued[i].back()));
    waited += sim.host_wait[i] * sim.class_size[i];
    ranks += sim.class_size[i];
  }
  if (ranks > 0) p.host_wait = Seconds(waited / ranks);
}

// Prediction::attribution of the final simulation. `timed`: the costs the step was simulated with
// before interference; `interfered`: whether interference re-simulated it (else it added nothing).
SimAttribution attribute(const ProgramSet& set, const Simulation& sim, const ProgramCosts& costs, const OpCosts& timed,
                         bool interfered) {
  SimAttribution out(sim.simulated.size());
  for (std::size_t i = 0; i < sim.simulated.size(); ++i) {
    const int rank = sim.simulated[i];
    const std::vector<Op>& ops = ops_of(set, rank);
    out[i].resize(ops.size());
    for (const Op& op : ops) {
      EventAttribution& a = out[i][op.id];
      if (!sim.host_hold.empty()) a.host = Seconds(sim.host_hold[i][op.id]);
      if (std::holds_alternative<CollectiveOp>(op.payload) || std::holds_alternative<PointToPoint>(op.payload)) {
        a.peers = Seconds(sim.data_start[i][op.id] - sim.start[i][op.id]);
        a.latency = costs.latency(rank, op);
      }
      if (interfered) {
        const double added = sim.end[i][op.id] - sim.data_start[i][op.id] - timed.duration(rank, op).value();
        a.interference = Seconds(std::max(0.0, added));  // where nothing was added, rounding may leave -1e-19 s
      }
    }
  }
  return out;
}

}  // namespace

PreparedStep prepare_for(const CheckedPlan& plan, const Target& target, const MemoryOptions& memory) {
  if (plan.world() > target.gpus()) {
    throw InputError("--world",
                     fmt::format("{} ranks on {} GPUs of {}", plan.world(), target.gpus(), target.cluster.name),
                     "no more ranks than the cluster's GPUs (--nodes)");
  }
  PreparedStep step = prepare_step(plan, memory, *target.cluster.gpu.memory.value);
  step.summary.fit = with_host_fit(*step.summary.fit, step.summary.memory, target.cluster, plan.world());
  return step;
}

Prediction predict_step(const PreparedStep& step, const Target& target, const PredictOptions& options) {
  Prediction p;
  p.model = step.model();
  p.plan = step.plan();
  p.cluster = target.cluster.name;
  p.cluster_file = target.cluster.file;
  p.gpu = target.cluster.gpu.name;
  p.nodes = target.nodes;
  p.gpus_per_node = target.cluster.gpus_per_node();
  if (target.calibration) p.calibration = target.calibration->file;
  p.notes = target.notes;
  p.validation = validation_line(target.validation, p.gpu, std::string(name(p.plan.framework)));
  const int world = step.checked.world();
  step.require_deadlock_free();
  const PlanSummary& summary = step.summary;
  p.model_flops = summary.model_flops_per_step;
  p.hardware_flops = summary.hardware_flops_per_step;
  p.memory = summary.memory;
  p.fit = summary.fit.value();
  std::string fallback;
  p.peak = dense_rate(target.cluster.gpu, p.model.dtype, DataType::kFloat32, &fallback).value_or(FlopsPerSecond(0.0));
  if (!fallback.empty()) p.notes.push_back(fallback);
  if (p.plan.offload_optimizer != OffloadDevice::kNone || p.plan.offload_activations) {
    p.notes.push_back(target.compute.host().source + "; copies from pinned host memory");
  }
  if (p.model.moe.enabled()) {
    const double skew = busiest_rank_share(p.model, p.plan.ep);
    const std::string capped =
        skew < p.model.moe.load_imbalance
            ? fmt::format(" (--load-imbalance {:g} capped at ep {}: the busiest rank receives at most all the rows)",
                          p.model.moe.load_imbalance, p.plan.ep)
            : "";
    p.notes.push_back(fmt::format(
        "experts: routing priced {}{} (each local expert's GEMMs on an even share of the rows, each all-to-all as "
        "NCCL's alltoall of the whole send buffer); one published MoE run checks these figures, Mixtral 8x7B on 64 "
        "H100s at -11.5% as balanced (src/workload/MOE.md)",
        skew > 1.0 ? fmt::format("from the busiest rank, at {:g}x the mean rows", skew) : std::string("as balanced"),
        capped));
  }

  LinkAnalyzer analyzer(target.graph, target.achievable);
  const ProgramCosts costs(step.program, target, analyzer);
  HostCosts host = target.host;
  if (host.sync_after_p2p && step.checked.plan().schedule == ScheduleKind::kInterleaved) {
    // Megatron's interleaved schedule batches each chunk's sends and receives (up to four) into one call;
    // the program issues them in another order, so a wait after each of its runs would not be Megatron's.
    host.sync_after_p2p = false;
    p.notes.push_back(
        "the host's wait for the GPU after each batch of pipeline sends and receives (Megatron's "
        "batch_p2p_sync) is not modelled for the interleaved schedule");
  }
  const SimulationOptions sim_options{.reduce = options.reduce, .host = &host};
  Simulation sim;
  const TimedSimulation passes =
      simulate_timed(step.program, costs, costs, target.clock, target.interference, sim_options, sim);
  p.clock_source = target.clock.source();
  p.clock_gemm_share = passes.clock.gemm_share;
  p.clock_speedup = passes.clock.speedup;
  p.clock_iterations = passes.clock.iterations;
  const OpCosts& timed = passes.timed(costs);
  const InterferenceResult& interference = passes.interference;
  p.interference_source = target.interference.source();
  p.interference_compute = Seconds(interference.added_compute_s);
  p.interference_comm = Seconds(interference.added_comm_s);
  p.interference_iterations = interference.iterations;
  const StepBreakdown b = simulated_breakdown(step.program, sim);
  p.host_framework = target.host.framework;
  p.host_source = target.host.source;
  p.host_sync_after_p2p = host.sync_after_p2p;
  record_host(sim, p);
  p.summary = job_summary(b, world, p);
  p.groups = group_reports(costs, b, target.compute.host().copy);
  for (const GroupReport& g : p.groups) p.exposed_by_link[std::string(hw::name(g.link))] += g.exposed;
  p.simulated_ranks = static_cast<int>(sim.simulated.size());
  for (const auto& ends : sim.end) p.simulated_ops += ends.size();
  if (options.keep_simulation) {
    p.attribution = attribute(step.program, sim, costs, timed, interference.iterations > 0);
    p.simulation = std::move(sim);
  }
  return p;
}

}  // namespace commscale::predict
