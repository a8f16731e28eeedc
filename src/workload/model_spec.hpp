#pragma once

// How a model is chosen: a preset, a JSON file, or flags alone, with flags overriding fields of the
// preset or the file. Shared by `plan`, `train`, `predict` and `search`.
//
// A model file is one JSON object. Required keys: layers, hidden, heads, seq, vocab. Optional:
// name, kv_heads (default heads), ffn (default 4 * hidden; required for swiglu), activation
// ("gelu" | "swiglu"), norm ("layernorm" | "rmsnorm"), positions ("learned" | "rotary"),
// linear_bias, tied_embeddings (booleans), dtype ("bf16" | "fp16" | "fp32"). Unknown keys are errors.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

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
};

// At most one of `preset` and `file_path` may be non-empty. With neither, the flags describe a GPT-style
// model and must give --layers, --hidden, --heads, --seq and --vocab. Throws InputError naming the
// flag, the file or the file's key.
[[nodiscard]] TransformerConfig resolve_model(std::string_view preset, const std::string& file_path,
                                              const ModelOverrides& overrides);

// `origin` names the document in messages (a path, or "model JSON").
[[nodiscard]] TransformerConfig model_from_json(const nlohmann::json& doc, std::string_view origin);
[[nodiscard]] TransformerConfig load_model_file(const std::string& path);
[[nodiscard]] nlohmann::json model_to_json(const TransformerConfig& m);

}  // namespace commscale
