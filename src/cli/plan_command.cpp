// `commscale plan`: validates a parallel plan for a model and a world size, and reports memory per
// rank (with a fit verdict for a GPU), FLOPs per step, bytes per group per step, and the step
// program (checked deadlock-free, optionally dumped as JSON). Pure: it starts no MPI.
//
// Exit codes: 0 the plan is valid (and fits, when a GPU memory size is given); 1 it does not fit;
// 2 the model or plan is invalid; 3 the built program failed its deadlock check (a bug here).

#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/option_rules.hpp"
#include "cli/plan_file_options.hpp"
#include "cli/number_options.hpp"
#include "core/atomic_file.hpp"
#include "core/json_text.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "parallel/plan_summary.hpp"
#include "parallel/prepared_step.hpp"
#include "program/program_json.hpp"

namespace commscale {
namespace {

struct PlanArguments {
  ModelPlanArguments model_plan;
  double gpu_memory_gib = 0.0;  // 0: no fit verdict
  double workspace_gib = 2.0;
  bool json = false;
  std::string dump_path;
  std::string command_line;
  std::optional<CheckedPlan> resolved;
  MemoryOptions memory;
  std::optional<Bytes> gpu_memory;
};

void finish(PlanArguments& a) {
  merge_plan_file(a.model_plan);
  a.resolved = finish_model_plan_options(a.model_plan);
  // Seam for the hardware catalog: `--gpu NAME` will set gpu_memory from the GPU's catalog entry here.
  if (a.gpu_memory_gib > 0) a.gpu_memory = gib_to_bytes(a.gpu_memory_gib);
  a.memory.workspace = gib_to_bytes(a.workspace_gib);
  if (!a.dump_path.empty()) ensure_writable(a.dump_path, "--dump-program");
}

std::string gib(Bytes b) { return fmt::format("{:.2f}", b.gib()); }

void print_header(const PlanSummary& s, int world, std::ostream& out) {
  const TransformerConfig& m = s.model;
  const ParallelPlan& p = s.plan;
  out << fmt::format(
      "model    {}: {} layers, hidden {}, {} heads ({} KV), MLP {} {}, vocab {}, seq {}, {}; {:.3f} B parameters\n",
      m.name, m.layers, m.hidden, m.heads, m.kv_heads, m.ffn, name(m.activation), m.vocab, m.seq, name(m.dtype),
      static_cast<double>(s.parameters) / 1e9);
  out << fmt::format(
      "plan     {} ranks = dp {} x tp {} x pp {}{} (order {}); {}{}; micro-batch {}, global batch {}: {} "
      "microbatches per step\n",
      world, p.dp, p.tp, p.pp, p.cp > 1 ? fmt::format(" x cp {}", p.cp) : "", p.order, name(p.schedule),
      p.chunks > 1 ? fmt::format(" with {} chunks per stage", p.chunks) : stage_split_text(m, p), p.micro_batch,
      p.global_batch, s.microbatches);
  out << fmt::format("         ZeRO {}, recompute {}, sequence parallel {}, flash attention {}, {} kernels, DP buckets {}\n",
                     p.zero_stage, name(p.recompute), p.sequence_parallel ? "on" : "off",
                     p.flash_attention ? "on" : "off", name(p.kernels), format_size(p.bucket_bytes));
  if (const std::string saving = memory_saving_text(p); !saving.empty()) out << "         " << saving << "\n";
  out << fmt::format("framework {} (--framework)\n", framework_text(p.framework, m.dtype));
  if (const std::string experts = experts_plan_text(m, p); !experts.empty()) out << "experts  " << experts << "\n";
  if (const std::string context = context_parallel_text(m, p); !context.empty()) out << "context  " << context << "\n";
  out << fmt::format(
      "FLOPs    model {:.4g} per step (Megatron-LM formula{}, the MFU basis); hardware {:.4g} (every rank's "
      "GEMMs, recompute included)\n",
      s.model_flops_per_step.value(), p.lora.enabled() ? " for LoRA" : "", s.hardware_flops_per_step.value());
  std::size_t most_ops = 0;
  for (const StageSummary& st : s.stages) most_ops = std::max(most_ops, st.ops);
  out << fmt::format("program  up to {} ops per rank, {} distinct op lists; {}\n", most_ops, s.stages.size(),
                     s.program_problems.empty() ? "deadlock-free (checked)" : "FAILED its deadlock check");
}

// Consecutive stages with equal rows print once, as "a-b".
template <class Row>
void print_collapsed(const std::vector<Row>& rows, std::ostream& out) {
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j + 1 < rows.size() && rows[j + 1].second == rows[i].second) ++j;
    const std::string stages = i == j ? fmt::format("{}", i) : fmt::format("{}-{}", i, j);
    for (const std::string& line : rows[i].second) out << fmt::format("{:>7}  {}\n", stages, line);
    i = j + 1;
  }
}

