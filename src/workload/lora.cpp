#include "workload/lora.hpp"

#include "workload/layer_dims.hpp"

namespace commscale {
namespace {

constexpr std::uint64_t kNf4Block = 64;         // parameters per absmax (QLoRA's block size)
constexpr std::uint64_t kNf4SecondBlock = 256;  // absmax values per fp32 constant (double quantization)

std::uint64_t blocks(std::uint64_t n, std::uint64_t size) { return (n + size - 1) / size; }

// NF4 bytes of one matrix: half a byte a weight, an 8-bit absmax per block, an fp32 per 256 blocks.
std::uint64_t nf4_bytes(std::uint64_t parameters) {
  const std::uint64_t absmax = blocks(parameters, kNf4Block);
  return (parameters + 1) / 2 + absmax + 4 * blocks(absmax, kNf4SecondBlock);
}

}  // namespace

std::vector<LoraLinear> lora_linears(const TransformerConfig& m, LoraTargets targets) {
  const std::int64_t h = m.hidden;
  const std::int64_t kv = head_dim(m) * m.kv_heads;
  std::vector<LoraLinear> out = {{"q_proj", h, head_dim(m) * m.heads}};
  if (targets != LoraTargets::kQv) out.push_back({"k_proj", h, kv});
  out.push_back({"v_proj", h, kv});
  if (targets == LoraTargets::kQv) return out;
  out.push_back({"o_proj", h, h});
  if (targets != LoraTargets::kAll) return out;
  if (m.activation == MlpActivation::kSwiGlu) {
    out.push_back({"gate_proj", h, m.ffn});
    out.push_back({"up_proj", h, m.ffn});
  } else {
    out.push_back({"fc1", h, m.ffn});
  }
  out.push_back({"down_proj", m.ffn, h});
  return out;
}

std::uint64_t lora_layer_parameters(const TransformerConfig& m, const LoraSpec& lora) {
  if (!lora.enabled()) return 0;
  std::uint64_t total = 0;
  const auto r = static_cast<std::uint64_t>(lora.rank);
  for (const LoraLinear& l : lora_linears(m, lora.targets)) total += r * static_cast<std::uint64_t>(l.in + l.out);
  return total;
}

Bytes lora_base_linear_bytes(const TransformerConfig& m, const LoraSpec& lora) {
  const LayerParameters p = layer_parameters(m, 1);
  const std::uint64_t w = size_of(m.dtype);
  if (lora.base_bits != 4) return Bytes(w * (p.qkv + p.proj + p.fc1 + p.fc2));
  // Biases (GPT) stay 16-bit: count the matrices' weights in NF4 and the rest at w bytes.
  const auto h = static_cast<std::uint64_t>(m.hidden);
  const auto qkv_out = static_cast<std::uint64_t>(head_dim(m) * (m.heads + 2 * m.kv_heads));
  const auto f = static_cast<std::uint64_t>(m.ffn);
  const std::uint64_t fc1_width = m.activation == MlpActivation::kSwiGlu ? 2 * f : f;
  const std::uint64_t matrices[] = {h * qkv_out, h * h, h * fc1_width, f * h};
  std::uint64_t bytes = 0;
  std::uint64_t weights = 0;
  for (const std::uint64_t n : matrices) {
    bytes += nf4_bytes(n);
    weights += n;
  }
  const std::uint64_t linear = p.qkv + p.proj + p.fc1 + p.fc2;
  return Bytes(bytes + w * (linear - weights));
}

}  // namespace commscale
