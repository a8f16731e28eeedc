#include "workload/memory.hpp"

#include "workload/fp8_ops.hpp"
#include "workload/layer_dims.hpp"
#include "workload/layer_ops.hpp"
#include "workload/lora.hpp"

namespace commscale {
namespace {

std::uint64_t shard(std::uint64_t total, int ways) {
  const auto n = static_cast<std::uint64_t>(ways);
  return (total + n - 1) / n;
}

// What the attention keeps for the backward besides ln1's output, in elements over all tp ranks (split t ways):
// Q, K, V and attn.proj's input; with MLA (MLA.md) the queries and keys a (d_nope + d_rope) wide, the values and
// the projection's input a d_v.
std::uint64_t attention_split_elements(const TransformerConfig& m, const LayerDims& d) {
  const std::uint64_t tokens_hidden = elements(d.tokens, d.hidden);
  if (!m.mla.enabled()) {
    const std::uint64_t kv =
        tokens_hidden / static_cast<std::uint64_t>(m.heads) * static_cast<std::uint64_t>(m.kv_heads);
    return 2 * tokens_hidden + 2 * kv;
  }
  return elements(d.tokens, m.heads) * static_cast<std::uint64_t>(2 * d.qk_dim + 2 * d.v_dim);
}

// MLA's latents, kept on each rank: the inputs of the latents' norms and of the up projections (the T / t shard
// with sequence parallelism, as Megatron keeps a column-parallel layer's input) and the keys' rotary part.
std::uint64_t latent_elements(const LayerDims& d) {
  return elements(d.tokens_sp, 2 * d.q_lora + 2 * d.kv_lora + d.rope);
}

}  // namespace

ModelStateBytes model_state_bytes(const TransformerConfig& m, std::uint64_t parameters, int zero_stage, int dp,
                                  Optimizer optimizer, const GradientStorage& grads) {
  const std::uint64_t w = size_of(m.dtype);
  const std::uint64_t g = size_of(grads.main.value_or(m.dtype));
  const std::uint64_t optimizer_share = zero_stage >= 1 ? shard(parameters, dp) : parameters;
  ModelStateBytes s;
  s.weights = Bytes(w * (zero_stage >= 3 ? shard(parameters, dp) : parameters));
  s.gradients = Bytes(g * (zero_stage >= 2 ? shard(parameters, dp) : parameters));
  s.optimizer = optimizer_state_bytes(m, optimizer_share, optimizer) + Bytes(grads.fp32_copy ? 4 * optimizer_share : 0);
  return s;
}

Bytes layer_activation_bytes(const TransformerConfig& m, const LayerSharding& s, bool moe) {
  if (moe) {
    TransformerConfig shared = m;
    shared.ffn = m.moe.shared_ffn;
    const LayerDims d = layer_dims(m, s);
    const std::uint64_t w = size_of(m.dtype);
    // The most loaded rank's (MoeConfig::load_imbalance): what it receives and its experts keep. With expert
    // tensor parallelism the experts' input is the received rows all-gathered over etp, their inner
    // activations etp x the rows at F / etp.
    const RoutedRows routed = routed_rows(m, d, s.ep);
    const auto rows = static_cast<std::uint64_t>(routed.sent);
    const auto received = static_cast<std::uint64_t>(routed.received);
    const std::uint64_t gathered = received * static_cast<std::uint64_t>(s.etp);
    const auto f = static_cast<std::uint64_t>(m.moe.expert_ffn);
    const std::uint64_t act_in = received * f * (m.activation == MlpActivation::kSwiGlu ? 2 : 1);
    const std::uint64_t probabilities = 4 * elements(d.tokens_sp, m.moe.experts);
    std::uint64_t routed_bytes =
        probabilities + w * ((rows + gathered) * static_cast<std::uint64_t>(d.hidden) + act_in + received * f);
    // FP8: the experts' fc1 and fc2 inputs kept for the backward are FP8 (1 byte), as the dense MLP's
    // (fp8_ops.hpp).
    if (s.fp8 != Fp8Recipe::kNone && w > 1) {
      routed_bytes -= (w - 1) * (received * static_cast<std::uint64_t>(d.hidden) + received * f);
    }
    return layer_activation_bytes(shared, s) + Bytes(s.recompute == Recompute::kFull ? 0 : routed_bytes);
  }
  const LayerDims d = layer_dims(m, s);
  const std::uint64_t t = static_cast<std::uint64_t>(s.tp);
  const std::uint64_t w = size_of(m.dtype);
  const std::uint64_t tokens_hidden = elements(d.tokens, d.hidden);  // T h, all tokens
  const std::uint64_t local = d.sp ? tokens_hidden / t : tokens_hidden;
  if (s.recompute == Recompute::kFull) return Bytes(w * local);  // the layer input only

  // Replicated without sequence parallelism: two norm inputs, the QKV and fc1 inputs (4 tensors of
  // w bytes), two residual dropout masks (one byte each; none without dropout).
  const std::uint64_t replicated = 4 * w * local + (m.dropout ? 2 * local : 0);
  // Split t ways: the attention's (attention_projection_elements), the activation input and the fc2 input.
  const std::uint64_t act_in = elements(d.tokens, d.fc1_out) * t;  // full width, divided below
  const std::uint64_t fc2_in = elements(d.tokens, d.ffn) * t;
  const std::uint64_t split = w * (attention_split_elements(m, d) + act_in + fc2_in) / t + w * latent_elements(d);
  std::uint64_t total = replicated + split;
  // LoRA: each adapter's x A (T x r) for B's weight gradient (tp 1: validate_plan).
  if (s.lora.enabled()) {
    const auto adapters = static_cast<std::uint64_t>(lora_linears(m, s.lora.targets).size());
    total += w * adapters * elements(d.tokens, s.lora.rank);
  }
  const bool keeps_scores = s.recompute == Recompute::kNone && !s.flash_attention;
  if (keeps_scores) {
    const std::uint64_t scores = elements(d.heads_batch, d.seq * d.seq);  // B a s^2 / t
    // The softmax output, and with dropout its output and one-byte mask.
    total += m.dropout ? 2 * w * scores + scores : w * scores;
  }
  return Bytes(total) - fp8_activation_saving(m, s);
}

Bytes context_parallel_buffer_bytes(const TransformerConfig& m, const LayerSharding& s) {
  if (s.cp == 1) return Bytes(0);
  const LayerDims d = layer_dims(m, s);
  const std::uint64_t block = elements(d.tokens, d.kv_out) * size_of(d.dtype);
  return Bytes(block * (s.cp_comm == CpCommType::kAllGather ? 2 * static_cast<std::uint64_t>(s.cp) : 4));
}

Bytes logits_buffer_bytes(const TransformerConfig& m, const LayerSharding& s) {
  if (m.vocab == 0) return Bytes(0);
  const LayerDims d = layer_dims(m, s);
  return Bytes(4 * elements(d.tokens, d.vocab));
}

}  // namespace commscale
