#include "workload/model_spec.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "hw/json_reader.hpp"
#include "workload/hf_config.hpp"
#include "workload/json_fields.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 17> kModelKeys = {
    "name", "layers",    "hidden",          "heads", "kv_heads",    "ffn",     "vocab", "seq", "activation",
    "norm", "positions", "tied_embeddings", "dtype", "linear_bias", "dropout", "moe",   "mla"};
constexpr std::array<std::string_view, 7> kMoeKeys = {
    "experts", "top_k", "expert_ffn", "shared_ffn", "first_dense_layers", "capacity_factor", "load_imbalance"};
constexpr std::array<std::string_view, 5> kMlaKeys = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                                      "qk_rope_head_dim", "v_head_dim"};

// The MLP size when none is given: 4 x hidden. An out-of-range hidden size is clamped here so that
// validate_model reports the hidden size, not an overflowed MLP size.
std::int64_t default_ffn(std::int64_t hidden) noexcept { return 4 * (hidden > kMaxHidden ? kMaxHidden + 1 : hidden); }

void check_keys(const json& doc, std::string_view origin) {
  if (!doc.is_object()) throw InputError(origin, "the model is not a JSON object", "{\"layers\": ..., ...}");
  for (const auto& item : doc.items()) {
    bool known = false;
    for (std::string_view key : kModelKeys) known = known || item.key() == key;
    if (!known) {
      throw InputError(field_where(origin, excerpt(item.key())), "unknown key",
                       "name, layers, hidden, heads, kv_heads, ffn, vocab, seq, activation, norm, positions, "
                       "linear_bias, dropout, tied_embeddings, dtype, moe, mla");
    }
  }
  for (std::string_view key : {"layers", "hidden", "heads", "seq", "vocab"}) {
    if (!doc.contains(std::string(key))) throw InputError(field_where(origin, key), "missing", "a whole number");
  }
}

// The "moe" object: experts and top_k required, the rest optional (validate_model checks the values).
MoeConfig read_moe(const json& doc, std::string_view origin) {
  const std::string where = fmt::format("{}: moe", origin);
  const json& moe = doc.at("moe");
  if (!moe.is_object()) {
    throw InputError(where, "is not a JSON object", "{\"experts\": 8, \"top_k\": 2, \"expert_ffn\": 14336}");
  }
  for (const auto& item : moe.items()) {
    if (std::find(kMoeKeys.begin(), kMoeKeys.end(), item.key()) == kMoeKeys.end()) {
      throw InputError(field_where(where, excerpt(item.key())), "unknown key",
                       "experts, top_k, expert_ffn, shared_ffn, first_dense_layers, capacity_factor, load_imbalance");
    }
  }
  for (std::string_view key : {"experts", "top_k", "expert_ffn"}) {
    if (!moe.contains(std::string(key))) throw InputError(field_where(where, key), "missing", "a whole number");
  }
  MoeConfig e;
  e.experts = read_whole_number<int>(moe, where, "experts");
  e.top_k = read_whole_number<int>(moe, where, "top_k");
  e.expert_ffn = read_whole_number<std::int64_t>(moe, where, "expert_ffn");
  if (moe.contains("shared_ffn")) e.shared_ffn = read_whole_number<std::int64_t>(moe, where, "shared_ffn");
  if (moe.contains("first_dense_layers")) {
    e.first_dense_layers = read_whole_number<int>(moe, where, "first_dense_layers");
  }
  if (moe.contains("capacity_factor")) e.capacity_factor = read_number_field(moe, where, "capacity_factor");
  if (moe.contains("load_imbalance")) e.load_imbalance = read_number_field(moe, where, "load_imbalance");
  return e;
}

// The "mla" object: every key but q_lora_rank required (0 or absent: queries projected from the hidden state).
MlaConfig read_mla(const json& doc, std::string_view origin) {
  const std::string where = fmt::format("{}: mla", origin);
  const json& mla = doc.at("mla");
  if (!mla.is_object()) {
    throw InputError(
        where, "is not a JSON object",
        "{\"kv_lora_rank\": 512, \"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, \"v_head_dim\": 128}");
  }
  for (const auto& item : mla.items()) {
    if (std::find(kMlaKeys.begin(), kMlaKeys.end(), item.key()) == kMlaKeys.end()) {
      throw InputError(field_where(where, excerpt(item.key())), "unknown key",
                       "q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim");
    }
  }
  for (std::string_view key : std::span(kMlaKeys).subspan(1)) {
    if (!mla.contains(std::string(key))) throw InputError(field_where(where, key), "missing", "a whole number");
  }
  MlaConfig a;
  if (mla.contains("q_lora_rank")) a.q_lora_rank = read_whole_number<std::int64_t>(mla, where, "q_lora_rank");
  a.kv_lora_rank = read_whole_number<std::int64_t>(mla, where, "kv_lora_rank");
  a.qk_nope_head_dim = read_whole_number<std::int64_t>(mla, where, "qk_nope_head_dim");
  a.qk_rope_head_dim = read_whole_number<std::int64_t>(mla, where, "qk_rope_head_dim");
  a.v_head_dim = read_whole_number<std::int64_t>(mla, where, "v_head_dim");
  return a;
}

