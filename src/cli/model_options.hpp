#pragma once

// The flags that choose a model and a parallel plan, shared by `plan`, `train`, `predict` and
// `search`: add them to a subcommand, then turn them into a checked model and plan in its callback.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hw/gpu_spec.hpp"
#include "parallel/plan.hpp"
#include "parallel/plan_file.hpp"
#include "parallel/plan_request.hpp"
#include "predict/gpu_support.hpp"
#include "workload/transformer.hpp"

namespace commscale {

// Megatron-LM's flags that are not plain aliases, bound to CLI11 (parallel/megatron_flags.hpp converts them).
struct MegatronArguments {
  int layers_per_virtual_stage = 0;
  std::string recompute_granularity;
  bool recompute_activations = false;
  std::string recompute_method;
  int recompute_num_layers = 0;
  bool distributed_optimizer = false;
  bool overlap_grad_reduce = false;
  bool no_gradient_accumulation_fusion = false;
  bool moe_grouped_gemm = false;  // what commscale runs anyway: read, nothing to convert
  bool group_query_attention = false;
  bool multi_latent_attention = false;
  bool swiglu = false;
  std::string normalization;
  std::string position_embedding;
  bool disable_bias_linear = false;
  bool untie_embeddings = false;
  bool bf16 = false;
  bool fp16 = false;
  std::int64_t max_position_embeddings = 0;
  std::string fp8_format;
  std::string fp8_recipe;
  std::string moe_dispatch_fwd_dtype;
  std::string moe_token_dispatcher_type;
  std::string moe_layer_freq;
};

// The command line's model and plan flags, bound to CLI11 (a flag's value is its default until given), and
// the plan file once read. plan_request() turns them into the request parallel/plan_request.hpp resolves.
struct ModelPlanArguments {
  CLI::App* command = nullptr;  // the command the flags were added to, to ask which were given
  std::string model;
  std::string model_file;
  std::string hf_config;
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  std::int64_t ffn = 0;
  std::int64_t vocab = 0;
  std::int64_t seq = 0;
  std::string activation;
  std::string dtype;
  MoeConfig moe;  // --experts, --top-k, ... (read only where given)
  MlaConfig mla;  // --q-lora-rank, --kv-lora-rank, ... (read only where given)

  // Read only where given (plan_request.hpp says what leaving them out means).
  int world = 0;
  int dp = 0;
  int global_batch = 0;
  PlanFlagValues plan;
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  std::string framework;                            // --framework; empty: default_framework
  Framework default_framework = kDefaultFramework;  // train: commscale's own executor
  MegatronArguments megatron;

  // --plan-file, read by merge_plan_file (plan_file_options.hpp).
  std::string plan_file;
  std::optional<PlanFile> loaded_plan;
  std::vector<std::string> over_file;  // flags given that override a value of the plan file

  // The model and plan options added here, by their first long name ("--tp"): a command's own option of the
  // same name (search's --kernels) is not one of them.
  std::map<std::string, const CLI::Option*> options;
};

// The request the flags given make (parallel/plan_request.hpp), with the plan file once read.
[[nodiscard]] PlanRequest plan_request(const ModelPlanArguments& args);

// Adds --model --model-file --layers --hidden --heads --kv-heads --ffn --vocab --seq --activation
// --dtype (group "Model") and --world --tp --pp --dp --sp --zero --recompute --flash-attn
// --kernels --micro-batch --global-batch --schedule --chunks --order --bucket-mb (group "Parallel plan").
// LoRA's flags (--lora-rank, --lora-base-bits, --lora-targets), for commands that take a model without a plan
// (search); add_model_plan_options adds them itself. lora_from_arguments reads them (InputError naming the flag).
void add_lora_options(CLI::App& command, ModelPlanArguments* args, const std::string& group);
[[nodiscard]] LoraSpec lora_from_arguments(const ModelPlanArguments& args);
// --fp8 RECIPE and --fp8-dispatch, the same way: add_model_plan_options adds them itself; search and compare add
// them beside the model's, and read them (the flag, else the plan file's key) with these.
void add_fp8_option(CLI::App& command, ModelPlanArguments* args, const std::string& group);
[[nodiscard]] Fp8Recipe fp8_from_arguments(const ModelPlanArguments& args);
[[nodiscard]] bool fp8_dispatch_from_arguments(const ModelPlanArguments& args);

void add_model_plan_options(CLI::App& command, ModelPlanArguments* args);

// Resolves the model and checks the plan against it, once (CheckedPlan). Throws InputError naming the flag.
[[nodiscard]] CheckedPlan finish_model_plan_options(const ModelPlanArguments& args);

// The model flags alone (group "Model"), for commands that choose the plan themselves (search,
// compare), and the model they describe.
void add_model_options(CLI::App& command, ModelPlanArguments* args);
[[nodiscard]] TransformerConfig finish_model_options(const ModelPlanArguments& args);

// The training type and flash attention of a model and plan, with the flags that chose them on the
// command line (empty where a preset, a file or a framework's default did): predict/gpu_support.hpp.
[[nodiscard]] predict::TrainingChoices training_choices(const ModelPlanArguments& args, DataType dtype,
                                                        bool flash_attention);
// The checked plan as the GPU runs it: defaults it cannot run changed (one note each in `notes`), a flag's
// choice it cannot run refused (InputError naming the flag and the GPU).
[[nodiscard]] CheckedPlan fit_plan_to_gpu(const CheckedPlan& plan, const ModelPlanArguments& args,
                                          const hw::GpuSpec& gpu, std::vector<std::string>* notes);

// The model flags as given ("--model llama2-7b --layers 8"), shell-quoted where needed, to paste
// into another command; and one word quoted the same way.
[[nodiscard]] std::string model_flags_text(const ModelPlanArguments& args);
[[nodiscard]] std::string shell_quoted(const std::string& word);

}  // namespace commscale
