#include "workload/layer_ops.hpp"

#include <string_view>

#include <fmt/format.h>

#include "workload/fp8_ops.hpp"
#include "workload/layer_dims.hpp"
#include "workload/lora.hpp"

namespace commscale {
namespace {

using K = MemoryKernelKind;

Gemm gemm(const LayerDims& d, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  return make_gemm(m, n, k, batch, d.dtype);
}

// A memory kernel of the given kernel set (Megatron-LM's fused ones, or eager PyTorch's).
MemoryKernel kernel(KernelSet kernels, K kind, std::uint64_t elements, double read_per_element,
                    double written_per_element) {
  return kernels == KernelSet::kEager ? eager_kernel(kind, elements, read_per_element, written_per_element)
                                      : memory_kernel(kind, elements, read_per_element, written_per_element);
}

// One product of flash attention: the causal share of the full product over `seq` keys, and marked so.
// `keys_in_n`: the keys are the product's n (QK^T, dP = dO V^T), else its k (PV, dV, dQ, dK).
// `continued`: not the first product of its kernel (the forward kernel's PV; the backward kernel's four
// gradient products, after its recomputed QK^T). `kernels`: eager PyTorch's (SDPA) or a fused kernel's.
// `keys`: the keys each query row works through (a context-parallel block's, CONTEXT_PARALLEL.md). `dim`: the
// head dimension the product runs over, the queries' and keys' (QK^T, dQ, dK) or the values' (PV, dP, dV): the
// same without MLA.
Gemm flash_block(const LayerDims& d, std::int64_t keys, bool keys_in_n, bool continued, KernelSet kernels,
                 std::int64_t dim) {
  Gemm g = keys_in_n ? gemm(d, d.seq, keys, dim, d.heads_batch) : gemm(d, d.seq, dim, keys, d.heads_batch);
  g.flash = true;
  g.flash_continued = continued;
  g.flash_dropout = d.dropout;
  g.flash_sdpa = kernels == KernelSet::kEager;
  return g;
}

Gemm flash_gemm(const LayerDims& d, bool keys_in_n, bool continued, KernelSet kernels, std::int64_t dim) {
  return flash_block(d, flash_causal_keys(d.seq), keys_in_n, continued, kernels, dim);
}

// ---- Context parallelism (CONTEXT_PARALLEL.md) ---------------------------------------------------------
// Each context-parallel rank holds seq / cp tokens of every sequence, load-balanced for causal attention as
// Megatron-Core splits them (2 cp chunks; rank r holds chunks r and 2 cp - 1 - r), and every op of the layer
// runs on them (LayerDims: tokens and seq are the rank's). Attention needs the keys and values of the whole
// sequence, exchanged over the context-parallel group as TransformerEngine does:
//  p2p (AttnFuncWithCPAndKVP2P): cp steps, each a flash-attention call of the rank's queries over one rank's
//    keys; the next step's KV block travels the ring (sendrecv: to rank + 1, from rank - 1) while the step
//    runs. Step 0 is the rank's own block, causal (half of it); with the load-balanced split every other step
//    is half a block, unmasked (all queries over the first chunk of an earlier rank's block, or the second
//    chunk's queries over a later rank's whole block): seq / cp queries over seq / 2cp keys. Summed, a query
//    row works through (s / cp + 128) / 2 + (cp - 1) s / 2cp = flash_causal_keys(s) keys, as without context
//    parallelism. Two receive buffers: the exchange bringing step i + 1's block waits for step i - 1. The
//    backward runs the ring again: step 0 sends KV, middle steps KV and the dKV accumulated so far, the last dKV.
//  all_gather (AttnFuncWithCPAndKVAllGather): K and V all-gathered over the group (one all-gather each), one
//    flash call of the rank's queries over the causal share of the whole sequence's keys; backward gathers K
//    and V again and reduce-scatters dK and dV.

// The keys and values of this rank's tokens (one KV block): T / cp x 2 g d / t elements, or one of them (K or V).
Bytes kv_block_bytes(const LayerDims& d, std::int64_t tensors = 2) {
  return Bytes(elements(d.tokens, d.kv_out / 2 * tensors) * size_of(d.dtype));
}

LayerCollective context_collective(const LayerDims& d, Collective kind, Bytes bytes) {
  return {kind, bytes, d.dtype, GroupRole::kContext};
}

// All-gather of one of K and V (the gathered size), or the reduce-scatter of its gradient (the unreduced size).
// With MLA (MLA.md) a key is n (d_nope + d_rope) / t wide, a value n d_v / t: `keys` says which.
LayerCollective context_gather(const LayerDims& d, Collective kind, bool keys) {
  const Bytes one =
      d.kv_lora > 0 ? Bytes(elements(d.tokens, keys ? d.q_out : d.proj_in) * size_of(d.dtype)) : kv_block_bytes(d, 1);
  return context_collective(d, kind, one * static_cast<std::uint64_t>(d.cp));
}

// The keys a query row works through in a p2p step: the causal half of its own block, half of another's.
std::int64_t p2p_step_keys(const LayerDims& d, int step) { return step == 0 ? flash_causal_keys(d.seq) : d.seq / 2; }

std::string p2p_step_prefix(int step) { return step == 0 ? "attn." : fmt::format("attn.cp{}.", step); }
std::string p2p_step_name(int step, const std::string& what) { return p2p_step_prefix(step) + what; }

void context_parallel_attention_forward(OpListBuilder& b, const LayerDims& d, KernelSet kernels) {
  if (d.cp_comm == CpCommType::kAllGather) {
    const int k = b.collective(true, "attn.cp.k.all_gather", context_gather(d, Collective::kAllGather, true));
    const int v = b.prefetch(true, "attn.cp.v.all_gather", context_gather(d, Collective::kAllGather, false));
    const std::int64_t keys = flash_causal_keys(d.seq * d.cp);
    b.compute("attn.scores", flash_block(d, keys, true, false, kernels, d.qk_dim), {k, v});
    b.compute("attn.context", flash_block(d, keys, false, true, kernels, d.v_dim));
    return;
  }
  int arrived = -1;  // the exchange that brought this step's block
  for (int step = 0; step < d.cp; ++step) {
    const int next = step + 1 < d.cp ? b.collective(true, p2p_step_name(step + 1, "kv.sendrecv"),
                                                    context_collective(d, Collective::kSendRecv, kv_block_bytes(d)))
                                     : -1;
    const std::int64_t keys = p2p_step_keys(d, step);
    b.compute(p2p_step_name(step, "scores"), flash_block(d, keys, true, false, kernels, d.qk_dim), {arrived});
    b.compute(p2p_step_name(step, "context"), flash_block(d, keys, false, true, kernels, d.v_dim));
    arrived = next;
  }
}

// The flash backward kernel's five products over `keys` (QK^T recomputed, then dP, dV, dQ, dK), named
// `prefix` + what; the first waits for `arrived`.
void flash_backward_products(OpListBuilder& b, const LayerDims& d, std::int64_t keys, KernelSet kernels,
                             const std::string& prefix, std::vector<int> arrived) {
  const auto backward = [&](bool keys_in_n, bool continued, std::int64_t dim) {
    Gemm g = flash_block(d, keys, keys_in_n, continued, kernels, dim);
    g.flash_backward = true;
    return g;
  };
  b.set_phase(Phase::kRecompute);
  b.compute(prefix + "scores", backward(true, false, d.qk_dim), std::move(arrived));
  b.set_phase(Phase::kBackward);
  b.compute(prefix + "context.dp", backward(true, true, d.v_dim));   // dP = dO V^T
  b.compute(prefix + "context.dv", backward(false, true, d.v_dim));  // dV = P^T dO
  b.compute(prefix + "scores.dq", backward(false, true, d.qk_dim));  // dQ = dS K
  b.compute(prefix + "scores.dk", backward(false, true, d.qk_dim));  // dK = dS^T Q
}

// Returns what the QKV gradient waits for: the last exchange (p2p: the rank's dKV coming home) or the
// reduce-scatters of dK and dV (all_gather).
std::vector<int> context_parallel_attention_backward(OpListBuilder& b, const LayerDims& d, KernelSet kernels) {
  if (d.cp_comm == CpCommType::kAllGather) {
    const int k = b.collective(true, "attn.cp.k.all_gather", context_gather(d, Collective::kAllGather, true));
    const int v = b.prefetch(true, "attn.cp.v.all_gather", context_gather(d, Collective::kAllGather, false));
    flash_backward_products(b, d, flash_causal_keys(d.seq * d.cp), kernels, "attn.", {k, v});
    const int dk = b.collective(true, "attn.cp.dk.reduce_scatter", context_gather(d, Collective::kReduceScatter, true));
    const int dv =
        b.collective(true, "attn.cp.dv.reduce_scatter", context_gather(d, Collective::kReduceScatter, false));
    return {dk, dv};
  }
  // Step i's exchange leaves as the step starts: KV for step i + 1 and the dKV summed so far (step 0 has no dKV
  // yet, the last step's block is not needed again), and must be back before the step's dKV is added to it.
  int arrived = -1;
  for (int step = 0; step < d.cp; ++step) {
    const bool kv = step + 1 < d.cp;
    const bool dkv = step > 0;
    const std::string what = kv && dkv ? "kv_dkv" : kv ? "kv" : "dkv";
    const auto blocks = static_cast<std::uint64_t>((kv ? 1 : 0) + (dkv ? 1 : 0));
    const int exchange = b.collective(true, fmt::format("attn.cp{}.{}.sendrecv", step, what),
                                      context_collective(d, Collective::kSendRecv, kv_block_bytes(d) * blocks));
    flash_backward_products(b, d, p2p_step_keys(d, step), kernels, p2p_step_prefix(step), {arrived});
    arrived = exchange;
  }
  return {arrived};
}

// Names of the collective after a row-parallel GEMM and before a column-parallel one.
Collective reduce_kind(const LayerDims& d) { return d.sp ? Collective::kReduceScatter : Collective::kAllReduce; }
std::string reduce_name(const LayerDims& d, const std::string& prefix) {
  return prefix + (d.sp ? ".reduce_scatter" : ".all_reduce");
}

// Q K^T, softmax, dropout, P V: the part of attention whose activations grow with s^2. With eager
// kernels as PyTorch runs it: masked_fill as a copy and a fill before the softmax, and the context's
// transposing copy back to [s, b, h]. Flash attention: the two products' causal shares, nothing else.
void attention_core_forward(OpListBuilder& b, const LayerDims& d, bool flash, KernelSet kernels) {
  const bool eager = kernels == KernelSet::kEager;
  const std::uint64_t scores = elements(d.heads_batch, d.seq * d.seq);
  if (d.cp > 1) {  // flash attention only (validate_plan)
    context_parallel_attention_forward(b, d, kernels);
    return;
  }
  if (flash) {
    b.compute("attn.scores", flash_gemm(d, true, false, kernels, d.qk_dim));
    b.compute("attn.context", flash_gemm(d, false, true, kernels, d.v_dim));
    return;
  }
  b.compute("attn.scores", gemm(d, d.seq, d.seq, d.qk_dim, d.heads_batch));
  if (eager) {
    b.compute("attn.mask.copy", eager_kernel(K::kCopy, scores, d.w, d.w));
    b.compute("attn.mask", eager_kernel(K::kMask, scores, d.w, d.w));
  }
  b.compute("attn.softmax", kernel(kernels, K::kSoftmax, scores, d.w, d.w));
  if (d.dropout) b.compute("attn.dropout", kernel(kernels, K::kDropout, scores, d.w, d.w + 1));  // + the one-byte mask
  b.compute("attn.context", gemm(d, d.seq, d.v_dim, d.seq, d.heads_batch));
  if (eager) {
    b.compute("attn.context.permute", eager_kernel(K::kPermute, elements(d.heads_batch * d.seq, d.v_dim), d.w, d.w));
  }
}

// Dropout of a row-parallel GEMM's (reduced) output and the residual add: Megatron-LM's one fused
// bias-dropout-add kernel (writing the one-byte mask with dropout), or eager PyTorch's dropout (writing
// its mask), then an add; a model without dropout only adds.
void dropout_residual_forward(OpListBuilder& b, const LayerDims& d, KernelSet kernels, const std::string& prefix,
                              const std::string& linear, int reduce) {
  const std::uint64_t hidden_sp = elements(d.tokens_sp, d.hidden);
  const double mask = d.dropout ? 1 : 0;
  if (kernels == KernelSet::kFused) {
    b.compute(prefix + ".residual", memory_kernel(K::kResidual, hidden_sp, 2 * d.w, d.w + mask), {reduce});
    return;
  }
  if (d.dropout) {
    b.compute(linear + ".dropout", eager_kernel(K::kDropout, hidden_sp, d.w, d.w + 1), {reduce});
    b.compute(prefix + ".residual", eager_kernel(K::kAdd, hidden_sp, 2 * d.w, d.w));
  } else {
    b.compute(prefix + ".residual", eager_kernel(K::kAdd, hidden_sp, 2 * d.w, d.w), {reduce});
  }
}

// LoRA's view of a block (workload/lora.hpp): frozen base weights (no weight-gradient GEMMs), adapters
// beside the targeted linear layers, and with QLoRA a dequantization of each base weight before its GEMMs.
struct LoraLayer {
  LoraSpec spec;
  std::vector<LoraLinear> adapters;  // all of the block's
  bool quantized = false;            // the base linear weights in NF4 (the block's, not the head's)