void apply_optional_fields(const json& doc, std::string_view origin, TransformerConfig& m) {
  if (doc.contains("name")) m.name = read_string_field(doc, origin, "name");
  if (doc.contains("activation")) {
    m.activation = parse_activation(read_string_field(doc, origin, "activation"), field_where(origin, "activation"));
  }
  if (doc.contains("norm")) m.norm = parse_norm(read_string_field(doc, origin, "norm"), field_where(origin, "norm"));
  if (doc.contains("positions")) {
    m.positions = parse_positions(read_string_field(doc, origin, "positions"), field_where(origin, "positions"));
  }
  if (doc.contains("linear_bias")) m.linear_bias = read_bool_field(doc, origin, "linear_bias");
  if (doc.contains("dropout")) m.dropout = read_bool_field(doc, origin, "dropout");
  if (doc.contains("tied_embeddings")) m.tied_embeddings = read_bool_field(doc, origin, "tied_embeddings");
  if (doc.contains("dtype")) {
    m.dtype = parse_data_type(read_string_field(doc, origin, "dtype"), field_where(origin, "dtype"));
  }
  if (doc.contains("moe")) m.moe = read_moe(doc, origin);
  if (doc.contains("mla")) m.mla = read_mla(doc, origin);
  m.kv_heads = doc.contains("kv_heads") ? read_whole_number<int>(doc, origin, "kv_heads") : m.heads;
  if (doc.contains("ffn")) {
    m.ffn = read_whole_number<std::int64_t>(doc, origin, "ffn");
  } else if (m.activation == MlpActivation::kSwiGlu) {
    throw InputError(field_where(origin, "ffn"), "missing", "the MLP size, required with swiglu");
  } else {
    m.ffn = default_ffn(m.hidden);
  }
}

TransformerConfig custom_model(const ModelOverrides& o) {
  const std::array<std::pair<bool, std::string_view>, 5> required = {{{o.layers.has_value(), "--layers"},
                                                                      {o.hidden.has_value(), "--hidden"},
                                                                      {o.heads.has_value(), "--heads"},
                                                                      {o.seq.has_value(), "--seq"},
                                                                      {o.vocab.has_value(), "--vocab"}}};
  for (const auto& [given, flag] : required) {
    if (!given) {
      throw InputError(flag, "missing for a custom model",
                       "--model NAME, --model-file PATH, or --layers, --hidden, --heads, --seq and --vocab "
                       "(--vocab 0 for a bare stack of blocks)");
    }
  }
  TransformerConfig m;
  m.layers = *o.layers;
  m.hidden = *o.hidden;
  m.heads = *o.heads;
  m.kv_heads = o.kv_heads.value_or(*o.heads);
  m.activation = o.activation.value_or(MlpActivation::kGelu);
  if (!o.ffn && m.activation == MlpActivation::kSwiGlu) {
    throw InputError("--ffn", "missing", "the MLP size, required with --activation swiglu");
  }
  m.ffn = o.ffn.value_or(default_ffn(m.hidden));
  m.vocab = *o.vocab;
  m.seq = *o.seq;
  return m;
}

void apply_descriptive_overrides(const ModelOverrides& o, TransformerConfig& m) {
  if (o.dtype) m.dtype = *o.dtype;
  if (o.experts) m.moe.experts = *o.experts;
  if (o.top_k) m.moe.top_k = *o.top_k;
  if (o.expert_ffn) m.moe.expert_ffn = *o.expert_ffn;
  if (o.shared_ffn) m.moe.shared_ffn = *o.shared_ffn;
  if (o.first_dense_layers) m.moe.first_dense_layers = *o.first_dense_layers;
  if (o.capacity_factor) m.moe.capacity_factor = *o.capacity_factor;
  if (o.load_imbalance) m.moe.load_imbalance = *o.load_imbalance;
  if (o.norm) m.norm = *o.norm;
  if (o.positions) m.positions = *o.positions;
  if (o.linear_bias) m.linear_bias = *o.linear_bias;
  if (o.tied_embeddings) m.tied_embeddings = *o.tied_embeddings;
  // Megatron-LM's --multi-latent-attention defaults (no q latent, a kv latent of 32, heads of 128 + 64 and 128).
  if (o.latent_attention && !m.mla.enabled()) m.mla = {0, 32, 128, 64, 128};
  if (o.q_lora_rank) m.mla.q_lora_rank = *o.q_lora_rank;
  if (o.kv_lora_rank) m.mla.kv_lora_rank = *o.kv_lora_rank;
  if (o.qk_nope_head_dim) m.mla.qk_nope_head_dim = *o.qk_nope_head_dim;
  if (o.qk_rope_head_dim) m.mla.qk_rope_head_dim = *o.qk_rope_head_dim;
  if (o.v_head_dim) m.mla.v_head_dim = *o.v_head_dim;
  // Megatron-LM's rule: an expert's MLP is the dense MLP's size (--ffn-hidden-size) where no size is given for
  // it (--moe-ffn-hidden-size, --expert-ffn). A 0 given is refused by validate_moe, not read as that default.
  if (m.moe.experts > 0 && m.moe.expert_ffn == 0 && !o.expert_ffn) m.moe.expert_ffn = m.ffn;
}

