#include "workload/presets.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

// GPT-3: d_ff = 4 d_model, context 2048, GELU, learned positions, tied embeddings. The vocabulary is
// GPT-2's 50257 padded to 51200, as Megatron-LM pads it and as Narayanan et al. (2021) count it.
// GPT-3 13B is listed with d_model 5140 in Brown et al.; 5140 is not a multiple of its 40 heads, and
// every reproduction (Megatron-LM included) uses 5120.
TransformerConfig gpt3(std::string name, int layers, std::int64_t hidden, int heads) {
  TransformerConfig m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn = 4 * hidden;
  m.vocab = 51200;
  m.seq = 2048;
  return m;
}

// LLaMA: SwiGLU, RMSNorm, rotary positions, no biases, untied output.
TransformerConfig llama(std::string name, int layers, std::int64_t hidden, int heads, int kv_heads, std::int64_t ffn,
                        std::int64_t vocab, std::int64_t seq) {
  TransformerConfig m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn = ffn;
  m.vocab = vocab;
  m.seq = seq;
  m.activation = MlpActivation::kSwiGlu;
  m.norm = NormKind::kRmsNorm;
  m.positions = PositionEmbedding::kRotary;
  m.linear_bias = false;
  m.dropout = false;
  m.tied_embeddings = false;
  return m;
}

// Small enough for tests to build programs for many plans in milliseconds; 8 heads and 4 KV heads
// (grouped-query attention) so that tensor parallelism up to 4 is valid.
TransformerConfig tiny() {
  TransformerConfig m = gpt3("tiny", 8, 128, 8);
  m.kv_heads = 4;
  m.vocab = 1024;
  m.seq = 64;
  return m;
}

std::vector<TransformerConfig> make_presets() {
  return {
      gpt3("gpt3-125m", 12, 768, 12),
      gpt3("gpt3-350m", 24, 1024, 16),
      gpt3("gpt3-1.3b", 24, 2048, 16),
      gpt3("gpt3-2.7b", 32, 2560, 32),
      gpt3("gpt3-6.7b", 32, 4096, 32),
      gpt3("gpt3-13b", 40, 5120, 40),
      gpt3("gpt3-175b", 96, 12288, 96),
      llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096),
      llama("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096),
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096),
      llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192),
      llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192),
      tiny(),
  };
}

}  // namespace

std::span<const TransformerConfig> model_presets() {
  static const std::vector<TransformerConfig> presets = make_presets();
  return presets;
}

TransformerConfig find_preset(std::string_view name, std::string_view where) {
  std::string names;
  for (const TransformerConfig& m : model_presets()) {
    if (m.name == name) return m;
    names += names.empty() ? m.name : ", " + m.name;
  }
  throw InputError(where, fmt::format("unknown model \"{}\"", name), fmt::format("one of {}", names));
}

}  // namespace commscale