  [[nodiscard]] bool frozen() const noexcept { return spec.enabled(); }
  // The adapters beside the base linear layer `base` ("qkv", "attn.proj", "mlp.fc1", "mlp.fc2").
  [[nodiscard]] std::vector<LoraLinear> beside(std::string_view base) const {
    std::vector<LoraLinear> out;
    for (const LoraLinear& l : adapters) {
      const bool q = l.name == "q_proj" || l.name == "k_proj" || l.name == "v_proj";
      const bool fc1 = l.name == "gate_proj" || l.name == "up_proj" || l.name == "fc1";
      if ((base == "qkv" && q) || (base == "attn.proj" && l.name == "o_proj") || (base == "mlp.fc1" && fc1) ||
          (base == "mlp.fc2" && l.name == "down_proj")) {
        out.push_back(l);
      }
    }
    return out;
  }
};

LoraLayer lora_layer(const TransformerConfig& m, const LoraSpec& spec) {
  LoraLayer l;
  l.spec = spec;
  if (!spec.enabled()) return l;
  l.adapters = lora_linears(m, spec.targets);
  l.quantized = spec.base_bits == 4;
  return l;
}

// QLoRA: the NF4 weight (half a byte, an 8-bit absmax per 64, an fp32 per 256 absmax) dequantized to the
// model's dtype before a GEMM uses it, as bitsandbytes' Linear4bit does in forward and backward; a
// streaming kernel, priced as a copy.
void dequantize(OpListBuilder& b, const LayerDims& d, const LoraLayer& lora, const std::string& base,
                std::int64_t in, std::int64_t out) {
  if (!lora.quantized) return;
  constexpr double kNf4BytesPerWeight = 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
  b.compute(base + ".dequant", memory_kernel(K::kCopy, elements(in, out), kNf4BytesPerWeight, d.w));
}

// x A (T x r), then (x A) B (T x out), its sum into the base's output in the GEMM's epilogue (beta = 1).
void lora_forward(OpListBuilder& b, const LayerDims& d, const LoraLayer& lora, const std::string& base) {
  const std::int64_t r = lora.spec.rank;
  for (const LoraLinear& l : lora.beside(base)) {
    b.compute(base + "." + l.name + ".lora_a", gemm(d, d.tokens, r, l.in));
    b.compute(base + "." + l.name + ".lora_b", gemm(d, d.tokens, l.out, r));
  }
}

// The adapters' backward: B's weight gradient (x A)^T dY and the gradient into x A, dY B^T; then A's weight
// gradient X^T d(x A) and its input gradient d(x A) A^T, added to the base's dX.
void lora_backward(OpListBuilder& b, const LayerDims& d, const LoraLayer& lora, const std::string& base) {
  const std::int64_t r = lora.spec.rank;
  const auto ru = static_cast<std::uint64_t>(r);
  for (const LoraLinear& l : lora.beside(base)) {
    const std::string name = base + "." + l.name;
    const int b_wgrad = b.compute(name + ".lora_b.wgrad", gemm(d, r, l.out, d.tokens));
    b.set_grad_parameters(b_wgrad, ru * static_cast<std::uint64_t>(l.out));
    b.compute(name + ".lora_b.dgrad", gemm(d, d.tokens, r, l.out));
    const int a_wgrad = b.compute(name + ".lora_a.wgrad", gemm(d, l.in, r, d.tokens));
    b.set_grad_parameters(a_wgrad, ru * static_cast<std::uint64_t>(l.in));
    b.compute(name + ".lora_a.dgrad", gemm(d, d.tokens, l.in, r));
  }
}

// ---- Mixture of experts (MOE.md) ----------------------------------------------------------------
// An MoE layer's MLP as Megatron-Core's MoELayer runs it with the all-to-all token dispatcher: the router
// (a GEMM to the expert scores, softmax and top-k), the tokens permuted by expert, the dispatch all-to-all
// over the expert-parallel group, the local experts' MLPs as one grouped GEMM each for fc1 and fc2 (a batch
// of `local` products of the even share of rows: routing priced as balanced), the combine all-to-all back,
// and the weighted sum of each token's k outputs. With sequence parallelism each tensor-parallel rank routes
// its own T / t tokens (Megatron-Core requires it with tp > 1); shared experts run beside as a
// tensor-parallel MLP over the whole sequence. With expert tensor parallelism etp > 1 each local expert's fc1
// is split by columns and fc2 by rows over the expert-tensor-parallel group, as Megatron-Core's
// MoEAlltoAllTokenDispatcher runs it: the rows received in the dispatch are all-gathered over that group
// (every member then holds etp x the rows), the experts compute F / etp of each, and their partial outputs are
// reduce-scattered back over the group before the combine. With context parallelism each cp rank routes its own
// tokens (T is already B s / cp: LayerDims), so the all-to-alls and expert rows follow from them (MOE.md).
struct MoeDims {
  std::int64_t tokens = 0;       // routed by this rank: T / t with sequence parallelism, else T (T = B s / cp)
  std::int64_t rows = 0;         // tokens x top-k (x the capacity factor, padded to it): what is dispatched
  std::int64_t received = 0;     // what the most loaded rank receives: rows x the load imbalance (MoeConfig)
  std::int64_t gathered = 0;     // the rows its experts compute: received x etp (all-gathered over etp)
  std::int64_t local = 1;        // experts on this rank: experts / ep
  std::int64_t expert_rows = 0;  // gathered rows per local expert: ceil(gathered / local)
  std::int64_t ffn = 0;          // this rank's share of an expert's F: F / etp
  std::int64_t fc1_out = 0;      // that share, or twice it for SwiGLU
  int experts = 0;
  int ep = 1;
  bool exchange = false;  // ep > 1: the all-to-alls run
  bool gather = false;    // etp > 1: the all-gather and reduce-scatter over the expert-tensor-parallel group run
  bool sort = false;      // several local experts and rows from other ranks: rows re-sorted by local expert
};

MoeDims moe_dims(const TransformerConfig& m, const LayerDims& d, int ep, int etp) {
  MoeDims e;
  e.tokens = d.tokens_sp;
  const RoutedRows rows = routed_rows(m, d, ep);
  e.rows = rows.sent;
  e.received = rows.received;
  e.gathered = e.received * etp;
  e.local = m.moe.experts / ep;
  e.expert_rows = (e.gathered + e.local - 1) / e.local;
  e.ffn = m.moe.expert_ffn / etp;
  e.fc1_out = m.activation == MlpActivation::kSwiGlu ? 2 * e.ffn : e.ffn;
  e.experts = m.moe.experts;
  e.ep = ep;
  e.exchange = ep > 1;
  e.gather = etp > 1;
  e.sort = (e.exchange || e.gather) && e.local > 1;
  return e;
}

// The dispatch or combine all-to-all: every dispatched row of the hidden size, as nccl-tests sizes an
// all-to-all (the whole send buffer; a rank keeps 1/ep of it). With a load imbalance, the most loaded rank's
// rows: it receives them in the dispatch and sends them back in the combine, and the others wait for it.
// Elements that do not split into ep equal chunks are padded to them (whole_chunks).
LayerCollective moe_exchange(const LayerDims& d, const MoeDims& e) {
  const std::uint64_t sent = whole_chunks(elements(e.received, d.hidden), e.ep);
  return {Collective::kAllToAll, Bytes(sent * size_of(d.dtype)), d.dtype, GroupRole::kExpert};
}

// The all-gather of the received rows over the expert-tensor-parallel group before the experts (Megatron-Core's
// gather_from_sequence_parallel_region in dispatch_postprocess), or the reduce-scatter of the experts' partial
// outputs after them (reduce_scatter_to_sequence_parallel_region in combine_preprocess, in the router
// probabilities' type: the model's, as Megatron-Core's router returns them); the backward runs each as the
// other. Sized as nccl-tests sizes them: the gathered rows x h (each member's received rows x etp).
LayerCollective moe_expert_tp(const LayerDims& d, const MoeDims& e, Collective kind) {
  return {kind, Bytes(elements(e.gathered, d.hidden) * size_of(d.dtype)), d.dtype, GroupRole::kExpertTp};
}

// The shared experts' dims: a tensor-parallel MLP of the shared width.
LayerDims shared_dims(const TransformerConfig& m, LayerDims d) {
  d.ffn = m.moe.shared_ffn / d.tp;
  d.fc1_out = m.activation == MlpActivation::kSwiGlu ? 2 * d.ffn : d.ffn;
  return d;
}

// How an MoE layer's routed experts are split: over ep ranks, each over etp; ep 0 for a dense layer.
struct MoeSplit {
  int ep = 0;
  int etp = 1;
};

MoeSplit moe_split(const LayerSharding& s, bool moe) { return moe ? MoeSplit{s.ep, s.etp} : MoeSplit{}; }

void moe_forward(OpListBuilder& b, const TransformerConfig& m, const LayerDims& d, int ep, int etp) {
  const MoeDims e = moe_dims(m, d, ep, etp);
  const bool swiglu = m.activation == MlpActivation::kSwiGlu;
  int shared_reduce = -1;
  if (m.moe.shared_ffn > 0) {
    const LayerDims s = shared_dims(m, d);
    const int gather = b.collective(d.sp, "ln2.all_gather", hidden_collective(d, Collective::kAllGather));
    b.compute("shared.fc1", gemm(d, d.tokens, s.fc1_out, d.hidden), {gather});
    b.compute("shared.act", memory_kernel(K::kActivation, elements(d.tokens, s.ffn), swiglu ? 2 * d.w : d.w, d.w));
    b.compute("shared.fc2", gemm(d, d.tokens, d.hidden, s.ffn));
    shared_reduce = b.collective(d.tp_comm, reduce_name(d, "shared"), hidden_collective(d, reduce_kind(d)));
  }
  b.compute("router", gemm(d, e.tokens, e.experts, d.hidden));
  b.compute("router.topk", memory_kernel(K::kSoftmax, elements(e.tokens, e.experts), d.w, d.w));
  const auto row_elements = elements(e.rows, d.hidden);
  b.compute("dispatch.permute", memory_kernel(K::kPermute, row_elements, d.w, d.w));
  const int dispatch = b.collective(e.exchange, "dispatch.all_to_all", moe_exchange(d, e));
  const int gather = b.collective(e.gather, "dispatch.all_gather", moe_expert_tp(d, e, Collective::kAllGather));
  const auto gathered_elements = elements(e.gathered, d.hidden);
  if (e.sort) {
    b.compute("dispatch.sort", memory_kernel(K::kPermute, gathered_elements, d.w, d.w), {dispatch, gather});
  }
  b.compute("experts.fc1", gemm(d, e.expert_rows, e.fc1_out, d.hidden, e.local), {dispatch, gather});
  b.compute("experts.act",
            memory_kernel(K::kActivation, elements(e.expert_rows * e.local, e.ffn), swiglu ? 2 * d.w : d.w, d.w));
  b.compute("experts.fc2", gemm(d, e.expert_rows, d.hidden, e.ffn, e.local));
  if (e.sort) b.compute("combine.sort", memory_kernel(K::kPermute, gathered_elements, d.w, d.w));
  const int scatter = b.collective(e.gather, "combine.reduce_scatter", moe_expert_tp(d, e, Collective::kReduceScatter));
  const int combine = b.collective(e.exchange, "combine.all_to_all", moe_exchange(d, e));
  // Each token's k outputs weighted by its router probabilities and summed: rows read, tokens written.
  const double written = d.w * static_cast<double>(e.tokens) / static_cast<double>(e.rows);
  b.compute("combine.unpermute", memory_kernel(K::kPermute, row_elements, d.w, written),
            {scatter, combine, shared_reduce});
}

// The mirror image; ends with ln2's backward (the shared experts' column block brings it where they exist).
void moe_backward(OpListBuilder& b, const TransformerConfig& m, const LayerDims& d, int ep, int etp,
                  std::uint64_t ln2_params) {
  const MoeDims e = moe_dims(m, d, ep, etp);
  const bool swiglu = m.activation == MlpActivation::kSwiGlu;
  if (d.dropout) {
    b.compute("mlp.residual", memory_kernel(K::kResidual, elements(d.tokens_sp, d.hidden), d.w + 1, d.w));
  }
  const auto row_elements = elements(e.rows, d.hidden);
  const double tokens_per_row = static_cast<double>(e.tokens) / static_cast<double>(e.rows);
  b.compute("combine.unpermute", memory_kernel(K::kPermute, row_elements, d.w * tokens_per_row, d.w));
  const auto gathered_elements = elements(e.gathered, d.hidden);
  if (e.sort) b.compute("combine.sort", memory_kernel(K::kPermute, gathered_elements, d.w, d.w));
  const int combine = b.collective(e.exchange, "combine.all_to_all", moe_exchange(d, e));
  const int gather = b.collective(e.gather, "combine.all_gather", moe_expert_tp(d, e, Collective::kAllGather));
  const auto local = static_cast<std::uint64_t>(e.local);
  b.compute("experts.fc2.dgrad", gemm(d, e.expert_rows, e.ffn, d.hidden, e.local), {combine, gather});
  const int fc2_wgrad = b.compute("experts.fc2.wgrad", gemm(d, e.ffn, d.hidden, e.expert_rows, e.local));
  const std::uint64_t bias = m.linear_bias ? 1 : 0;  // an expert's biases are reduced with its weights
  b.set_grad_parameters(fc2_wgrad, local * (elements(e.ffn, d.hidden) + bias * elements(1, d.hidden)), true);
  b.compute("experts.act", memory_kernel(K::kActivation, elements(e.expert_rows * e.local, e.ffn),
                                         swiglu ? 3 * d.w : 2 * d.w, swiglu ? 2 * d.w : d.w));
  b.compute("experts.fc1.dgrad", gemm(d, e.expert_rows, d.hidden, e.fc1_out, e.local));
  const int fc1_wgrad = b.compute("experts.fc1.wgrad", gemm(d, d.hidden, e.fc1_out, e.expert_rows, e.local));
  b.set_grad_parameters(fc1_wgrad, local * (elements(d.hidden, e.fc1_out) + bias * elements(1, e.fc1_out)), true);
  if (e.sort) b.compute("dispatch.sort", memory_kernel(K::kPermute, gathered_elements, d.w, d.w));
  const int scatter =
      b.collective(e.gather, "dispatch.reduce_scatter", moe_expert_tp(d, e, Collective::kReduceScatter));
  const int dispatch = b.collective(e.exchange, "dispatch.all_to_all", moe_exchange(d, e));
  b.compute("dispatch.permute", memory_kernel(K::kPermute, row_elements, d.w, d.w * tokens_per_row),
            {scatter, dispatch});
  b.compute("router.topk", memory_kernel(K::kSoftmax, elements(e.tokens, e.experts), 2 * d.w, d.w));
  b.compute("router.dgrad", gemm(d, e.tokens, d.hidden, e.experts));
  const int router = b.compute("router.wgrad", gemm(d, d.hidden, e.experts, e.tokens));
  b.set_grad_parameters(router, elements(d.hidden, e.experts));
  if (m.moe.shared_ffn == 0) {
    const int norm = b.compute("ln2", memory_kernel(K::kNorm, elements(d.tokens_sp, d.hidden), 3 * d.w, d.w));
    b.set_grad_parameters(norm, ln2_params);
  }
}

// ---- Multi-head latent attention (MLA.md) ------------------------------------------------------
// Megatron-Core's MLASelfAttention with TransformerEngine: the down projections (H -> q_lora_rank, H ->
// kv_lora_rank + d_rope) are TELinear "duplicated": every tp rank holds them whole and projects the rows of
// ln1's output it has, the T / t shard with sequence parallelism (no all-gather before them, unlike a
// column-parallel layer), all T tokens without. The latents are normalized on those rows and all-gathered
// over tp (with sp) as the column-parallel up projections' input, and so is the keys' rotary part, shared by
// every head (k_pos_emb, gather_from_sequence_parallel_region). Without a q latent (DeepSeek-V2-Lite) the
// queries come from a column-parallel projection of ln1's output, gathered as qkv's is. Each up projection's
// input gradient is all-reduced (reduce-scattered with sp) over tp as any column-parallel layer's; the rotary
// part's gradient is reduce-scattered with sp. The replicated weights' gradients are summed over tp at the end
// of the step with sp (the program builder's step.norm_grads). The rotary embedding's kernels are left out.

// A collective over all T tokens of `width` elements each.
LayerCollective token_collective(const LayerDims& d, Collective kind, std::int64_t width) {
  return {kind, Bytes(elements(d.tokens, width) * size_of(d.dtype)), d.dtype};
}

// The parameters of one latent's norm.
std::uint64_t latent_norm_parameters(const TransformerConfig& m, std::int64_t width) {
  return (m.norm == NormKind::kLayerNorm ? 2 : 1) * static_cast<std::uint64_t>(width);
}

void mla_projections_forward(OpListBuilder& b, const LayerDims& d) {
  if (d.q_lora > 0) {
    b.compute("attn.q_down", gemm(d, d.tokens_sp, d.q_lora, d.hidden));
    b.compute("attn.q_norm", memory_kernel(K::kNorm, elements(d.tokens_sp, d.q_lora), d.w, d.w));
    const int gather =
        b.collective(d.sp, "attn.q_norm.all_gather", token_collective(d, Collective::kAllGather, d.q_lora));
    b.compute("attn.q_up", gemm(d, d.tokens, d.q_out, d.q_lora), {gather});
  } else {
    const int gather = b.collective(d.sp, "ln1.all_gather", hidden_collective(d, Collective::kAllGather));
    b.compute("attn.q_proj", gemm(d, d.tokens, d.q_out, d.hidden), {gather});
  }
  b.compute("attn.kv_down", gemm(d, d.tokens_sp, d.kv_lora + d.rope, d.hidden));
  b.compute("attn.kv_norm", memory_kernel(K::kNorm, elements(d.tokens_sp, d.kv_lora), d.w, d.w));
  const int rope = b.collective(d.sp, "attn.k_rope.all_gather", token_collective(d, Collective::kAllGather, d.rope));
  const int gather =
      b.collective(d.sp, "attn.kv_norm.all_gather", token_collective(d, Collective::kAllGather, d.kv_lora));
  b.compute("attn.kv_up", gemm(d, d.tokens, d.kv_up_out, d.kv_lora), {gather, rope});
}

// A duplicated down projection's backward, on this rank's rows.
void down_backward(OpListBuilder& b, const LayerDims& d, const std::string& name, std::int64_t out,
                   std::vector<int> inputs) {
  b.compute(name + ".dgrad", gemm(d, d.tokens_sp, d.hidden, out), std::move(inputs));
  const int wgrad = b.compute(name + ".wgrad", gemm(d, d.hidden, out, d.tokens_sp));
  b.set_grad_parameters(wgrad, elements(d.hidden, out));
}

void forward(OpListBuilder& b, const TransformerConfig& m, const LayerDims& d, bool flash, KernelSet kernels,
             const LoraLayer& lora, MoeSplit moe = {}) {
  const std::uint64_t hidden_sp = elements(d.tokens_sp, d.hidden);
  b.compute("ln1", kernel(kernels, K::kNorm, hidden_sp, d.w, d.w));
  if (d.kv_lora > 0) {
    mla_projections_forward(b, d);
  } else {
    const int ln1_gather = b.collective(d.sp, "ln1.all_gather", hidden_collective(d, Collective::kAllGather));
    dequantize(b, d, lora, "qkv", d.hidden, d.qkv_out);
    b.compute("qkv", gemm(d, d.tokens, d.qkv_out, d.hidden), {ln1_gather});
    lora_forward(b, d, lora, "qkv");
  }
  attention_core_forward(b, d, flash, kernels);
  dequantize(b, d, lora, "attn.proj", d.proj_in, d.hidden);
  b.compute("attn.proj", gemm(d, d.tokens, d.hidden, d.proj_in));
  lora_forward(b, d, lora, "attn.proj");
  const int attn_reduce = b.collective(d.tp_comm, reduce_name(d, "attn"), hidden_collective(d, reduce_kind(d)));
  dropout_residual_forward(b, d, kernels, "attn", "attn.proj", attn_reduce);
  b.compute("ln2", kernel(kernels, K::kNorm, hidden_sp, d.w, d.w));
  if (moe.ep > 0) {
    moe_forward(b, m, d, moe.ep, moe.etp);
    dropout_residual_forward(b, d, kernels, "mlp", "combine", -1);
    return;
  }
  const int ln2_gather = b.collective(d.sp, "ln2.all_gather", hidden_collective(d, Collective::kAllGather));
  dequantize(b, d, lora, "mlp.fc1", d.hidden, d.fc1_out);
  b.compute("mlp.fc1", gemm(d, d.tokens, d.fc1_out, d.hidden), {ln2_gather});
  lora_forward(b, d, lora, "mlp.fc1");
  const bool swiglu = m.activation == MlpActivation::kSwiGlu;
  b.compute("mlp.act", kernel(kernels, K::kActivation, elements(d.tokens, d.ffn), swiglu ? 2 * d.w : d.w, d.w));
  dequantize(b, d, lora, "mlp.fc2", d.ffn, d.hidden);
  b.compute("mlp.fc2", gemm(d, d.tokens, d.hidden, d.ffn));
  lora_forward(b, d, lora, "mlp.fc2");
  const int mlp_reduce = b.collective(d.tp_comm, reduce_name(d, "mlp"), hidden_collective(d, reduce_kind(d)));
  dropout_residual_forward(b, d, kernels, "mlp", "mlp.fc2", mlp_reduce);
}

// dX = dY W^T, then (column-parallel layers) the reduction of dX runs while dW = X^T dY does.
struct Linear {
  std::string name;
  std::int64_t in = 0;   // k of the forward GEMM
  std::int64_t out = 0;  // n of the forward GEMM
};

// With eager kernels as PyTorch runs it: masked_fill's backward too, and the QKV gradient assembled
// by a cat and a copy back to [s, b, 3h]. Flash attention: QK^T recomputed, then the four gradient
// products, each the causal share. Returns what the QKV gradient waits for (context parallelism's exchanges).
std::vector<int> attention_core_backward(OpListBuilder& b, const LayerDims& d, bool flash, KernelSet kernels) {
  const bool eager = kernels == KernelSet::kEager;
  const std::uint64_t scores = elements(d.heads_batch, d.seq * d.seq);
  if (d.cp > 1) return context_parallel_attention_backward(b, d, kernels);  // flash attention only (validate_plan)
  if (flash) {
    flash_backward_products(b, d, flash_causal_keys(d.seq), kernels, "attn.", {});
  } else {
    b.compute("attn.context.dp", gemm(d, d.seq, d.seq, d.v_dim, d.heads_batch));  // dP = dO V^T
    b.compute("attn.context.dv", gemm(d, d.seq, d.v_dim, d.seq, d.heads_batch));  // dV = P^T dO
    if (d.dropout) b.compute("attn.dropout", kernel(kernels, K::kDropout, scores, d.w + 1, d.w));
    b.compute("attn.softmax", kernel(kernels, K::kSoftmax, scores, 2 * d.w, d.w));
    if (eager) {
      b.compute("attn.mask.copy", eager_kernel(K::kCopy, scores, d.w, d.w));
      b.compute("attn.mask", eager_kernel(K::kMask, scores, d.w, d.w));
    }
    b.compute("attn.scores.dq", gemm(d, d.seq, d.qk_dim, d.seq, d.heads_batch));  // dQ = dS K
    b.compute("attn.scores.dk", gemm(d, d.seq, d.qk_dim, d.seq, d.heads_batch));  // dK = dS^T Q
  }
  if (eager) {
    b.compute("attn.qkv.cat", eager_kernel(K::kPermute, elements(d.tokens, d.qkv_out), d.w, d.w));
    b.compute("attn.qkv.permute", eager_kernel(K::kPermute, elements(d.tokens, d.qkv_out), d.w, d.w));
  }
  return {};
}

// The backward of norm -> [AG] -> column-parallel GEMMs, ending with the norm's own backward.
// With LoRA (`lora.frozen()`) the base weight takes no gradient: its adapters' backward runs instead, and
// the norm's parameters are frozen too.
// `inputs`: what the output gradient waits for besides the op before (context parallelism's exchanges).
// The norm's output is the linear layer's input, linear.in wide: the hidden size, or an MLA latent's (MLA.md).
// Returns the input gradient's reduction over tp.
int column_block_backward(OpListBuilder& b, const LayerDims& d, const std::string& norm, const Linear& linear,
                          std::uint64_t norm_params, std::uint64_t linear_params, const LoraLayer& lora,
                          std::vector<int> inputs = {}) {
  const int regather = b.prefetch(d.sp, norm + ".all_gather", token_collective(d, Collective::kAllGather, linear.in));
  lora_backward(b, d, lora, linear.name);
  dequantize(b, d, lora, linear.name, linear.in, linear.out);
  b.compute(linear.name + ".dgrad", gemm(d, d.tokens, linear.in, linear.out), std::move(inputs));
  const int reduce =
      b.collective(d.tp_comm, reduce_name(d, linear.name), token_collective(d, reduce_kind(d), linear.in));
  if (!lora.frozen()) {
    const int wgrad = b.compute(linear.name + ".wgrad", gemm(d, linear.in, linear.out, d.tokens), {regather});
    b.set_grad_parameters(wgrad, linear_params);
  }
  const int norm_bwd =
      b.compute(norm, memory_kernel(K::kNorm, elements(d.tokens_sp, linear.in), 3 * d.w, d.w), {reduce});
  if (!lora.frozen()) b.set_grad_parameters(norm_bwd, norm_params);
  return reduce;
}

// The column-parallel block's backward with no adapters (MLA is refused with LoRA).
int latent_block_backward(OpListBuilder& b, const LayerDims& d, const std::string& norm, const Linear& linear,
                          std::uint64_t norm_params, std::vector<int> inputs = {}) {
  return column_block_backward(b, d, norm, linear, norm_params, elements(linear.in, linear.out), LoraLayer{},
                               std::move(inputs));
}

// The mirror image of mla_projections_forward, ending with ln1's backward. `inputs`: what the first gradient
// waits for besides the op before. Each latent's norm and up projection is a column-parallel block on the
// latent (the all-gather of its input, the reduction of its input gradient).
void mla_projections_backward(OpListBuilder& b, const TransformerConfig& m, const LayerDims& d,
                              std::uint64_t ln1_params, std::vector<int> inputs) {
  const int kv = latent_block_backward(b, d, "attn.kv_norm", {"attn.kv_up", d.kv_lora, d.kv_up_out},
                                       latent_norm_parameters(m, d.kv_lora), std::move(inputs));
  const int rope =
      b.collective(d.sp, "attn.k_rope.reduce_scatter", token_collective(d, Collective::kReduceScatter, d.rope));
  down_backward(b, d, "attn.kv_down", d.kv_lora + d.rope, {kv, rope});
  if (d.q_lora == 0) {  // the queries' column-parallel projection of ln1's output, as qkv's
    latent_block_backward(b, d, "ln1", {"attn.q_proj", d.hidden, d.q_out}, ln1_params);
    return;
  }
  const int q =
      latent_block_backward(b, d, "attn.q_norm", {"attn.q_up", d.q_lora, d.q_out}, latent_norm_parameters(m, d.q_lora));
  down_backward(b, d, "attn.q_down", d.q_lora, {q});
  const int norm = b.compute("ln1", memory_kernel(K::kNorm, elements(d.tokens_sp, d.hidden), 3 * d.w, d.w), {q});
  b.set_grad_parameters(norm, ln1_params);
}

// The backward of a row-parallel GEMM followed by bias-dropout-residual.
void row_block_backward(OpListBuilder& b, const LayerDims& d, const std::string& prefix, const Linear& linear,
                        std::uint64_t linear_params, const LoraLayer& lora) {
  // The mask applied to the gradient; without dropout the residual's backward passes it on as it is.
  if (d.dropout) {
    b.compute(prefix + ".residual", memory_kernel(K::kResidual, elements(d.tokens_sp, d.hidden), d.w + 1, d.w));
  }
  const int gather = b.collective(d.sp, prefix + ".all_gather", hidden_collective(d, Collective::kAllGather));
  lora_backward(b, d, lora, linear.name);
  dequantize(b, d, lora, linear.name, linear.in, linear.out);
  b.compute(linear.name + ".dgrad", gemm(d, d.tokens, linear.in, linear.out), {gather});
  if (lora.frozen()) return;
  const int wgrad = b.compute(linear.name + ".wgrad", gemm(d, linear.in, linear.out, d.tokens));
  b.set_grad_parameters(wgrad, linear_params);
}

// ---- Eager PyTorch (KernelSet::kEager) ----------------------------------------------------------
// One kernel per tensor operation, as PyTorch runs the block of launch/pytorch_reference.py
// (nn.LayerNorm, nn.Linear, F.gelu, F.dropout, and F.scaled_dot_product_attention or baddbmm,
// masked_fill, softmax, dropout, bmm) without torch.compile; the kernels are those torch.profiler
// lists for it on an H200 (results/h200x1-2026-12-01c/README.md). Against the fused layout above:
//  - a linear layer's bias rides in the GEMM's epilogue (cuBLASLt), but its gradient is a reduction
//    of its own (bias_grad);
//  - bias-dropout-residual is a dropout kernel (writing its one-byte mask) and an add, forward, and a
//    dropout backward, then an add where the residual gradient meets the branch's, backward;
//  - unfused attention's context goes back from bmm's [b a, s, d] to [s, b, h] through a transposing
//    copy (SDPA's output keeps its query's order: a view); backward, the query, key and value
//    gradients are concatenated into the QKV gradient (cat), which is then copied back from heads
//    first to [s, b, 3h] (two layout copies; the context gradient needs none, bmm takes its view);
//  - unfused attention masks with masked_fill into a new tensor (a copy, then the masked fill), and
//    its backward masks the gradient the same way;
//  - LayerNorm's backward is two kernels: the input gradient, then the weight and bias gradients;
//  - weight gradients are accumulated over microbatches by an add per parameter (OpListBuilder).
// Flash attention keeps the fused layout's GEMMs (cuDNN's kernels do the same FLOPs).

// The backward of norm -> [AG] -> column-parallel linear, and the add where the residual gradient
// meets the branch's.
void eager_column_block_backward(OpListBuilder& b, const TransformerConfig& m, const LayerDims& d,
                                 const std::string& norm, const Linear& linear, std::uint64_t norm_params,
                                 std::uint64_t linear_params) {
  const std::uint64_t hidden_sp = elements(d.tokens_sp, d.hidden);
  if (m.linear_bias) {
    b.compute(linear.name + ".bias_grad", eager_kernel(K::kBiasGrad, elements(d.tokens, linear.out), d.w, 0));
  }
  const int regather = b.prefetch(d.sp, norm + ".all_gather", hidden_collective(d, Collective::kAllGather));
  b.compute(linear.name + ".dgrad", gemm(d, d.tokens, linear.in, linear.out));
  const int reduce = b.collective(d.tp_comm, reduce_name(d, linear.name), hidden_collective(d, reduce_kind(d)));
  const int wgrad = b.compute(linear.name + ".wgrad", gemm(d, linear.in, linear.out, d.tokens), {regather});
  b.set_grad_parameters(wgrad, linear_params);
  b.compute(norm, eager_kernel(K::kNorm, hidden_sp, 2 * d.w, d.w), {reduce});
  const int params = b.compute(norm + ".params", eager_kernel(K::kNorm, hidden_sp, 2 * d.w, 0));
  b.set_grad_parameters(params, norm_params);
  b.compute(norm + ".residual", eager_kernel(K::kAdd, hidden_sp, 2 * d.w, d.w));
}

// The backward of row-parallel linear -> dropout -> residual add.
void eager_row_block_backward(OpListBuilder& b, const TransformerConfig& m, const LayerDims& d,
                              const std::string& prefix, const Linear& linear, std::uint64_t linear_params) {
  if (d.dropout) {
    b.compute(linear.name + ".dropout", eager_kernel(K::kDropout, elements(d.tokens_sp, d.hidden), d.w + 1, d.w));
  }
  const int gather = b.collective(d.sp, prefix + ".all_gather", hidden_collective(d, Collective::kAllGather));
  if (m.linear_bias) {
    b.compute(linear.name + ".bias_grad", eager_kernel(K::kBiasGrad, elements(d.tokens, d.hidden), d.w, 0), {gather});
  }
  b.compute(linear.name + ".dgrad", gemm(d, d.tokens, linear.in, linear.out), {gather});
  const int wgrad = b.compute(linear.name + ".wgrad", gemm(d, linear.in, linear.out, d.tokens));
  b.set_grad_parameters(wgrad, linear_params);
}

// The shared experts' backward after the routed experts' (moe_backward): the tensor-parallel MLP's, its
// column block ending with ln2's backward.
void shared_experts_backward(OpListBuilder& b, const TransformerConfig& m, const LayerDims& d, const LayerParameters& p,
                             const LoraLayer& lora) {
  const LayerDims s = shared_dims(m, d);
  const bool swiglu = m.activation == MlpActivation::kSwiGlu;
  const int gather = b.collective(d.sp, "shared.all_gather", hidden_collective(d, Collective::kAllGather));
  b.compute("shared.fc2.dgrad", gemm(d, d.tokens, s.ffn, d.hidden), {gather});
  const int wgrad = b.compute("shared.fc2.wgrad", gemm(d, s.ffn, d.hidden, d.tokens));
  b.set_grad_parameters(wgrad, p.fc2);
  b.compute("shared.act", memory_kernel(K::kActivation, elements(d.tokens, s.ffn), swiglu ? 3 * d.w : 2 * d.w,
                                        swiglu ? 2 * d.w : d.w));
  column_block_backward(b, s, "ln2", {"shared.fc1", d.hidden, s.fc1_out}, p.ln2, p.fc1, lora);
}

void recompute_prelude(OpListBuilder& b, const TransformerConfig& m, const LayerDims& d, const LayerSharding& s,
                       bool moe) {
  if (s.recompute == Recompute::kNone) return;
  if (s.recompute == Recompute::kSelective && s.flash_attention) return;  // flash recomputes on its own
  b.set_phase(Phase::kRecompute);
  if (s.recompute == Recompute::kFull) {
    forward(b, m, d, s.flash_attention, s.kernels, lora_layer(m, s.lora), moe_split(s, moe));
  } else {
    attention_core_forward(b, d, false, s.kernels);
  }
  b.set_phase(Phase::kBackward);
}

// The kernels that add one microbatch's weight gradients (of `w` bytes an element) to the accumulated ones
// (op_list.hpp, GradAccumulation; `later`: every microbatch of the step but the first).
OpListBuilder::Accumulation accumulation_kernels(GradAccumulation g, DataType dtype, double w, bool later) {
  const bool bf16 = dtype == DataType::kBFloat16;
  if (g == GradAccumulation::kDeepSpeed) {
    // BF16_Optimizer.update_hp_grads: hp_grad.add_(lp.grad.to(fp32)): a cast (w in, 4 out), an fp32 add.
    if (bf16) return {.cast_read = w, .cast_written = 4.0, .add_read = 8.0, .add_written = 4.0};
    g = GradAccumulation::kAutogradAdd;
  }
  if (g == GradAccumulation::kAutogradAdd) {
    return later ? OpListBuilder::Accumulation{.add_read = 2 * w, .add_written = w} : OpListBuilder::Accumulation{};
  }
  if (g == GradAccumulation::kMainGradAdd) {
    const double main = bf16 ? 4.0 : w;  // main_grad: fp32 in bf16 training
    return {.add_read = w + main, .add_written = main};
  }
  return {};
}

OpListBuilder backward_builder(const TransformerConfig& m, const LayerDims& d, const LayerSharding& s,
                               bool accumulate) {
  OpListBuilder b(Phase::kBackward);
  const GradAccumulation g = s.kernels == KernelSet::kEager ? GradAccumulation::kAutogradAdd : s.grad_accumulation;
  b.accumulate_gradients(accumulation_kernels(g, m.dtype, d.w, accumulate));
  return b;
}

}  // namespace

OpList layer_forward_ops(const TransformerConfig& m, const LayerSharding& s, bool moe) {
  OpListBuilder b(Phase::kForward);
  forward(b, m, layer_dims(m, s), s.flash_attention, s.kernels, lora_layer(m, s.lora), moe_split(s, moe));
  return with_fp8(b.take(), m, s);
}

OpList layer_backward_ops(const TransformerConfig& m, const LayerSharding& s, bool accumulate, bool moe) {
  const LayerDims d = layer_dims(m, s);
  const LayerParameters p = moe ? layer_parameters(m, s.tp, m.layers - 1, s.ep, s.etp) : layer_parameters(m, s.tp);
  const bool swiglu = m.activation == MlpActivation::kSwiGlu;
  OpListBuilder b = backward_builder(m, d, s, accumulate);
  recompute_prelude(b, m, d, s, moe);
  if (s.kernels == KernelSet::kEager) {
    eager_row_block_backward(b, m, d, "mlp", {"mlp.fc2", d.ffn, d.hidden}, p.fc2);
    b.compute("mlp.act", eager_kernel(K::kActivation, elements(d.tokens, d.ffn), swiglu ? 3 * d.w : 2 * d.w,
                                      swiglu ? 2 * d.w : d.w));
    eager_column_block_backward(b, m, d, "ln2", {"mlp.fc1", d.hidden, d.fc1_out}, p.ln2, p.fc1);
    eager_row_block_backward(b, m, d, "attn", {"attn.proj", d.proj_in, d.hidden}, p.proj);
    attention_core_backward(b, d, s.flash_attention, KernelSet::kEager);
    eager_column_block_backward(b, m, d, "ln1", {"qkv", d.hidden, d.qkv_out}, p.ln1, p.qkv);
    return with_fp8(b.take(), m, s);
  }
  const LoraLayer lora = lora_layer(m, s.lora);
  if (moe) {
    moe_backward(b, m, d, s.ep, s.etp, p.ln2);
    if (m.moe.shared_ffn > 0) shared_experts_backward(b, m, d, p, lora);
  } else {
    row_block_backward(b, d, "mlp", {"mlp.fc2", d.ffn, d.hidden}, p.fc2, lora);
    b.compute("mlp.act", memory_kernel(K::kActivation, elements(d.tokens, d.ffn), swiglu ? 3 * d.w : 2 * d.w,
                                       swiglu ? 2 * d.w : d.w));
    column_block_backward(b, d, "ln2", {"mlp.fc1", d.hidden, d.fc1_out}, p.ln2, p.fc1, lora);
  }
  row_block_backward(b, d, "attn", {"attn.proj", d.proj_in, d.hidden}, p.proj, lora);
  const std::vector<int> attention = attention_core_backward(b, d, s.flash_attention, KernelSet::kFused);
  if (d.kv_lora > 0) {
    mla_projections_backward(b, m, d, p.ln1, attention);
  } else {
    column_block_backward(b, d, "ln1", {"qkv", d.hidden, d.qkv_out}, p.ln1, p.qkv, lora, attention);
  }
  return with_fp8(b.take(), m, s);
}

OpList embedding_forward_ops(const TransformerConfig& m, const LayerSharding& s) {
  OpListBuilder b(Phase::kForward);
  if (m.vocab == 0) return b.take();
  const LayerDims d = layer_dims(m, s);
  const double tables = m.positions == PositionEmbedding::kLearned ? 2 : 1;  // token rows (+ position rows)
  b.compute("embedding", memory_kernel(K::kEmbedding, elements(d.tokens, d.hidden), tables * d.w, d.w));
  // Each rank looked up its slice of the vocabulary: sum the partial embeddings (scatter them with SP).
  b.collective(d.tp_comm, reduce_name(d, "embedding"), hidden_collective(d, reduce_kind(d)));
  return b.take();
}

OpList embedding_backward_ops(const TransformerConfig& m, const LayerSharding& s, bool accumulate) {
  const LayerDims d = layer_dims(m, s);
  OpListBuilder b = backward_builder(m, d, s, accumulate);
  // With LoRA the embedding is frozen, and nothing before it needs a gradient.
  if (m.vocab == 0 || s.lora.enabled()) return b.take();
  const int gather = b.collective(d.sp, "embedding.all_gather", hidden_collective(d, Collective::kAllGather));
  const int scatter_add =
      b.compute("embedding", memory_kernel(K::kEmbedding, elements(d.tokens, d.hidden), 2 * d.w, d.w), {gather});
  b.set_grad_parameters(scatter_add, embedding_parameters(m, s.tp));
  return b.take();
}

OpList head_forward_ops(const TransformerConfig& m, const LayerSharding& s) {
  OpListBuilder b(Phase::kForward);
  if (m.vocab == 0) return b.take();
  const LayerDims d = layer_dims(m, s);
  b.compute("final_norm", memory_kernel(K::kNorm, elements(d.tokens_sp, d.hidden), d.w, d.w));
  const int gather = b.collective(d.sp, "final_norm.all_gather", hidden_collective(d, Collective::kAllGather));
  b.compute("logits", gemm(d, d.tokens, d.vocab, d.hidden), {gather});
  // Softmax kept in fp32 for the backward, as Megatron-LM's vocabulary-parallel cross entropy does.
  b.compute("loss", memory_kernel(K::kCrossEntropy, elements(d.tokens, d.vocab), d.w, 4));
  // That cross entropy all-reduces, over the tensor-parallel group, one fp32 per token three times:
  // the logit maximum, the target logit and the sum of exponentials.
  const LayerCollective per_token{Collective::kAllReduce, Bytes(static_cast<std::uint64_t>(d.tokens) * 4),
                                  DataType::kFloat32};
  for (const char* what : {"loss.max.all_reduce", "loss.target.all_reduce", "loss.sum.all_reduce"}) {
    b.collective(d.tp_comm, what, per_token);
  }
  return b.take();
}

OpList head_backward_ops(const TransformerConfig& m, const LayerSharding& s, int pp, bool accumulate) {
  const LayerDims d = layer_dims(m, s);
  OpListBuilder b = backward_builder(m, d, s, accumulate);
  if (m.vocab == 0) return b.take();
  b.compute("loss", memory_kernel(K::kCrossEntropy, elements(d.tokens, d.vocab), 4, d.w));
  LoraLayer frozen;  // the head has no adapters and is not quantized; with LoRA it is frozen
  frozen.spec = s.lora;
  column_block_backward(b, d, "final_norm", {"logits", d.hidden, d.vocab}, norm_parameters(m),
                        output_parameters(m, s.tp, pp), frozen);
  return b.take();
}

std::uint64_t optimizer_bytes_per_parameter(const TransformerConfig& m, Optimizer optimizer) noexcept {
  switch (optimizer) {
    case Optimizer::kAdam: return size_of(m.dtype) < 4 ? 12 : 8;
    case Optimizer::kAdamW: return 2 * size_of(m.dtype);
    // Two one-byte moments, and in 16-bit training the fp32 master weight; the block scales are extra
    // (optimizer_state_bytes).
    case Optimizer::kAdam8bit: return size_of(m.dtype) < 4 ? 6 : 2;
    case Optimizer::kSgd:
    case Optimizer::kNone: return 0;
  }
  return 0;
}

Bytes optimizer_state_bytes(const TransformerConfig& m, std::uint64_t parameters, Optimizer optimizer) noexcept {
  std::uint64_t bytes = optimizer_bytes_per_parameter(m, optimizer) * parameters;
  if (optimizer == Optimizer::kAdam8bit) {
    const std::uint64_t blocks = (parameters + kAdam8bitBlock - 1) / kAdam8bitBlock;
    bytes += 2 * 4 * blocks;  // an fp32 absmax per block for each moment
  }
  return Bytes(bytes);
}

Flops flash_attention_flops(std::int64_t seq, std::int64_t batch, std::int64_t head_dim, bool backward) {
  const double product = 2.0 * static_cast<double>(seq) * static_cast<double>(flash_causal_keys(seq)) *
                         static_cast<double>(head_dim) * static_cast<double>(batch);
  return Flops(product * (backward ? 5.0 : 2.0));
}

MemoryKernel host_optimizer_kernel(const TransformerConfig& m, std::uint64_t parameters) {
  const auto w = static_cast<double>(size_of(m.dtype));
  return memory_kernel(MemoryKernelKind::kHostOptimizer, parameters, w, w);
}

MemoryKernel optimizer_kernel(const TransformerConfig& m, std::uint64_t parameters, Optimizer optimizer,
                              KernelSet kernels) {
  const auto w = static_cast<double>(size_of(m.dtype));
  const auto state = static_cast<double>(optimizer_bytes_per_parameter(m, optimizer));
  switch (optimizer) {
    case Optimizer::kAdam:
      // Reads the gradient, the weight (fp32 master or the weight itself) and both moments: always w + 12.
      return kernel(kernels, MemoryKernelKind::kOptimizer, parameters, w + 12, w + state);
    case Optimizer::kAdamW:  // gradient, weight and moments read; weight and moments written
      return kernel(kernels, MemoryKernelKind::kOptimizer, parameters, 2 * w + state, w + state);
    case Optimizer::kAdam8bit: {
      // bitsandbytes' kOptimizerStatic8bit2StateBlockwise: reads the gradient, the weight (the fp32 master
      // with 16-bit training, else the weight itself), both 8-bit moments and their absmax per block; writes
      // the moments, the absmax and the weight (master and 16-bit copy with 16-bit training).
      const double scales = 2.0 * 4.0 / static_cast<double>(kAdam8bitBlock);
      const double weight = size_of(m.dtype) < 4 ? 4.0 : w;
      return kernel(kernels, MemoryKernelKind::kOptimizer, parameters, w + weight + 2 + scales, w + state + scales);
    }
    case Optimizer::kSgd:
    case Optimizer::kNone:  // (none has no kernel: the builder emits none)
      return kernel(kernels, MemoryKernelKind::kOptimizer, parameters, 2 * w, w);
  }
  return {};
}

}  // namespace commscale