TransformerConfig model_from_document(const json& doc, std::string_view origin, std::optional<std::int64_t> seq) {
  return is_hf_config(doc) ? model_from_hf_config(doc, origin, seq) : model_from_json(doc, origin);
}

}  // namespace

TransformerConfig model_from_json(const json& doc, std::string_view origin) {
  check_keys(doc, origin);
  TransformerConfig m;
  m.name = "custom";
  m.layers = read_whole_number<int>(doc, origin, "layers");
  m.hidden = read_whole_number<std::int64_t>(doc, origin, "hidden");
  m.heads = read_whole_number<int>(doc, origin, "heads");
  m.seq = read_whole_number<std::int64_t>(doc, origin, "seq");
  m.vocab = read_whole_number<std::int64_t>(doc, origin, "vocab");
  apply_optional_fields(doc, origin, m);
  validate_model(m, origin);
  return m;
}

TransformerConfig model_from_json(const JsonAt& in) { return model_from_json(in.value(), in.where()); }

TransformerConfig load_model_file(const std::string& path, std::optional<std::int64_t> seq, std::string_view flag) {
  // Checked without opening: a pipe (`<(cat model.json)`) can be read only once.
  if (::access(path.c_str(), R_OK) != 0) {
    throw InputError(flag, fmt::format("cannot read \"{}\": {}", path, std::strerror(errno)), "a readable JSON file");
  }
  const json doc = hw::read_json_file(path);  // rejects a key given twice, as topology files do
  if (flag == "--hf-config" && !is_hf_config(doc)) {
    throw InputError(path, "has neither model_type nor architectures", "a Hugging Face config.json");
  }
  return model_from_document(doc, path, seq);
}

json model_to_json(const TransformerConfig& m) {
  json out = {{"name", m.name},
              {"layers", m.layers},
              {"hidden", m.hidden},
              {"heads", m.heads},
              {"kv_heads", m.kv_heads},
              {"ffn", m.ffn},
              {"vocab", m.vocab},
              {"seq", m.seq},
              {"activation", name(m.activation)},
              {"norm", name(m.norm)},
              {"positions", name(m.positions)},
              {"linear_bias", m.linear_bias},
              {"dropout", m.dropout},
              {"tied_embeddings", m.tied_embeddings},
              {"dtype", name(m.dtype)}};
  if (m.moe.enabled()) {
    out["moe"] = {{"experts", m.moe.experts},
                  {"top_k", m.moe.top_k},
                  {"expert_ffn", m.moe.expert_ffn},
                  {"shared_ffn", m.moe.shared_ffn},
                  {"first_dense_layers", m.moe.first_dense_layers},
                  {"capacity_factor", m.moe.capacity_factor}};
    if (m.moe.load_imbalance != 1.0) out["moe"]["load_imbalance"] = m.moe.load_imbalance;
  }
  if (m.mla.enabled()) {  // written only with MLA: older readers keep reading every other model
    out["mla"] = {{"q_lora_rank", m.mla.q_lora_rank},
                  {"kv_lora_rank", m.mla.kv_lora_rank},
                  {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
                  {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                  {"v_head_dim", m.mla.v_head_dim}};
  }
  return out;
}

TransformerConfig resolve_model(const ModelSource& source, const ModelOverrides& o) {
  const int given = static_cast<int>(!source.preset.empty()) + static_cast<int>(!source.file_path.empty()) +
                    static_cast<int>(!source.hf_config_path.empty()) + static_cast<int>(source.document.has_value());
  if (given > 1) {
    throw InputError(!source.preset.empty() ? "--model" : "--model-file",
                     "given together with another of --model, --model-file and --hf-config", "one model source");
  }
  if (given == 0) {
    TransformerConfig m = custom_model(o);
    apply_descriptive_overrides(o, m);
    validate_model(m, "");
    return m;
  }
  TransformerConfig m = source.document             ? model_from_document(*source.document, source.origin, o.seq)
                        : !source.preset.empty()    ? find_preset(source.preset, "--model")
                        : !source.file_path.empty() ? load_model_file(source.file_path, o.seq, "--model-file")
                                                    : load_model_file(source.hf_config_path, o.seq, "--hf-config");
  if (o.layers) m.layers = *o.layers;
  if (o.hidden) m.hidden = *o.hidden;
  if (o.heads) {
    if (m.kv_heads == m.heads) m.kv_heads = *o.heads;  // multi-head attention stays multi-head
    m.heads = *o.heads;
  }
  if (o.kv_heads) m.kv_heads = *o.kv_heads;
  if (o.ffn) m.ffn = *o.ffn;
  if (o.vocab) m.vocab = *o.vocab;
  if (o.seq) m.seq = *o.seq;
  if (o.activation) m.activation = *o.activation;
  apply_descriptive_overrides(o, m);
  validate_model(m, "");  // any error now comes from an override
  return m;
}

}  // namespace commscale
