#pragma once

// Sizes of one layer on one tensor-parallel rank for one microbatch (shared by the op lists).

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/dtype.hpp"
#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale {

struct LayerDims {
  std::int64_t tokens = 0;     // T = B s / cp, the rows of every token-wise GEMM
  std::int64_t tokens_sp = 0;  // T / t with sequence parallelism (norms, dropouts, residuals), else T
  std::int64_t seq = 0;        // the sequence this rank holds: s / cp
  std::int64_t hidden = 0;
  std::int64_t head_dim = 0;     // hidden / heads
  std::int64_t qk_dim = 0;       // the attention scores' head dimension: head_dim, or MLA's d_nope + d_rope
  std::int64_t v_dim = 0;        // the context's head dimension: head_dim, or MLA's v_head_dim
  std::int64_t proj_in = 0;      // attn.proj's input, a v_dim / t: h / t without MLA
  std::int64_t heads_batch = 0;  // B a / t: the batch of the attention GEMMs
  std::int64_t qkv_out = 0;      // (a + 2g) d / t
  std::int64_t ffn = 0;          // F / t
  std::int64_t fc1_out = 0;      // F / t, or 2 F / t for SwiGLU (gate and up in one GEMM)
  std::int64_t vocab = 0;        // ceil(V / t)
  std::int64_t kv_out = 0;       // 2 g d / t: the keys and values of a token on this rank (MLA: q_out + proj_in)
  // Multi-head latent attention (0 without; layer_ops.cpp, MLA.md): the latents, the rotary part of a key, and
  // this rank's query and key-value up-projection widths, a (d_nope + d_rope) / t and a (d_nope + d_v) / t.
  std::int64_t q_lora = 0;
  std::int64_t kv_lora = 0;
  std::int64_t rope = 0;
  std::int64_t q_out = 0;
  std::int64_t kv_up_out = 0;
  int tp = 1;
  int cp = 1;  // context-parallel ranks: tokens and seq are this rank's seq / cp (CONTEXT_PARALLEL.md)
  CpCommType cp_comm = CpCommType::kP2p;
  bool sp = false;
  bool tp_comm = false;  // tp > 1
  bool dropout = true;   // the model's (TransformerConfig::dropout)
  DataType dtype = DataType::kBFloat16;
  double w = 2.0;  // bytes per element of dtype
};

[[nodiscard]] inline LayerDims layer_dims(const TransformerConfig& m, const LayerSharding& s) {
  LayerDims d;
  d.tp = s.tp;
  d.sp = s.sequence_parallel && s.tp > 1;
  d.tp_comm = s.tp > 1;
  d.cp = s.cp;
  d.cp_comm = s.cp_comm;
  d.tokens = static_cast<std::int64_t>(s.micro_batch) * m.seq / s.cp;
  d.tokens_sp = d.sp ? d.tokens / s.tp : d.tokens;
  d.seq = m.seq / s.cp;
  d.hidden = m.hidden;
  d.head_dim = head_dim(m);
  d.qk_dim = qk_head_dim(m);
  d.v_dim = v_head_dim(m);
  d.proj_in = m.mla.enabled() ? m.heads * d.v_dim / s.tp : m.hidden / s.tp;
  if (m.mla.enabled()) {
    d.q_lora = m.mla.q_lora_rank;
    d.kv_lora = m.mla.kv_lora_rank;
    d.rope = m.mla.qk_rope_head_dim;
    d.q_out = m.heads * d.qk_dim / s.tp;
    d.kv_up_out = m.heads * (m.mla.qk_nope_head_dim + d.v_dim) / s.tp;
  }
  d.heads_batch = static_cast<std::int64_t>(s.micro_batch) * m.heads / s.tp;
  d.qkv_out = (m.heads + 2 * static_cast<std::int64_t>(m.kv_heads)) * d.head_dim / s.tp;
  d.kv_out = 2 * static_cast<std::int64_t>(m.kv_heads) * d.head_dim / s.tp;
  if (m.mla.enabled()) d.kv_out = d.q_out + d.proj_in;  // a key as wide as a query, a value n d_v / t
  d.ffn = m.ffn / s.tp;
  d.fc1_out = m.activation == MlpActivation::kSwiGlu ? 2 * d.ffn : d.ffn;
  d.vocab = vocab_shard(m, s.tp);
  d.dtype = m.dtype;
  d.w = static_cast<double>(size_of(m.dtype));
  d.dropout = m.dropout;
  return d;
}

// A collective over all T tokens of the hidden state (the size nccl-tests reports for AR, AG and RS).
[[nodiscard]] inline LayerCollective hidden_collective(const LayerDims& d, Collective kind) {
  return {kind, Bytes(static_cast<std::uint64_t>(d.tokens * d.hidden) * size_of(d.dtype)), d.dtype};
}

[[nodiscard]] inline std::uint64_t elements(std::int64_t a, std::int64_t b) {
  return static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
}

// A count rounded up to a multiple of `ranks`: an all-to-all is sized as nccl-tests sizes one, `ranks` equal
// chunks of the send buffer, so rows that do not split evenly (60 experts' rows over ep 60, or a load imbalance's
// rounded rows) are priced as padded to the next whole chunk, at most ranks - 1 elements more. A count that splits
// already is returned as it is.
[[nodiscard]] inline std::uint64_t whole_chunks(std::uint64_t count, int ranks) {
  const auto n = static_cast<std::uint64_t>(ranks < 1 ? 1 : ranks);
  return (count + n - 1) / n * n;
}

// The load imbalance a plan of `ep` expert-parallel ranks prices: the model's, at most ep. The busiest of ep ranks
// receives at most all their rows, ep x the mean, so with ep 1 (every expert local) routing has no busiest rank and
// a skew changes nothing; a search over ep with one --load-imbalance prices each plan at what its ep allows.
[[nodiscard]] inline double busiest_rank_share(const TransformerConfig& m, int ep) {
  return std::min(m.moe.load_imbalance, static_cast<double>(ep < 1 ? 1 : ep));
}

// The rows an MoE layer routes on one rank (layer_ops.cpp, MOE.md): its tokens x top-k, padded to the
// capacity factor where there is one, and what the most loaded of ep ranks receives (x busiest_rank_share).
struct RoutedRows {
  std::int64_t sent = 0;
  std::int64_t received = 0;
};
[[nodiscard]] inline RoutedRows routed_rows(const TransformerConfig& m, const LayerDims& d, int ep) {
  const double routed = static_cast<double>(d.tokens_sp) * m.moe.top_k;
  RoutedRows r;
  r.sent = static_cast<std::int64_t>(m.moe.capacity_factor > 0 ? std::ceil(routed * m.moe.capacity_factor) : routed);
  r.received = static_cast<std::int64_t>(std::ceil(static_cast<double>(r.sent) * busiest_rank_share(m, ep)));
  return r;
}

}  // namespace commscale
