#pragma once

// What a user asked for, before any rule chose between its sources: the model and plan flags as given
// (each field set only where its flag was), Megatron-LM's flags (megatron_flags.hpp) and a plan file
// (plan_file.hpp). resolve() applies the precedence rules once for plan, train, predict, search, compare
// and diff-trace; cli/ only fills the request from the command line and prints the errors.
//
// Precedence (src/cli/INPUTS.md):
//  - the model: --model, --model-file or --hf-config replaces the plan file's model; the shape flags
//    (--layers, ...) and Megatron-LM's model flags override fields of whichever model is used (with
//    none, the flags alone describe it);
//  - a plan flag given wins over the plan file's value for it; the file's value wins over the
//    framework's default (--kernels, --flash-attn, --optimizer, --zero), which wins over the flag's own default;
//  - Megatron-LM's plan flags convert into recompute, ZeRO 1 and chunks, replace the plan file's values
//    for them, and are refused beside a flag that says otherwise on the command line;
//  - an error about a value the plan file gave names the file and key, not the flag
//    ("best.json: plan.tp (as --tp): ...").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/framework.hpp"
#include "parallel/megatron_flags.hpp"
#include "parallel/plan.hpp"
#include "parallel/plan_file.hpp"
#include "workload/model_spec.hpp"

namespace commscale {

// The model's flags, as typed: set where given.
struct ModelFlags {
  std::optional<std::string> preset;      // --model
  std::optional<std::string> model_file;  // --model-file
  std::optional<std::string> hf_config;   // --hf-config
  // --layers --hidden --heads --kv-heads --ffn --vocab --seq. Its activation, dtype, norm, positions, biases and
  // tied embeddings are resolve's to set, from --activation and --dtype below and from Megatron-LM's flags.
  ModelOverrides shape;
  std::optional<std::string> activation;  // parsed by resolve, naming --activation
  std::optional<std::string> dtype;       // parsed by resolve, naming --dtype
};

// The plan flags' values, each at its default: what a flag left out and absent from the plan file means
// (the command line binds its flags to one and shows these in --help).
struct PlanFlagValues {
  int tp = 1;
  int ep = 1;
  int etp = 1;  // commscale's default; Megatron-LM's is tp (MOE.md)
  int cp = 1;
  std::string cp_comm_type = "p2p";
  int pp = 1;
  bool sp = false;
  int zero = 0;
  std::string recompute = "none";
  std::string optimizer = "adam";
  std::string offload_optimizer = "none";
  std::string offload_params = "none";
  bool offload_activations = false;
  int lora_rank = 0;  // no LoRA
  int lora_base_bits = 16;
  std::string lora_targets = "qv";
  std::string fp8 = "none";
  bool fp8_dispatch = false;
  bool flash_attention = true;
  std::string kernels = "fused";
  int micro_batch = 1;
  std::string schedule = "1f1b";
  int chunks = 1;
  std::string order = "tp-dp-pp";
  double bucket_mib = 25.0;
};

// The plan's flags, as typed: set where given. Left out: --world and --dp follow from each other (1 without
// either), --global-batch is 4 microbatches per pipeline stage (1 microbatch without a pipeline), the end
// stages have as many layers as the others, --framework is the request's default; the rest PlanFlagValues'.
struct PlanFlags {
  std::optional<int> world;
  std::optional<int> tp;
  std::optional<int> pp;
  std::optional<int> dp;
  std::optional<int> ep;
  std::optional<int> etp;
  std::optional<int> cp;
  std::optional<std::string> cp_comm_type;
  std::optional<bool> sp;
  std::optional<int> zero;
  std::optional<std::string> recompute;
  std::optional<std::string> optimizer;
  std::optional<std::string> offload_optimizer;
  std::optional<std::string> offload_params;
  std::optional<bool> offload_activations;
  std::optional<int> lora_rank;
  std::optional<int> lora_base_bits;
  std::optional<std::string> lora_targets;
  std::optional<std::string> fp8;
  std::optional<bool> fp8_dispatch;
  std::optional<bool> flash_attention;  // --flash-attn / --no-flash-attn
  std::optional<std::string> kernels;
  std::optional<int> micro_batch;
  std::optional<int> global_batch;
  std::optional<std::string> schedule;
  std::optional<int> chunks;
  std::optional<std::string> order;
  std::optional<double> bucket_mib;
  std::optional<int> first_stage_layers;
  std::optional<int> last_stage_layers;
  std::optional<std::string> framework;
};

struct PlanRequest {
  ModelFlags model;
  PlanFlags plan;
  MegatronFlags megatron;
  std::optional<PlanFile> plan_file;                // --plan-file, read
  Framework default_framework = kDefaultFramework;  // without --framework
};

// The model: the source that wins, with the flags' overrides. Throws InputError naming the flag, the
// file or the file's key.
[[nodiscard]] TransformerConfig resolve_model(const PlanRequest& request);
// The model and the plan, checked together once. Throws InputError naming the flag, or the plan file and
// key for a value the file gave.
[[nodiscard]] CheckedPlan resolve(const PlanRequest& request);

// LoRA's flags alone (search and compare take them without a plan). Throws InputError naming the flag.
[[nodiscard]] LoraSpec resolve_lora(const PlanFlags& flags);

// Whether the value of a flag a plan file may give ("--kernels", plan_file.hpp) was given, on the command
// line or by the plan file.
[[nodiscard]] bool plan_value_given(const PlanRequest& request, std::string_view flag);
// The flags given that override a value of the plan file, the model's flag first, then the plan's in the
// file's key order (empty without a plan file).
[[nodiscard]] std::vector<std::string> flags_over_plan_file(const PlanRequest& request);

}  // namespace commscale
