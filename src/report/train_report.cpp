#include "report/train_report.hpp"

#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/size.hpp"
#include "workload/model_spec.hpp"
#include "predict/calibration_sections.hpp"

namespace commscale {
namespace {

std::string ms(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }

std::string share(double part, double whole) {
  return whole > 0 ? fmt::format("{:5.1f}%", 100.0 * part / whole) : std::string("    -");
}

void print_header(std::ostream& out, const TrainReport& r) {
  const RunContext& c = r.context;
  fmt::print(out, "# commscale {} ({}) train: {} rank{} on {} host{}, backend {} ({})\n", c.commscale_version,
             c.git_sha, c.ranks.size(), c.ranks.size() == 1 ? "" : "s", c.hosts.size(), c.hosts.size() == 1 ? "" : "s",
             c.backend, c.comm_library);
  if (!c.backend_note.empty()) fmt::print(out, "# {}\n", c.backend_note);
  const auto& m = r.model;
  const auto& p = r.plan;
  fmt::print(out, "# model {}: {} layers, hidden {}, {} heads, seq {}, {}\n", m.name, m.layers, m.hidden, m.heads, m.seq,
             name(m.dtype));
  fmt::print(out, "# plan dp {} x tp {} x pp {}{} ({}), micro-batch {}, global batch {}, schedule {}\n", p.dp, p.tp,
             p.pp, p.cp > 1 ? fmt::format(" x cp {} ({})", p.cp, name(p.cp_comm)) : "", p.order, p.micro_batch,
             p.global_batch, name(p.schedule));
  const bool eager = p.kernels == KernelSet::kEager;
  fmt::print(out, "#      ZeRO {}, recompute {}, sequence parallel {}, flash attention {}, {} kernels{}\n",
             p.zero_stage, name(p.recompute), p.sequence_parallel ? "on" : "off", p.flash_attention ? "on" : "off",
             name(p.kernels),
             eager ? " (eager PyTorch's kernel list; each memory-bound kernel runs as commscale's streaming kernel of "
                     "its bytes, not as PyTorch's kernel)"
                   : "");
  if (const std::string saving = memory_saving_text(p); !saving.empty()) fmt::print(out, "#      {}\n", saving);
  // plan and predict default to Megatron-LM, which may reduce in another type: say so beside the bytes.
  const DataType reduced = gradient_reduction_type(p.framework, m.dtype);
  const DataType reduced_by_default = gradient_reduction_type(kDefaultFramework, m.dtype);
  fmt::print(out, "#      gradients reduced in {}{}\n", name(reduced),
             reduced == reduced_by_default
                 ? ""
                 : fmt::format(" (plan and predict default to {}, which reduces them in {}; --framework {} there "
                               "for this run's bytes)",
                               name(kDefaultFramework), name(reduced_by_default), name(p.framework)));
  fmt::print(out, "# {} warm-up and {} timed steps, timing {}; {}\n", r.warmup_steps, r.steps, r.timing, r.method);
  if (r.host) {
    fmt::print(out, "# host: ops issued at {}'s host costs (the larger of its cost and commscale's own per op), "
               "{:.1f} us per step, sync {}; {}\n",
               r.host->framework, to_us(r.host->step), name(r.host->sync), r.host->source);
  }
  fmt::print(out, "# memory per rank: {} allocated for the step's data ({} modelled, without the workspace allowance)\n",
             format_size(r.pool), format_size(r.modelled));
  for (const RankPlacement& p : c.ranks) {
    if (p.device >= 0) {
      fmt::print(out, "#  Rank {:2} on {} device {} [{}] {}\n", p.rank, p.host, p.device, p.pci_bus_id, p.gpu_name);
    }
  }
}

}  // namespace

void print_train_text(std::ostream& out, const TrainReport& r) {
  print_header(out, r);
  const JobSummary& s = r.summary;
  const double t = s.step_time_s;
  fmt::print(out, "\nstep time          {:>12}   (median of {} steps)\n", ms(t), std::max(r.step_s.size(), r.step_only_s.size()));
  if (!s.steps.empty()) {
    fmt::print(out, "  compute          {:>12}  {}\n", ms(s.compute_s), share(s.compute_s, t));
    fmt::print(out, "  exposed comm     {:>12}  {}\n", ms(s.exposed_comm_s), share(s.exposed_comm_s, t));
    fmt::print(out, "  bubble / idle    {:>12}  {}\n", ms(s.bubble_s), share(s.bubble_s, t));
    fmt::print(out, "\ncommunication by group (per rank, median):   busy        exposed\n");
    for (const auto& [group, g] : s.groups) {
      fmt::print(out, "  {:<12} {:>14} {:>14}\n", group, ms(g.busy.value()), ms(g.exposed.value()));
    }
  }
  fmt::print(out, "\nthroughput         {:.4g} tokens/s, {:.2f} TFLOP/s per GPU (model), {:.2f} (hardware)\n",
             s.tokens_per_s, s.tflops_per_gpu, s.hardware_tflops_per_gpu);
  if (s.mfu && r.peak_tflops) {
    fmt::print(out, "MFU                {:.1f}% of {} {} at {:.1f} TFLOP/s (HFU {:.1f}%)\n", *s.mfu * 100.0, r.gpu, r.math,
               *r.peak_tflops, s.hfu.value_or(0) * 100.0);
  } else {
    fmt::print(out, "MFU                n/a ({})\n", r.gpu.empty() ? "no catalog peak for this backend" : r.gpu);
  }
  if (s.per_op_overhead) {
    fmt::print(out, "per-op timing      costs {:+.2f}% of the step ({} per-op vs {} whole-step median)\n",
               *s.per_op_overhead * 100.0, ms(t), ms(*s.step_only_time_s));
  }
  if (!r.gemm_checks.empty()) {
    fmt::print(out, "\nGEMMs of rank 0, inside the step against alone (median):\n");
    fmt::print(out, "  {:>7} {:>7} {:>7} {:>5} {:>5}  {:>10} {:>10}  {:>8} {:>8}  {:>6}\n", "m", "n", "k", "batch",
               "calls", "step us", "alone us", "step TF", "alone TF", "rate");
    for (const GemmCheck& c : r.gemm_checks) {
      const double flops = c.gemm.flops.value() / 1e12;
      fmt::print(out, "  {:>7} {:>7} {:>7} {:>5} {:>5}  {:>10.1f} {:>10.1f}  {:>8.1f} {:>8.1f}  {:>5.1f}%\n", c.gemm.m,
                 c.gemm.n, c.gemm.k, c.gemm.batch, c.calls_per_step, c.in_step_s * 1e6, c.standalone_s * 1e6,
                 flops / c.in_step_s, flops / c.standalone_s, c.ratio() * 100.0);
    }
  }
  if (!r.comm_rates.empty()) {
    fmt::print(out, "\ncommunication inside the step (from the last rank's arrival, median over ranks, calls, steps):\n");
    fmt::print(out, "  {:<10} {:<15} {:>10} {:>5} {:>6}  {:>11} {:>9} {:>9}\n", "group", "call", "size", "ranks", "calls",
               "time us", "algbw", "busbw");
    for (const CommRate& c : r.comm_rates) {
      fmt::print(out, "  {:<10} {:<15} {:>10} {:>5} {:>6}  {:>11.1f} {:>9.2f} {:>9.2f}\n", c.group, c.call,
                 format_size(c.size), c.ranks, c.calls, c.median.value() * 1e6, c.algbw.value(), c.busbw.value());
    }
  }
  if (!s.steps.empty()) {
    fmt::print(out, "\nper rank (last step):  {:>12} {:>12} {:>12}\n", "compute", "exposed", "bubble");
    for (const RankBreakdown& rb : s.steps.back().ranks) {
      fmt::print(out, "  rank {:<5}            {:>12} {:>12} {:>12}\n", rb.rank, ms(rb.compute.value()),
                 ms(rb.exposed_comm.value()), ms(rb.bubble.value()));
    }
  }
  out.flush();
}

nlohmann::json train_json(const TrainReport& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (std::size_t i = 0; i < r.summary.steps.size(); ++i) {
    const StepBreakdown& b = r.summary.steps[i];
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankBreakdown& rb : b.ranks) {
      ranks.push_back({{"rank", rb.rank},
                       {"compute_s", rb.compute.value()},
                       {"exposed_comm_s", rb.exposed_comm.value()},
                       {"bubble_s", rb.bubble.value()}});
    }
    steps.push_back({{"step", b.step},
                     {"step_time_s", i < r.step_s.size() ? r.step_s[i] : b.step_time.value()},
                     {"compute_s", b.compute.value()},
                     {"exposed_comm_s", b.exposed_comm.value()},
                     {"bubble_s", b.bubble.value()},
                     {"ranks", std::move(ranks)}});
  }
  return {{"schema_version", kTrainSchemaVersion},
          {"kind", "commscale-train"},
          {"context", r.context},
          {"model", model_to_json(r.model)},
          {"plan", plan_to_json(r.plan)},
          {"config",
           {{"warmup_steps", r.warmup_steps},
            {"steps", r.steps},
            {"timing", r.timing},
            {"method", r.method},
            {"gpu", r.gpu},
            {"peak_tflops", r.peak_tflops ? nlohmann::json(*r.peak_tflops) : nlohmann::json(nullptr)},
            {"memory_pool_bytes", r.pool.count()},
            {"memory_modelled_bytes", r.modelled.count()},
            {"host_framework", r.host ? nlohmann::json(predict::section_json(*r.host)) : nlohmann::json(nullptr)}}},
          {"summary", r.summary},
          {"step_times_s", r.step_s},
          {"step_only_times_s", r.step_only_s},
          {"gemm_checks", r.gemm_checks},
          {"comm_rates", r.comm_rates},
          {"steps", std::move(steps)}};
}

std::string train_csv(const TrainReport& r) {
  std::string text = "step,rank,step_time_s,compute_s,exposed_comm_s,bubble_s\n";
  for (std::size_t i = 0; i < r.summary.steps.size(); ++i) {
    const StepBreakdown& b = r.summary.steps[i];
    const double step = i < r.step_s.size() ? r.step_s[i] : b.step_time.value();
    for (const RankBreakdown& rb : b.ranks) {
      text += fmt::format("{},{},{:.9f},{:.9f},{:.9f},{:.9f}\n", b.step, rb.rank, step, rb.compute.value(),
                          rb.exposed_comm.value(), rb.bubble.value());
    }
  }
  return text;
}

}  // namespace commscale
