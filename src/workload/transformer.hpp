#pragma once

// Decoder-only transformer configurations (GPT and LLaMA families) and their parameter counts.
//
// `vocab == 0` describes a bare stack of transformer blocks: no embedding, no logits, no loss (for
// block-level studies). Counts are exact for the architectures described: GPT-style models have
// biases in every linear layer, LayerNorm with a bias and learned position embeddings; LLaMA-style
// models have no biases, RMSNorm, rotary positions (no parameters) and untied output weights.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/dtype.hpp"

namespace commscale {

enum class MlpActivation : std::uint8_t { kGelu, kSwiGlu };
enum class NormKind : std::uint8_t { kLayerNorm, kRmsNorm };
enum class PositionEmbedding : std::uint8_t { kLearned, kRotary };

// Mixture of experts (Shazeer et al. 2017; Mixtral, DeepSeekMoE, Qwen-MoE): the MLP of an MoE layer is a
// router (a linear layer to `experts` scores, top-k kept) and `experts` MLPs of `expert_ffn`, each token
// going through its top `top_k`, plus, where the model has them, shared experts every token goes through
// (`shared_ffn`: their inner sizes summed, one MLP, as Megatron-Core's SharedExpertMLP runs them). The first
// `first_dense_layers` layers keep a dense MLP of `ffn` (DeepSeek's first_k_dense_replace). `capacity_factor`
// 0 is dropless routing (Megatron-Core's default, Mixtral's); above 0 each expert takes at most that many
// times its even share of the tokens, and the dispatch buffers are padded to it (--moe-pad-expert-input-to-
// capacity). Experts use the model's activation. `experts == 0`: a dense model.
struct MoeConfig {
  int experts = 0;
  int top_k = 0;
  std::int64_t expert_ffn = 0;
  std::int64_t shared_ffn = 0;
  int first_dense_layers = 0;
  double capacity_factor = 0.0;
  // The most loaded expert-parallel rank's rows over the mean (1: balanced routing), dropless routing only
  // (a capacity factor pads every rank alike): what that rank receives in the dispatch, computes and sends
  // back in the combine, the pace the others wait for.
  double load_imbalance = 1.0;
  [[nodiscard]] bool enabled() const noexcept { return experts > 0; }
  bool operator==(const MoeConfig&) const = default;
};

// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434; Megatron-Core's MLASelfAttention): queries from
// H through a q_lora_rank latent (0: projected from H directly, as DeepSeek-V2-Lite), keys and values from one
// kv_lora_rank latent, each head's query and key qk_nope_head_dim wide plus qk_rope_head_dim of rotary part (the
// key's shared by all heads), its value v_head_dim wide. All 0: ordinary attention of hidden / heads per head.
// src/workload/MLA.md says how Megatron-Core splits it over tensor-parallel ranks.
struct MlaConfig {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  [[nodiscard]] bool enabled() const noexcept { return kv_lora_rank > 0; }
  [[nodiscard]] std::int64_t qk_head_dim() const noexcept { return qk_nope_head_dim + qk_rope_head_dim; }
  bool operator==(const MlaConfig&) const = default;
};

struct TransformerConfig {
  std::string name = "custom";
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;        // == heads for multi-head attention, fewer for grouped-query attention
  std::int64_t ffn = 0;    // MLP inner size F (per branch for SwiGLU: gate and up are each h x F)
  std::int64_t vocab = 0;  // 0: no embedding, logits or loss
  std::int64_t seq = 0;
  MlpActivation activation = MlpActivation::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  PositionEmbedding positions = PositionEmbedding::kLearned;
  bool linear_bias = true;
  // Dropout on the attention probabilities and on the two residual branches (GPT-2 and GPT-3 train
  // with 0.1); Llama-style models train without (their configs' attention and hidden dropout are 0).
  bool dropout = true;
  bool tied_embeddings = true;
  DataType dtype = DataType::kBFloat16;  // weights, activations, gradients
  MoeConfig moe;                         // dense unless moe.experts > 0
  MlaConfig mla;                         // ordinary attention unless mla.kv_lora_rank > 0
  bool operator==(const TransformerConfig&) const = default;
};

// Whether `layer` (0-based) has an MoE MLP.
[[nodiscard]] inline bool is_moe_layer(const TransformerConfig& m, int layer) noexcept {
  return m.moe.enabled() && layer >= m.moe.first_dense_layers;
}
[[nodiscard]] inline int moe_layer_count(const TransformerConfig& m) noexcept {
  return m.moe.enabled() ? m.layers - m.moe.first_dense_layers : 0;
}

[[nodiscard]] std::string_view name(MlpActivation a) noexcept;      // gelu swiglu
[[nodiscard]] std::string_view name(NormKind n) noexcept;           // layernorm rmsnorm
[[nodiscard]] std::string_view name(PositionEmbedding p) noexcept;  // learned rotary
[[nodiscard]] MlpActivation parse_activation(std::string_view text, std::string_view where);
[[nodiscard]] NormKind parse_norm(std::string_view text, std::string_view where);
[[nodiscard]] PositionEmbedding parse_positions(std::string_view text, std::string_view where);

[[nodiscard]] inline std::int64_t head_dim(const TransformerConfig& m) noexcept { return m.hidden / m.heads; }
// The head dimension of the attention scores (QK^T) and of the context (PV): hidden / heads both, or MLA's
// qk_nope_head_dim + qk_rope_head_dim and v_head_dim.
[[nodiscard]] inline std::int64_t qk_head_dim(const TransformerConfig& m) noexcept {
  return m.mla.enabled() ? m.mla.qk_head_dim() : head_dim(m);
}
[[nodiscard]] inline std::int64_t v_head_dim(const TransformerConfig& m) noexcept {
  return m.mla.enabled() ? m.mla.v_head_dim : head_dim(m);
}

// Where a model field came from, for error messages: command-line flags ("--kv-heads") or a JSON
// file ("model.json: kv_heads").
[[nodiscard]] std::string field_where(std::string_view origin, std::string_view key);

// The largest sizes a model may have (validate_model): far above any real model, low enough that
// every count derived from them fits in 64 bits.
inline constexpr std::int64_t kMaxLayers = 10'000;
inline constexpr std::int64_t kMaxHidden = 1 << 18;
inline constexpr std::int64_t kMaxFfn = 1 << 20;
inline constexpr std::int64_t kMaxSeq = 1 << 22;
inline constexpr std::int64_t kMaxVocab = 1 << 24;
inline constexpr int kMaxExperts = 1 << 12;

// The names a model file gives the fields validate_model checks: commscale's own by default; a Hugging
// Face config's (num_hidden_layers, intermediate_size, ...) when the model came from one, so a message
// names the key the user can find in the file.
struct ModelKeys {
  std::string_view layers = "layers";
  std::string_view hidden = "hidden";
  std::string_view heads = "heads";
  std::string_view kv_heads = "kv_heads";
  std::string_view ffn = "ffn";
  std::string_view seq = "seq";
  std::string_view vocab = "vocab";
  std::string_view experts = "moe.experts";
  std::string_view top_k = "moe.top_k";
  std::string_view expert_ffn = "moe.expert_ffn";
  std::string_view shared_ffn = "moe.shared_ffn";
  std::string_view first_dense_layers = "moe.first_dense_layers";
  std::string_view capacity_factor = "moe.capacity_factor";
  std::string_view load_imbalance = "moe.load_imbalance";
  std::string_view q_lora_rank = "mla.q_lora_rank";
  std::string_view kv_lora_rank = "mla.kv_lora_rank";
  std::string_view qk_nope_head_dim = "mla.qk_nope_head_dim";
  std::string_view qk_rope_head_dim = "mla.qk_rope_head_dim";
  std::string_view v_head_dim = "mla.v_head_dim";
};

// Throws InputError naming the offending field (see field_where) and what was expected.
void validate_model(const TransformerConfig& m, std::string_view origin, const ModelKeys& keys = {});

// Parameters of one layer held by one tensor-parallel rank, grouped by the op whose backward
// produces their gradient. Column-parallel weights and biases are split t ways; the biases of
// row-parallel layers and the norms are replicated (as in Megatron-LM).
// With MLA, qkv is every query, key and value projection and norm (the down projections and the latents' norms
// replicated over tp, the up projections split t ways) and proj the n v_head_dim -> h output projection.
// For an MoE layer fc1 and fc2 are the shared experts' (0 without), `router` the router's weight
// (replicated over tp), and `experts` the routed experts' held by the rank: experts / ep of them, whole
// (expert tensor parallelism 1), as Megatron-Core keeps them on the expert-parallel ranks.
struct LayerParameters {
  std::uint64_t ln1 = 0;
  std::uint64_t qkv = 0;
  std::uint64_t proj = 0;
  std::uint64_t ln2 = 0;
  std::uint64_t fc1 = 0;
  std::uint64_t fc2 = 0;
  std::uint64_t router = 0;
  std::uint64_t experts = 0;
  // What the data-parallel group reduces (every parameter but the experts', which the expert-data-parallel
  // group reduces), and everything the rank holds.
  [[nodiscard]] std::uint64_t dense() const noexcept { return ln1 + qkv + proj + ln2 + fc1 + fc2 + router; }
  [[nodiscard]] std::uint64_t total() const noexcept { return dense() + experts; }
};
// A dense layer, or `layer` in its MoE form where it has one (is_moe_layer): its experts split `ep` ways, each
// expert's fc1 and fc2 `etp` ways.
[[nodiscard]] LayerParameters layer_parameters(const TransformerConfig& m, int tp);
[[nodiscard]] LayerParameters layer_parameters(const TransformerConfig& m, int tp, int layer, int ep, int etp = 1);
// MLA's parameters every tensor-parallel rank holds whole (its down projections and latents' norms; 0 without
// MLA): with sequence parallelism each rank computes their gradients from its own tokens, so they are summed.
[[nodiscard]] std::uint64_t mla_replicated_parameters(const TransformerConfig& m) noexcept;
// One routed expert's parameters (its fc1 and fc2).
[[nodiscard]] std::uint64_t expert_parameters(const TransformerConfig& m);

// Rows of the output/embedding table per tensor-parallel rank: ceil(V / t) (the vocabulary is padded
// to a multiple of t, as Megatron-LM pads it).
[[nodiscard]] std::int64_t vocab_shard(const TransformerConfig& m, int tp) noexcept;
[[nodiscard]] std::uint64_t norm_parameters(const TransformerConfig& m) noexcept;  // one norm: 2h or h
// Word embedding shard plus (replicated) learned positions, on the first pipeline stage.
[[nodiscard]] std::uint64_t embedding_parameters(const TransformerConfig& m, int tp);
// Output weight shard on the last stage: untied, or a tied copy when the embedding lives on another
// stage (Megatron-LM keeps one and all-reduces the two gradients). 0 when shared with the embedding.
[[nodiscard]] std::uint64_t output_parameters(const TransformerConfig& m, int tp, int pp);

// Parameters of the whole model, unsharded, unpadded (the number quoted for a model, "6.7 B"; for an MoE
// model every expert's: Mixtral 8x7B 46.7 B).
[[nodiscard]] std::uint64_t parameter_count(const TransformerConfig& m);
// The parameters one token goes through: for an MoE model its top-k routed experts, not all of them
// (Mixtral 8x7B 12.9 B); parameter_count for a dense model.
[[nodiscard]] std::uint64_t active_parameter_count(const TransformerConfig& m);
// One line on a model's experts for the text outputs ("8 experts of F 14336 in 32 of 32 layers, top 2, ...;
// 46.7 B parameters, 12.9 B active"); empty for a dense model.
[[nodiscard]] std::string experts_text(const TransformerConfig& m);

}  // namespace commscale
