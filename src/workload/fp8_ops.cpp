#include "workload/fp8_ops.hpp"

#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "workload/layer_dims.hpp"

namespace commscale {
namespace {

using K = MemoryKernelKind;

// The linear layers TE runs in FP8: a dense layer's four, and an MoE layer's experts (TE's GroupedLinear) and
// shared experts (a LayerNormMLP) in place of the MLP's. The router stays in the model's type, as Megatron-Core
// keeps it.
// Multi-head latent attention's projections (MLA.md) are TE Linears too: its down projections, duplicated on every
// tp rank, and its column-parallel up projections (or the q projection without a q latent).
constexpr std::array<std::string_view, 13> kLinears = {
    "qkv",        "attn.proj",   "mlp.fc1",   "mlp.fc2",     "experts.fc1",  "experts.fc2", "shared.fc1",
    "shared.fc2", "attn.q_down", "attn.q_up", "attn.q_proj", "attn.kv_down", "attn.kv_up"};
// Float8BlockScaling's 1 x 128 tiles: an fp32 scale per 128 values, written with the cast.
constexpr double kBlockScaleBytes = 4.0 / 128.0;

// FP8 dispatch (FP8.md): each element of a dispatched row in one byte, with an fp32 scale per 128 (DeepSeek-V3's
// 1 x 128 tiles; MXFP8's E8M0 byte per 32 values is as many bytes).
constexpr double kDispatchBytes = 1.0 + kBlockScaleBytes;

enum class Fp8Role : std::uint8_t { kNone, kForward, kDgrad, kWgrad };

struct Fp8Gemm {
  Fp8Role role = Fp8Role::kNone;
  std::string_view linear;
};

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

Fp8Gemm classify(const std::string& name) {
  for (std::string_view linear : kLinears) {
    if (name == linear) return {Fp8Role::kForward, linear};
    if (name.size() == linear.size() + 6 && name.rfind(linear, 0) == 0) {
      if (ends_with(name, ".dgrad")) return {Fp8Role::kDgrad, linear};
      if (ends_with(name, ".wgrad")) return {Fp8Role::kWgrad, linear};
    }
  }
  return {};
}

// Whether the input a cast reads is sequence-parallel (a shard of tokens gathered for the GEMM): the norm
// outputs before qkv and fc1 forward, the output gradients of the row-parallel attn.proj and fc2 backward.
// The routed experts' inputs are the rows dispatched to them, whole on the rank: none is.
bool sequence_parallel_input(const Fp8Gemm& g) {
  if (g.linear.starts_with("experts.")) return false;
  // MLA's down projections read (and return the gradient of) the rank's own rows of the sequence: no gather.
  if (g.linear == "attn.q_down" || g.linear == "attn.kv_down") return false;
  const bool column = g.linear == "qkv" || g.linear == "mlp.fc1" || g.linear == "shared.fc1" ||
                      g.linear == "attn.q_up" || g.linear == "attn.kv_up" || g.linear == "attn.q_proj";
  return g.role == Fp8Role::kForward ? column : !column;
}

// Appends the cast before an FP8 GEMM's input of `elements` values, with the recipe's amax work; returns the
// index of the cast (what the GEMM then follows on the compute stream).
void cast_ops(OpList& out, const WorkloadOp& gemm, const Fp8Gemm& g, std::uint64_t elements, const LayerDims& d,
              Fp8Recipe recipe, const std::vector<int>& deps) {
  const std::string base = gemm.name + ".fp8";
  std::vector<int> cast_deps = deps;
  if (recipe == Fp8Recipe::kCurrent) {
    out.push_back({base + "_amax", gemm.phase, memory_kernel(K::kCopy, elements, d.w, 0.0), deps, 0});
    if (d.sp && sequence_parallel_input(g)) {
      const int amax = static_cast<int>(out.size()) - 1;
      const LayerCollective reduce{Collective::kAllReduce, Bytes(4), DataType::kFloat32, GroupRole::kTp};
      out.push_back({base + "_amax.all_reduce", gemm.phase, reduce, {amax}, 0});
      cast_deps = {static_cast<int>(out.size()) - 1};
    }
  }
  const double scales = recipe == Fp8Recipe::kBlock ? 2 * kBlockScaleBytes : 0.0;
  out.push_back({base + "_cast", gemm.phase, memory_kernel(K::kCopy, elements, d.w, 2.0 + scales), cast_deps, 0});
}

// The forward dispatch all-to-all (and its recomputation) in FP8: a quantize kernel casts the rows it sends
// (read in the model's type, written at kDispatchBytes), and the all-to-all moves kDispatchBytes an element.
// The gradients' all-to-alls of the backward and the combine stay in the model's type.
// The FP8 bytes are padded to ep equal chunks as the model type's are (whole_chunks).
void fp8_dispatch(OpList& out, WorkloadOp& op, const LayerDims& d, int ep) {
  auto* c = std::get_if<LayerCollective>(&op.payload);
  if (c == nullptr || op.phase == Phase::kBackward || op.name != "dispatch.all_to_all") return;
  const std::uint64_t elements = c->bytes.count() / size_of(c->dtype);
  out.push_back({"dispatch.fp8_quantize", op.phase, memory_kernel(K::kCopy, elements, d.w, kDispatchBytes), {}, 0});
  op.deps = {static_cast<int>(out.size()) - 1};
  const auto bytes = static_cast<std::uint64_t>(std::ceil(static_cast<double>(elements) * kDispatchBytes));
  c->bytes = Bytes(whole_chunks(bytes, ep));
  c->dtype = DataType::kFp8E4M3;
}

// The GEMM with each dimension rounded up to a multiple of 16: cuBLASLt's FP8 GEMMs need it, and
// TransformerEngine pads what is not (Megatron-LM pads each expert's rows with Fp8Padding; a dense layer's
// dimensions are multiples of 16 already). The padded rows cost their FLOPs; the padding copy is left out.
Gemm padded_for_fp8(Gemm g) {
  const auto up = [](std::int64_t v) { return (v + 15) / 16 * 16; };
  if (g.m % 16 == 0 && g.n % 16 == 0 && g.k % 16 == 0) return g;
  const Gemm padded = make_gemm(up(g.m), up(g.n), up(g.k), g.batch, g.dtype);
  g.m = padded.m;
  g.n = padded.n;
  g.k = padded.k;
  g.flops = padded.flops;
  return g;
}

}  // namespace

OpList with_fp8(OpList list, const TransformerConfig& m, const LayerSharding& s) {
  if (s.fp8 == Fp8Recipe::kNone) return list;
  const LayerDims d = layer_dims(m, s);
  OpList out;
  out.reserve(list.size() * 2);
  std::vector<int> moved(list.size());  // old index -> new index
  for (std::size_t i = 0; i < list.size(); ++i) {
    WorkloadOp op = std::move(list[i]);
    for (int& dep : op.deps) dep = moved[static_cast<std::size_t>(dep)];
    auto* gemm = std::get_if<Gemm>(&op.payload);
    const Fp8Gemm g = gemm != nullptr ? classify(op.name) : Fp8Gemm{};
    if (g.role != Fp8Role::kNone) {
      constexpr DataType e4m3 = DataType::kFp8E4M3;
      constexpr DataType e5m2 = DataType::kFp8E5M2;
      const DataType out_type = gemm->dtype;
      *gemm = padded_for_fp8(*gemm);
      // The cast reads the GEMM's A (m x k): the input forward, the output gradient for the dgrad.
      const std::uint64_t a_elements = elements(gemm->m, gemm->k) * static_cast<std::uint64_t>(gemm->batch);
      if (g.role == Fp8Role::kForward) {
        cast_ops(out, op, g, a_elements, d, s.fp8, op.deps);
        *gemm = fp8_gemm(*gemm, e4m3, e4m3, out_type);
      } else if (g.role == Fp8Role::kDgrad) {
        cast_ops(out, op, g, a_elements, d, s.fp8, op.deps);
        *gemm = fp8_gemm(*gemm, e5m2, e4m3, out_type);
      } else {
        *gemm = fp8_gemm(*gemm, e4m3, e5m2, out_type);
      }
    }
    if (s.fp8_dispatch) fp8_dispatch(out, op, d, s.ep);
    moved[i] = static_cast<int>(out.size());
    out.push_back(std::move(op));
  }
  return out;
}

std::uint64_t fp8_linear_parameters(const LayerParameters& p) noexcept {
  return p.qkv + p.proj + p.fc1 + p.fc2 + p.experts;
}

MemoryKernel weight_cast_kernel(const TransformerConfig& m, std::uint64_t parameters) {
  return memory_kernel(K::kCopy, parameters, static_cast<double>(size_of(m.dtype)), 2.0);
}

Bytes fp8_weight_copy_bytes(std::uint64_t parameters) noexcept { return Bytes(2 * parameters); }

Bytes fp8_activation_saving(const TransformerConfig& m, const LayerSharding& s) {
  if (s.fp8 == Fp8Recipe::kNone || s.recompute == Recompute::kFull) return Bytes(0);
  const LayerDims d = layer_dims(m, s);
  const std::uint64_t w = size_of(m.dtype);
  if (w <= 1) return Bytes(0);
  const auto t = static_cast<std::uint64_t>(s.tp);
  const std::uint64_t tokens_hidden = elements(d.tokens, d.hidden);
  const std::uint64_t local = d.sp ? tokens_hidden / t : tokens_hidden;
  // The qkv and fc1 inputs (replicated, or the sequence-parallel shard), attn.proj's input (h / t wide) and
  // fc2's (F / t wide), as layer_activation_bytes counts them.
  const std::uint64_t fp8_elements = 2 * local + tokens_hidden / t + elements(d.tokens, d.ffn);
  return Bytes((w - 1) * fp8_elements);
}

Bytes amax_reduction_bytes(int layers, bool backward) noexcept {
  const std::uint64_t per_gemm = backward ? 2 : 3;
  return Bytes(4 * per_gemm * 4 * static_cast<std::uint64_t>(layers));  // four linear layers a layer
}

}  // namespace commscale
