#include "parallel/plan_request.hpp"

#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

bool flag_model(const ModelFlags& f) { return f.preset || f.model_file || f.hf_config; }

// A plan key of the plan file (plan_file.hpp) beside the flag it stands for: whether the flag was given,
// and whether the file has the key.
struct PlanKey {
  std::string_view flag;
  bool given = false;
  bool in_file = false;
};

// In the plan file's key order.
std::array<PlanKey, 21> plan_keys(const PlanRequest& r) {
  const PlanFlags& f = r.plan;
  const PlanFileFields none;
  const PlanFileFields& p = r.plan_file ? r.plan_file->plan : none;
  return {{{"--world", f.world.has_value(), p.world.has_value()},
           {"--dp", f.dp.has_value(), p.dp.has_value()},
           {"--tp", f.tp.has_value(), p.tp.has_value()},
           {"--pp", f.pp.has_value(), p.pp.has_value()},
           {"--sp", f.sp.has_value(), p.sp.has_value()},
           {"--zero", f.zero.has_value(), p.zero.has_value()},
           {"--recompute", f.recompute.has_value(), p.recompute.has_value()},
           {"--flash-attn", f.flash_attention.has_value(), p.flash_attn.has_value()},
           {"--kernels", f.kernels.has_value(), p.kernels.has_value()},
           {"--micro-batch", f.micro_batch.has_value(), p.micro_batch.has_value()},
           {"--global-batch", f.global_batch.has_value(), p.global_batch.has_value()},
           {"--schedule", f.schedule.has_value(), p.schedule.has_value()},
           {"--chunks", f.chunks.has_value(), p.chunks.has_value()},
           {"--order", f.order.has_value(), p.order.has_value()},
           {"--bucket-mb", f.bucket_mib.has_value(), p.bucket_mib.has_value()},
           {"--ep", f.ep.has_value(), p.ep.has_value()},
           {"--etp", f.etp.has_value(), p.etp.has_value()},
           {"--cp", f.cp.has_value(), p.cp.has_value()},
           {"--cp-comm-type", f.cp_comm_type.has_value(), p.cp_comm_type.has_value()},
           {"--fp8", f.fp8.has_value(), p.fp8.has_value()},
           {"--fp8-dispatch", f.fp8_dispatch.has_value(), p.fp8_dispatch.has_value()}}};
}

// The flag's value if given, else the plan file's, else the default.
template <class T, class U>
T pick(const std::optional<T>& flag, const std::optional<U>& file, const T& fallback) {
  if (flag) return *flag;
  if (file) return static_cast<T>(*file);
  return fallback;
}

bool plan_file_fp8(const PlanRequest& r) { return r.plan_file && r.plan_file->plan.fp8.has_value(); }
bool plan_file_fp8_dispatch(const PlanRequest& r) {
  return r.plan_file && r.plan_file->plan.fp8_dispatch.has_value();
}

MegatronPeers peers_of(const PlanRequest& r) {
  return {r.model.shape.kv_heads.has_value(),
          r.plan.recompute.has_value(),
          r.plan.zero.has_value(),
          r.plan.chunks.has_value(),
          r.plan.schedule.has_value(),
          r.plan.fp8.has_value() || plan_file_fp8(r),
          r.plan.fp8_dispatch.has_value() || plan_file_fp8_dispatch(r)};
}

ModelSource source_of(const PlanRequest& r) {
  const ModelFlags& f = r.model;
  ModelSource source;
  if (flag_model(f) || !r.plan_file) {
    source.preset = f.preset.value_or("");
    source.file_path = f.model_file.value_or("");
    source.hf_config_path = f.hf_config.value_or("");
    return source;
  }
  const PlanFileModel& m = r.plan_file->model;
  source.preset = m.preset;
  source.file_path = m.model_file;
  source.hf_config_path = m.hf_config;
  if (m.preset.empty() && m.model_file.empty() && m.hf_config.empty() && m.document) {
    source.document = m.document;
    source.origin = fmt::format("{}: model", r.plan_file->path);
  }
  return source;
}

