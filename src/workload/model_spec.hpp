#pragma once

// How a model is chosen: a preset, a JSON file, or flags alone, with flags overriding fields of the
// preset or the file. Shared by `plan`, `train`, `predict` and `search`.
//
// A model file is one JSON object. Required keys: layers, hidden, heads, seq, vocab. Optional:
// name, kv_heads (default heads), ffn (default 4 * hidden; required for swiglu), activation
// ("gelu" | "swiglu"), norm ("layernorm" | "rmsnorm"), positions ("learned" | "rotary"),
// linear_bias, tied_embeddings (booleans), dtype ("bf16" | "fp16" | "fp32"), moe (an object: experts, top_k,
// expert_ffn required; shared_ffn, first_dense_layers, capacity_factor optional: transformer.hpp, MoeConfig).
// Unknown keys are errors.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/json_at.hpp"
#include "workload/transformer.hpp"

namespace commscale {

struct ModelOverrides {
  std::optional<int> layers;
  std::optional<std::int64_t> hidden;
  std::optional<int> heads;
  std::optional<int> kv_heads;
  std::optional<std::int64_t> ffn;
  std::optional<std::int64_t> vocab;
  std::optional<std::int64_t> seq;
  std::optional<MlpActivation> activation;
  std::optional<DataType> dtype;
  // Set by Megatron-LM's flags (--normalization, --position-embedding-type, --disable-bias-linear,
  // --untie-embeddings-and-output-weights), which describe a model from nothing.
  std::optional<NormKind> norm;
  std::optional<PositionEmbedding> positions;
  std::optional<bool> linear_bias;
  std::optional<bool> tied_embeddings;
  // Mixture of experts (--experts, --top-k, --expert-ffn, --shared-expert-ffn, --first-dense-layers,
  // --capacity-factor; Megatron-LM's --num-experts, --moe-router-topk, ...): MoeConfig's fields.
  std::optional<int> experts;
  std::optional<int> top_k;
  std::optional<std::int64_t> expert_ffn;
  std::optional<std::int64_t> shared_ffn;
  std::optional<int> first_dense_layers;
  std::optional<double> capacity_factor;
  std::optional<double> load_imbalance;
  // Multi-head latent attention (--q-lora-rank, --kv-lora-rank, --qk-nope-head-dim, --qk-rope-head-dim,
  // --v-head-dim; src/workload/MLA.md): MlaConfig's fields. `latent_attention` (Megatron-LM's
  // --multi-latent-attention) turns MLA on with Megatron-LM's defaults where the model has none.
  std::optional<std::int64_t> q_lora_rank;
  std::optional<std::int64_t> kv_lora_rank;
  std::optional<std::int64_t> qk_nope_head_dim;
  std::optional<std::int64_t> qk_rope_head_dim;
  std::optional<std::int64_t> v_head_dim;
  bool latent_attention = false;
};

// Where the model comes from: at most one of a preset (--model), a model file (--model-file: commscale's
// model JSON, or a Hugging Face config.json, told apart by its keys) and a Hugging Face config
// (--hf-config, which must be one).
struct ModelSource {
  std::string preset;
  std::string file_path;
  std::string hf_config_path;
  // A model written out in a plan file: either kind of document, `origin` naming it in messages.
  std::optional<nlohmann::json> document;
  std::string origin;
};

// With no source, the flags describe a GPT-style model and must give --layers, --hidden, --heads, --seq
// and --vocab. Throws InputError naming the flag, the file or the file's key.
[[nodiscard]] TransformerConfig resolve_model(const ModelSource& source, const ModelOverrides& overrides);

// `origin` names the document in messages (a path, or "model JSON").
[[nodiscard]] TransformerConfig model_from_json(const nlohmann::json& doc, std::string_view origin);
// Either kind of model file; `seq` is the training sequence length (a Hugging Face config has none),
// `flag` names the flag the path came from.
[[nodiscard]] TransformerConfig load_model_file(const std::string& path, std::optional<std::int64_t> seq = std::nullopt,
                                                std::string_view flag = "--model-file");
[[nodiscard]] nlohmann::json model_to_json(const TransformerConfig& m);
// The model block of a result file (train, predict, plan), read back by the model file's rules:
// model_from_json(model_to_json(m)) == m for every valid model. A file written before dropout was a
// model property has no "dropout": every model then had dropout, as the default says. Errors name
// the file and key ("run.json: model: heads").
[[nodiscard]] TransformerConfig model_from_json(const JsonAt& in);

}  // namespace commscale
