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

// Mixture-of-experts models, from their config.json files (hidden_size, intermediate_size, ...). Each is a
// Llama-style block; the training sequence is 4096 (their pretraining context; the configs' max_position_
// embeddings is longer).
TransformerConfig moe(TransformerConfig m, int experts, int top_k, std::int64_t expert_ffn, std::int64_t shared_ffn,
                      int first_dense_layers) {
  m.moe = {experts, top_k, expert_ffn, shared_ffn, first_dense_layers, 0.0};
  return m;
}

// Mixtral 8x7B (mistralai/Mixtral-8x7B-v0.1; Jiang et al. 2024, arXiv 2401.04088): 8 experts of 14336, top 2,
// every layer MoE; 46.7 B parameters, 12.9 B active.
TransformerConfig mixtral_8x7b() {
  return moe(llama("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 4096), 8, 2, 14336, 0, 0);
}

// Qwen1.5-MoE-A2.7B (Qwen/Qwen1.5-MoE-A2.7B): 60 experts of 1408, top 4, a shared expert of 5632 in every
// layer; 14.3 B parameters, 2.7 B active.
TransformerConfig qwen_moe() {
  return moe(llama("qwen1.5-moe-a2.7b", 24, 2048, 16, 16, 5632, 151936, 4096), 60, 4, 1408, 5632, 0);
}

// Multi-head latent attention as DeepSeek's configs give it (src/workload/MLA.md).
TransformerConfig mla(TransformerConfig m, std::int64_t q_lora_rank, std::int64_t kv_lora_rank) {
  m.mla = {.q_lora_rank = q_lora_rank,
           .kv_lora_rank = kv_lora_rank,
           .qk_nope_head_dim = 128,
           .qk_rope_head_dim = 64,
           .v_head_dim = 128};
  return m;
}

// DeepSeek-V2-Lite (deepseek-ai/DeepSeek-V2-Lite; DeepSeek-AI 2024, arXiv 2405.04434): multi-head latent
// attention of 16 heads (queries projected from the hidden state, a kv latent of 512), 64 routed experts of
// 1408, top 6, 2 shared, the first layer dense (10944); 15.7 B parameters, 2.4 B active.
TransformerConfig deepseek_v2_lite() {
  return mla(moe(llama("deepseek-v2-lite", 27, 2048, 16, 16, 10944, 102400, 4096), 64, 6, 1408, 2 * 1408, 1), 0, 512);
}

// DeepSeek-V3-like (deepseek-ai/DeepSeek-V3; DeepSeek-AI 2024, arXiv 2412.19437): multi-head latent attention
// of 128 heads (a q latent of 1536, a kv latent of 512), 256 routed experts of 2048, top 8, one shared, the
// first 3 layers dense (18432); 671 B parameters, 37 B active in DeepSeek's count, which includes the
// multi-token prediction module. "-like": that module (14 B) is not modelled.
TransformerConfig deepseek_v3() {
  return mla(moe(llama("deepseek-v3", 61, 7168, 128, 128, 18432, 129280, 4096), 256, 8, 2048, 2048, 3), 1536, 512);
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

// The tiny model with 8 experts of 256, top 2, a shared expert of 128, the first layer dense: MoE tests' model.
TransformerConfig tiny_moe() {
  TransformerConfig m = tiny();
  m.name = "tiny-moe";
  m.moe = {8, 2, 256, 128, 1, 0.0};
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
      mixtral_8x7b(),
      qwen_moe(),
      deepseek_v2_lite(),
      deepseek_v3(),
      tiny(),
      tiny_moe(),
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