// --world and --dp: either may be left out and follows from the other.
int data_parallel_size(const PlanRequest& r, const PlanFileFields& file, const ParallelPlan& p, int* world) {
  const std::optional<int> given_world = r.plan.world ? r.plan.world : file.world;
  const std::optional<int> given_dp = r.plan.dp ? r.plan.dp : file.dp;
  const int tp_pp = checked_world_size(1, p.tp, p.pp, p.cp);
  const int dp = given_dp ? *given_dp : (given_world ? *given_world / tp_pp : 1);
  if (given_world && !given_dp && (*given_world < 1 || *given_world % tp_pp != 0)) {
    if (p.cp > 1) {
      throw InputError("--world",
                       fmt::format("{} ranks do not split into tp {} x pp {} x cp {}", *given_world, p.tp, p.pp, p.cp),
                       "a multiple of tp * pp * cp");
    }
    throw InputError("--world", fmt::format("{} ranks do not split into tp {} x pp {}", *given_world, p.tp, p.pp),
                     "a multiple of tp * pp");
  }
  *world = given_world ? *given_world : checked_world_size(dp, p.tp, p.pp, p.cp);
  return dp;
}

// What the framework does where no flag (nor the plan file) said otherwise (framework.hpp).
void apply_framework(const PlanRequest& r, const PlanFileFields& file, ParallelPlan& p) {
  const PlanFlags& f = r.plan;
  p.framework = f.framework ? parse_framework(*f.framework, "--framework") : r.default_framework;
  const FrameworkDefaults& d = defaults_of(p.framework);
  if (!f.kernels && !file.kernels) p.kernels = d.kernels;
  if (!f.flash_attention && !file.flash_attn) p.flash_attention = d.flash_attention;  // --no-flash-attn included
  if (!f.optimizer) p.optimizer = d.optimizer;
  if (!f.zero && !file.zero && !r.megatron.distributed_optimizer) p.zero_stage = d.zero_stage;
  p.overlap_grad_reduce = d.overlap_grad_reduce;
}

CheckedPlan plan_of(const PlanRequest& r) {
  TransformerConfig model = resolve_model(r);
  const PlanFlags& f = r.plan;
  const PlanFileFields none;
  const PlanFileFields& file = r.plan_file ? r.plan_file->plan : none;
  const PlanFlagValues d;
  int world = 0;
  ParallelPlan p;
  p.tp = pick(f.tp, file.tp, d.tp);
  p.pp = pick(f.pp, file.pp, d.pp);
  p.cp = pick(f.cp, file.cp, d.cp);
  p.cp_comm = parse_cp_comm_type(pick(f.cp_comm_type, file.cp_comm_type, d.cp_comm_type), "--cp-comm-type");
  p.dp = data_parallel_size(r, file, p, &world);
  p.sequence_parallel = pick(f.sp, file.sp, d.sp);
  p.zero_stage = pick(f.zero, file.zero, d.zero);
  p.recompute = parse_recompute(pick(f.recompute, file.recompute, d.recompute), "--recompute");
  p.optimizer = parse_optimizer(f.optimizer.value_or(d.optimizer), "--optimizer");
  p.offload_optimizer = parse_offload_device(f.offload_optimizer.value_or(d.offload_optimizer), "--offload-optimizer");
  p.offload_params = parse_offload_device(f.offload_params.value_or(d.offload_params), "--offload-params");
  p.offload_activations = f.offload_activations.value_or(d.offload_activations);
  p.ep = pick(f.ep, file.ep, d.ep);
  p.etp = pick(f.etp, file.etp, d.etp);
  p.lora = resolve_lora(f);
  p.fp8 = parse_fp8_recipe(pick(f.fp8, file.fp8, d.fp8), "--fp8");
  p.fp8_dispatch = pick(f.fp8_dispatch, file.fp8_dispatch, d.fp8_dispatch);
  p.flash_attention = pick(f.flash_attention, file.flash_attn, d.flash_attention);
  p.kernels = parse_kernel_set(pick(f.kernels, file.kernels, d.kernels), "--kernels");
  p.micro_batch = pick(f.micro_batch, file.micro_batch, d.micro_batch);
  p.schedule = parse_schedule(pick(f.schedule, file.schedule, d.schedule), "--schedule");
  p.chunks = pick(f.chunks, file.chunks, d.chunks);
  p.order = pick(f.order, file.order, d.order);
  // 0 given reads as left out: 4 microbatches per pipeline stage, 1 without a pipeline.
  const int global_batch = pick(f.global_batch, file.global_batch, 0);
  p.global_batch = global_batch != 0 ? global_batch : p.dp * p.micro_batch * (p.pp > 1 ? 4 * p.pp : 1);
  const double bucket_mib = pick(f.bucket_mib, file.bucket_mib, d.bucket_mib);
  p.bucket_bytes = Bytes(static_cast<std::uint64_t>(std::llround(bucket_mib * static_cast<double>(kMiB))));
  p.first_stage_layers = f.first_stage_layers.value_or(0);
  p.last_stage_layers = f.last_stage_layers.value_or(0);
  apply_framework(r, file, p);
  apply_megatron_plan_flags(r.megatron, peers_of(r), model, p);
  return CheckedPlan(std::move(model), std::move(p), world);
}