void print_memory(const PlanSummary& s, std::ostream& out) {
  out << "\nmemory per rank, GiB\n";
  out << fmt::format("{:>7}  {:>12} {:>8} {:>8} {:>9} {:>11} {:>7} {:>6} {:>9} {:>8}\n", "stage", "params/rank",
                     "weights", "grads", "optimizer", "activations", "logits", "comm", "workspace", "total");
  std::vector<std::pair<int, std::vector<std::string>>> rows;
  for (const StageMemory& st : s.memory) {
    const MemoryBreakdown& b = st.bytes;
    rows.push_back({st.stage,
                    {fmt::format("{:>12} {:>8} {:>8} {:>9} {:>11} {:>7} {:>6} {:>9} {:>8}", st.parameters,
                                 gib(b.weights), gib(b.gradients), gib(b.optimizer), gib(b.activations), gib(b.logits),
                                 gib(b.communication), gib(b.workspace), gib(b.total()))}});
  }
  print_collapsed(rows, out);
  if (s.fit) out << "fit      " << s.fit->message << "\n";
  if (largest_host_total(s.memory).count() == 0) return;
  out << "\nhost memory per rank (offloaded), GiB\n";
  out << fmt::format("{:>7}  {:>8} {:>8} {:>9} {:>11} {:>8}\n", "stage", "weights", "grads", "optimizer",
                     "activations", "total");
  rows.clear();
  for (const StageMemory& st : s.memory) {
    const HostMemory& h = st.host;
    rows.push_back({st.stage,
                    {fmt::format("{:>8} {:>8} {:>9} {:>11} {:>8}", gib(h.weights), gib(h.gradients),
                                 gib(h.optimizer), gib(h.activations), gib(h.total()))}});
  }
  print_collapsed(rows, out);
}

void print_traffic(const PlanSummary& s, std::ostream& out) {
  out << "\ncommunication per rank per step (bytes as nccl-tests sizes them)\n";
  out << fmt::format("{:>7}  {:<10} {:<15} {:>8} {:>14}\n", "stage", "group", "kind", "count", "bytes");
  std::vector<std::pair<int, std::vector<std::string>>> rows;
  for (const StageSummary& st : s.stages) {
    std::vector<std::string> lines;
    for (const GroupTraffic& t : st.traffic) {
      lines.push_back(fmt::format("{:<10} {:<15} {:>8} {:>14}", t.group, t.kind, t.count, format_size(t.bytes)));
    }
    if (lines.empty()) lines.push_back("(none)");
    rows.push_back({st.stage, std::move(lines)});
  }
  print_collapsed(rows, out);
}

int run_plan(const PlanArguments& a) {
  try {
    const PreparedStep step = prepare_step(*a.resolved, a.memory, a.gpu_memory);
    const PlanSummary& s = step.summary;
    if (!a.dump_path.empty()) write_file_atomically(a.dump_path, json_text(nlohmann::json(step.program)));
    if (a.json) {
      nlohmann::json doc = summary_to_json(s);
      doc["command_line"] = a.command_line;
      doc["context"] = inputs_context(a.model_plan, {});
      std::cout << json_text(doc, 2);
    } else {
      std::cout << inputs_line(a.model_plan, {});
      print_header(s, a.resolved->world(), std::cout);
      print_memory(s, std::cout);
      print_traffic(s, std::cout);
    }
    for (const std::string& problem : s.program_problems) std::cerr << "commscale: step program: " << problem << "\n";
    if (!s.program_problems.empty()) return static_cast<int>(ExitCode::kRuntime);
    if (s.fit && !s.fit->fits) return static_cast<int>(ExitCode::kCheckFailed);
    return static_cast<int>(ExitCode::kOk);
  } catch (const Error& e) {
    std::cerr << "commscale: " << e.what() << "\n";
    return static_cast<int>(e.code());
  }
}

}  // namespace

void add_plan_command(CLI::App& app, CommandAction* action, const std::string& command_line) {
  auto args = std::make_shared<PlanArguments>();
  args->command_line = command_line;
  CLI::App* cmd = app.add_subcommand(
      "plan", "Validate a parallel plan for a model: memory per rank, FLOPs and traffic per step, the step program");
  add_model_plan_options(*cmd, &args->model_plan);
  add_real_option(*cmd, "--gpu-memory-gib", &args->gpu_memory_gib,
                  "check the memory per rank against a GPU of this many GiB",
                  {0.0, 1048576.0, "a size in GiB from 0 (no check) to 1048576", "", false});
  add_real_option(*cmd, "--workspace-gib", &args->workspace_gib,
                  "allowance per rank for the CUDA context, cuBLAS and NCCL buffers and fragmentation",
                  workspace_gib_range())
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the summary as JSON");
  mark_output_file(
      cmd->add_option("--dump-program", args->dump_path, "write the step program of every rank to this file as JSON"));
  cmd->callback([args, action] {
    finish(*args);
    *action = [args] { return run_plan(*args); };
  });
}

}  // namespace commscale
