#pragma once

// Model presets: GPT-3 (Brown et al. 2020, Table 2.1), LLaMA-2 (Touvron et al. 2023) and LLaMA-3
// (Meta 2024 model cards), and a tiny model for tests.

#include <span>
#include <string_view>

#include "workload/transformer.hpp"

namespace commscale {

// gpt3-125m gpt3-350m gpt3-1.3b gpt3-2.7b gpt3-6.7b gpt3-13b gpt3-175b llama2-7b llama2-13b
// llama2-70b llama3-8b llama3-70b tiny
[[nodiscard]] std::span<const TransformerConfig> model_presets();

// Throws InputError naming `where` and listing the presets when there is no such preset.
[[nodiscard]] TransformerConfig find_preset(std::string_view name, std::string_view where);

}  // namespace commscale