// A value the plan file gave is named by its file and key, not by the flag it stands for.
[[noreturn]] void rethrow_from_file(const PlanRequest& r, const InputError& e) {
  const std::string message = e.what();
  for (const PlanKey& key : plan_keys(r)) {
    if (key.given || !key.in_file) continue;
    const std::string flag(key.flag);
    if (message.rfind(flag + ":", 0) == 0) {
      throw InputError(fmt::format("{}: plan.{} (as {})", r.plan_file->path, plan_file_key(flag), flag),
                       message.substr(flag.size() + 2));
    }
  }
  throw e;
}

}  // namespace

TransformerConfig resolve_model(const PlanRequest& r) {
  const ModelFlags& f = r.model;
  ModelOverrides o = f.shape;
  if (f.activation) o.activation = parse_activation(*f.activation, "--activation");
  if (f.dtype) o.dtype = parse_data_type(*f.dtype, "--dtype");
  apply_megatron_model_flags(r.megatron, peers_of(r), o);
  TransformerConfig m = resolve_model(source_of(r), o);
  check_megatron_model(r.megatron, m);
  return m;
}

CheckedPlan resolve(const PlanRequest& r) {
  try {
    return plan_of(r);
  } catch (const InputError& e) {
    if (!r.plan_file) throw;
    rethrow_from_file(r, e);
  }
}

LoraSpec resolve_lora(const PlanFlags& f) {
  if (f.lora_rank && *f.lora_rank < 1) {
    throw InputError("--lora-rank", fmt::format("{}", *f.lora_rank),
                     "the adapters' rank, 1 or more (leave the flag out to train every weight)");
  }
  const std::array<std::pair<const char*, bool>, 2> shaping = {
      {{"--lora-base-bits", f.lora_base_bits.has_value()}, {"--lora-targets", f.lora_targets.has_value()}}};
  for (const auto& [flag, given] : shaping) {
    if (!f.lora_rank && given) {
      throw InputError(flag, "given without --lora-rank", "--lora-rank R too: it only shapes LoRA's adapters");
    }
  }
  const PlanFlagValues d;
  LoraSpec l;
  l.rank = f.lora_rank.value_or(d.lora_rank);
  l.base_bits = f.lora_base_bits.value_or(d.lora_base_bits);
  l.targets = parse_lora_targets(f.lora_targets.value_or(d.lora_targets), "--lora-targets");
  return l;
}

bool plan_value_given(const PlanRequest& r, std::string_view flag) {
  for (const PlanKey& key : plan_keys(r)) {
    if (key.flag == flag) return key.given || key.in_file;
  }
  throw std::invalid_argument(fmt::format("plan_value_given: {} is not a flag a plan file gives", flag));
}

std::vector<std::string> flags_over_plan_file(const PlanRequest& r) {
  std::vector<std::string> out;
  if (!r.plan_file) return out;
  const ModelFlags& m = r.model;
  if (flag_model(m)) out.emplace_back(m.preset ? "--model" : m.model_file ? "--model-file" : "--hf-config");
  for (const PlanKey& key : plan_keys(r)) {
    if (key.given && key.in_file) out.emplace_back(key.flag);
  }
  return out;
}

}  // namespace commscale
