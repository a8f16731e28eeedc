#pragma once

// Models from Hugging Face `config.json` files (`--hf-config FILE`, or `--model-file` when the file has
// "model_type" or "architectures"). Supported: Llama (2 and 3), Mistral, Qwen2, Gemma, GPT-2, GPT-NeoX,
// Falcon and Phi (1.5, 2). Each architecture's shape keys are read under its own names (n_embd for
// GPT-2, hidden_size elsewhere); grouped-query attention, gated MLPs (SwiGLU, GeGLU), tied embeddings,
// norms, biases and positions follow from the keys and the architecture's defaults in transformers.
//
// The training sequence length is not in a config: it is `seq` (--seq), by default
// min(max_position_embeddings, kDefaultHfSeq). Keys that would change the math and that commscale does
// not model (mixture of experts, a sliding window shorter than the sequence, ALiBi, a head size other
// than hidden / heads, ...) are errors naming the key; metadata keys (kHfMetadataKeys) are ignored.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "workload/transformer.hpp"

namespace commscale {

inline constexpr std::int64_t kDefaultHfSeq = 4096;

// Whether a model document is a Hugging Face config rather than commscale's model JSON.
[[nodiscard]] bool is_hf_config(const nlohmann::json& doc) noexcept;

// `origin` names the file in messages; `seq` is the training sequence length (--seq) when given.
// Throws InputError naming the file and key, or the architecture and the supported ones.
[[nodiscard]] TransformerConfig model_from_hf_config(const nlohmann::json& doc, std::string_view origin,
                                                     std::optional<std::int64_t> seq);

// "llama (LlamaForCausalLM), mistral (...), ...", for messages and --help.
[[nodiscard]] std::string supported_hf_architectures();
// The metadata keys accepted (and ignored) in every config, comma-separated, for messages and docs.
[[nodiscard]] std::string hf_metadata_keys();

}  // namespace commscale
