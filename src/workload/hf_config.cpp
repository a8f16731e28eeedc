#include "workload/hf_config.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "workload/json_fields.hpp"

namespace commscale {
namespace {

using nlohmann::json;

// How the keys of a family of architectures read (transformers' modeling files and their defaults).
enum class Family : std::uint8_t { kGated, kGpt2, kNeox, kFalcon, kPhi };

// How a mixture-of-experts config names its experts (transformers' MixtralConfig, Qwen2MoeConfig, and
// DeepSeek's own DeepseekV2Config / DeepseekV3Config shipped with their checkpoints).
enum class Experts : std::uint8_t { kNone, kMixtral, kQwenMoe, kDeepSeek };

struct Architecture {
  std::string_view model_type;
  std::string_view class_name;  // the "architectures" entry of a causal LM
  Family family;
  bool tied;  // tie_word_embeddings when the config does not say
  Experts experts = Experts::kNone;
};

constexpr std::array<Architecture, 14> kArchitectures = {{
    {"llama", "LlamaForCausalLM", Family::kGated, false},
    {"mistral", "MistralForCausalLM", Family::kGated, false},
    {"qwen2", "Qwen2ForCausalLM", Family::kGated, false},
    {"gemma", "GemmaForCausalLM", Family::kGated, true},
    {"gpt2", "GPT2LMHeadModel", Family::kGpt2, true},
    {"gpt_neox", "GPTNeoXForCausalLM", Family::kNeox, false},
    {"falcon", "FalconForCausalLM", Family::kFalcon, true},
    {"RefinedWebModel", "RWForCausalLM", Family::kFalcon, true},  // Falcon's configs before transformers 4.33
    {"RefinedWeb", "RWForCausalLM", Family::kFalcon, true},
    {"phi", "PhiForCausalLM", Family::kPhi, false},
    {"mixtral", "MixtralForCausalLM", Family::kGated, false, Experts::kMixtral},
    {"qwen2_moe", "Qwen2MoeForCausalLM", Family::kGated, false, Experts::kQwenMoe},
    {"deepseek_v2", "DeepseekV2ForCausalLM", Family::kGated, false, Experts::kDeepSeek},
    {"deepseek_v3", "DeepseekV3ForCausalLM", Family::kGated, false, Experts::kDeepSeek},
}};

// Keys that describe the checkpoint, the tokenizer, inference or training regularisation, not the
// shapes or FLOPs of a training step. Dropout changes neither; epsilons and rotary bases change values,
// not work; the checkpoint's torch_dtype is not the training type (--dtype is).
constexpr std::array<std::string_view, 47> kMetadataKeys = {"_name_or_path",
                                                            "architectures",
                                                            "model_type",
                                                            "transformers_version",
                                                            "torch_dtype",
                                                            "bos_token_id",
                                                            "eos_token_id",
                                                            "pad_token_id",
                                                            "sep_token_id",
                                                            "decoder_start_token_id",
                                                            "tokenizer_class",
                                                            "auto_map",
                                                            "use_cache",
                                                            "return_dict",
                                                            "output_attentions",
                                                            "output_hidden_states",
                                                            "initializer_range",
                                                            "initializer_factor",
                                                            "rms_norm_eps",
                                                            "layer_norm_eps",
                                                            "layer_norm_epsilon",
                                                            "rope_theta",
                                                            "rope_scaling",
                                                            "rotary_emb_base",
                                                            "rotary_pct",
                                                            "partial_rotary_factor",
                                                            "attention_dropout",
                                                            "hidden_dropout",
                                                            "attention_probs_dropout_prob",
                                                            "hidden_dropout_prob",
                                                            "classifier_dropout",
                                                            "resid_pdrop",
                                                            "embd_pdrop",
                                                            "attn_pdrop",
                                                            "summary_type",
                                                            "summary_use_proj",
                                                            "summary_activation",
                                                            "summary_proj_to_labels",
                                                            "summary_first_dropout",
                                                            "task_specific_params",
                                                            "pretraining_tp",
                                                            "max_window_layers",
                                                            "n_ctx",
                                                            "scale_attn_weights",
                                                            "use_parallel_residual",
                                                            "parallel_attn",
                                                            "apply_residual_connection_post_layernorm"};

// Activations by MLP: a gated MLP (SwiGLU, GeGLU) has two input projections, a plain one has one; the
// nonlinearity itself costs the same elementwise pass either way.
constexpr std::array<std::string_view, 6> kGeluNames = {"gelu",       "gelu_new",          "gelu_fast",
                                                        "quick_gelu", "gelu_pytorch_tanh", "relu"};
constexpr std::array<std::string_view, 5> kGatedNames = {"silu", "swish", "gelu", "gelu_pytorch_tanh", "gelu_new"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

template <std::size_t N>
std::string joined(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::string_view n : names) out += fmt::format("{}{}", out.empty() ? "" : ", ", n);
  return out;
}

// Reads keys of one config, remembering which it read: the rest must be metadata.
class ConfigReader {
 public:
  ConfigReader(const json& doc, std::string_view origin, const Architecture& arch)
      : doc_(doc), origin_(origin), arch_(arch) {}

  [[nodiscard]] bool has(std::string_view key) {
    used_.insert(std::string(key));
    return doc_.contains(std::string(key)) && !doc_.at(std::string(key)).is_null();
  }
  template <class T>
  [[nodiscard]] T whole(std::string_view key) {
    if (!has(key)) throw InputError(where(key), "missing", "a whole number");
    return read_whole_number<T>(doc_, origin_, key);
  }
  template <class T>
  [[nodiscard]] std::optional<T> optional_whole(std::string_view key) {
    return has(key) ? std::optional<T>(read_whole_number<T>(doc_, origin_, key)) : std::nullopt;
  }
  // Absent, null or [].
  [[nodiscard]] bool empty_list(std::string_view key) {
    if (!has(key)) return true;
    const json& value = doc_.at(std::string(key));
    return value.is_array() && value.empty();
  }
  [[nodiscard]] bool flag(std::string_view key, bool fallback) {
    return has(key) ? read_bool_field(doc_, origin_, key) : fallback;
  }
  [[nodiscard]] std::string text(std::string_view key, std::string_view fallback) {
    return has(key) ? read_string_field(doc_, origin_, key) : std::string(fallback);
  }
  // A boolean key that commscale models only at one value.
  void require_flag(std::string_view key, bool modelled, std::string_view why) {
    if (flag(key, modelled) != modelled)
      throw InputError(where(key), fmt::format("{} is not modelled", !modelled), why);
  }
  [[nodiscard]] std::string where(std::string_view key) const { return field_where(origin_, key); }
  [[nodiscard]] const Architecture& architecture() const noexcept { return arch_; }

  void finish() const {
    for (const auto& item : doc_.items()) {
      if (used_.contains(item.key()) || listed(kMetadataKeys, item.key())) continue;
      throw InputError(field_where(origin_, excerpt(item.key())),
                       fmt::format("is not a key commscale reads for a {} config: it may change the model's "
                                   "shapes or math, which commscale would then get wrong",
                                   arch_.model_type),
                       fmt::format("only the {} keys commscale models ({}) and metadata keys ({})", arch_.model_type,
                                   read_keys(), hf_metadata_keys()));
    }
  }

 private:
  [[nodiscard]] std::string read_keys() const {
    std::string out;
    for (const std::string& k : used_) out += fmt::format("{}{}", out.empty() ? "" : ", ", k);
    return out;
  }

  const json& doc_;
  std::string origin_;
  const Architecture& arch_;
  std::set<std::string> used_;
};

const Architecture* by_model_type(std::string_view type) {
  for (const Architecture& a : kArchitectures) {
    if (a.model_type == type) return &a;
  }
  return nullptr;
}

// The architecture, from model_type (else the first class of "architectures"), checked against the
// classes given: a config whose class is not a causal LM of that type is refused.
const Architecture& find_architecture(const json& doc, std::string_view origin) {
  std::vector<std::string> classes;
  if (doc.contains("architectures")) {
    const json& list = doc.at("architectures");
    if (!list.is_array())
      throw InputError(field_where(origin, "architectures"), "is not an array", "[\"LlamaForCausalLM\"]");
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) {
        throw InputError(field_where(origin, fmt::format("architectures[{}]", i)), "is not a string", "a class name");
      }
      classes.push_back(printable(list[i].get<std::string>()));
    }
  }
  const Architecture* arch = nullptr;
  if (doc.contains("model_type")) {
    const std::string type = read_string_field(doc, origin, "model_type");
    arch = by_model_type(type);
    if (arch == nullptr) {
      throw InputError(field_where(origin, "model_type"),
                       fmt::format("\"{}\" is not a supported architecture", excerpt(type)),
                       fmt::format("one of {}", supported_hf_architectures()));
    }
  }
  for (const std::string& c : classes) {
    const Architecture* match = nullptr;
    for (const Architecture& a : kArchitectures) {
      if (a.class_name == c && (arch == nullptr || a.family == arch->family)) match = arch != nullptr ? arch : &a;
    }
    if (match == nullptr) {
      throw InputError(field_where(origin, "architectures"), fmt::format("\"{}\" is not a supported architecture", c),
                       fmt::format("a causal LM of {}", supported_hf_architectures()));
    }
    arch = match;
  }
  if (arch == nullptr)
    throw InputError(origin, "has neither model_type nor architectures", "a Hugging Face config.json");
  return *arch;
}

// The config's own names of the fields validate_model checks, by family (GPT-2 has its own; old Falcon
// configs say n_layer, n_head; KV heads under whichever key the file uses), and of its activation.
struct ConfigKeys {
  ModelKeys model{"num_hidden_layers", "hidden_size", "num_attention_heads", "num_attention_heads",
                  "intermediate_size", "max_position_embeddings", "vocab_size"};
  std::string_view activation = "hidden_act";
};

ConfigKeys config_keys(Family family, const json& doc) {
  ConfigKeys k;
  if (family == Family::kGpt2) {
    k.model = {"n_layer", "n_embd", "n_head", "n_head", "n_inner", "n_positions", "vocab_size"};
    k.activation = "activation_function";
  }
  if (family == Family::kFalcon) {
    k.model.ffn = "ffn_hidden_size";
    k.activation = "activation";
    if (doc.contains("n_layer")) k.model.layers = "n_layer";
    if (doc.contains("n_head")) k.model.heads = k.model.kv_heads = "n_head";
  }
  for (const std::string_view kv : {"num_key_value_heads", "num_kv_heads", "n_head_kv"}) {
    if (doc.contains(kv)) {
      k.model.kv_heads = kv;
      break;
    }
  }
  return k;
}

MlpActivation read_activation(ConfigReader& r, std::string_view key, bool gated) {
  const std::string fallback = gated ? "silu" : "gelu";
  std::string act = r.text(key, fallback);
  if (r.architecture().model_type == "gemma" && r.has("hidden_activation")) act = r.text("hidden_activation", act);
  if (gated && listed(kGatedNames, act)) return MlpActivation::kSwiGlu;
  if (!gated && listed(kGeluNames, act)) return MlpActivation::kGelu;
  throw InputError(
      r.where(key),
      fmt::format("\"{}\" is not an activation commscale models for {}", excerpt(act), r.architecture().model_type),
      gated ? joined(kGatedNames) : joined(kGeluNames));
}

// Grouped-query attention: num_key_value_heads (Falcon: num_kv_heads with the new decoder, one KV head
// with multi_query); absent or null means multi-head attention.
int read_kv_heads(ConfigReader& r, int heads) {
  if (r.architecture().family != Family::kFalcon) return r.optional_whole<int>("num_key_value_heads").value_or(heads);
  const bool new_decoder = r.flag("new_decoder_architecture", false);
  const bool multi_query = r.flag("multi_query", true);  // FalconConfig's default
  const std::optional<int> kv =
      r.has("num_kv_heads") ? r.optional_whole<int>("num_kv_heads") : r.optional_whole<int>("n_head_kv");
  if (new_decoder) return kv.value_or(heads);
  return multi_query ? 1 : heads;
}

// Biases of the linear layers: commscale counts all or none. Llama-style configs may turn attention
// and MLP biases on separately; GPT-NeoX's attention_bias false leaves the MLP's biases.
bool read_linear_bias(ConfigReader& r) {
  switch (r.architecture().family) {
    case Family::kGpt2:
    case Family::kPhi:
      return true;
    case Family::kFalcon:
      return r.flag("bias", false);
    case Family::kNeox:
      r.require_flag("attention_bias", true, "true: commscale counts biases in every linear layer or in none");
      return true;
    case Family::kGated:
      break;
  }
  // Qwen2 has q, k and v biases (0.002% of Qwen2-7B's parameters), not counted: linear_bias is all or none.
  const bool attention = r.flag("attention_bias", false);
  const bool mlp = r.flag("mlp_bias", false);
  if (attention != mlp) {
    throw InputError(r.where("attention_bias"), fmt::format("{} with mlp_bias {}", attention, mlp),
                     "attention_bias and mlp_bias equal: commscale counts biases in every linear layer or in none");
  }
  return attention;
}

// Keys whose other values commscale does not model, checked against the shape that was read.
void check_unmodelled(ConfigReader& r, const TransformerConfig& m) {
  if (const auto head_dim = r.optional_whole<std::int64_t>("head_dim"); head_dim && *head_dim * m.heads != m.hidden) {
    throw InputError(r.where("head_dim"),
                     fmt::format("{} x {} heads is not the hidden size {}: attention wider or narrower than the "
                                 "hidden size is not modelled",
                                 *head_dim, m.heads, m.hidden),
                     fmt::format("{} (hidden / heads) or no head_dim", m.hidden / m.heads));
  }
  // Qwen2's configs carry a window that their use_sliding_window (false in the published ones) turns off.
  const std::string_view type = r.architecture().model_type;
  const bool windowed = (type != "qwen2" && type != "qwen2_moe") || r.flag("use_sliding_window", false);
  if (const auto window = r.optional_whole<std::int64_t>("sliding_window"); windowed && window && *window < m.seq) {
    throw InputError(r.where("sliding_window"),
                     fmt::format("{} tokens, shorter than the sequence of {}: windowed attention is not modelled "
                                 "(commscale counts full causal attention)",
                                 *window, m.seq),
                     fmt::format("--seq {} or less", *window));
  }
  r.require_flag("alibi", false, "false: commscale models rotary or learned positions");
  r.require_flag("qk_layernorm", false, "false: norms of q and k are not modelled");
  r.require_flag("add_cross_attention", false, "false: commscale models decoder-only transformers");
}

// Routing details that change which experts a token goes to, not the work of a balanced step (commscale
// prices routing as even: top-k of the experts, each taking its share), and DeepSeek-V3's checkpoint
// quantization (the training type is --dtype's).
constexpr std::array<std::string_view, 14> kRoutingKeys = {"router_aux_loss_coef",
                                                           "output_router_logits",
                                                           "router_jitter_noise",
                                                           "norm_topk_prob",
                                                           "routed_scaling_factor",
                                                           "topk_method",
                                                           "n_group",
                                                           "topk_group",
                                                           "scoring_func",
                                                           "aux_loss_alpha",
                                                           "seq_aux",
                                                           "ep_size",
                                                           "quantization_config",
                                                           "num_nextn_predict_layers"};

// DeepSeek's multi-head latent attention (src/workload/MLA.md): q_lora_rank null in DeepSeek-V2-Lite (queries
// projected from the hidden state), the other four required.
MlaConfig read_mla(ConfigReader& r) {
  MlaConfig a;
  if (r.architecture().experts != Experts::kDeepSeek) return a;
  a.q_lora_rank = r.optional_whole<std::int64_t>("q_lora_rank").value_or(0);
  a.kv_lora_rank = r.whole<std::int64_t>("kv_lora_rank");
  a.qk_nope_head_dim = r.whole<std::int64_t>("qk_nope_head_dim");
  a.qk_rope_head_dim = r.whole<std::int64_t>("qk_rope_head_dim");
  a.v_head_dim = r.whole<std::int64_t>("v_head_dim");
  return a;
}

// DeepSeek's shared experts, n_shared_experts of moe_intermediate_size each, as one summed width. The count is
// checked here, where its own value can be named: the product of a huge count overflowed (2^62 shared experts
// read as none), and a bad count was reported as the product (-2 as -2816).
std::int64_t shared_experts_ffn(ConfigReader& r, std::int64_t expert_ffn) {
  const std::int64_t count = r.optional_whole<std::int64_t>("n_shared_experts").value_or(0);
  if (count < 0 || count > kMaxExperts) {
    throw InputError(r.where("n_shared_experts"), fmt::format("{} shared experts", count),
                     fmt::format("0 (none) to {}", kMaxExperts));
  }
  // An expert size out of range is reported by validate_moe as moe_intermediate_size, before the shared width.
  if (expert_ffn < 1 || expert_ffn > kMaxFfn) return 0;
  if (count * expert_ffn > kMaxFfn) {
    throw InputError(r.where("n_shared_experts"),
                     fmt::format("{} shared experts of {} = {} wide", count, expert_ffn, count * expert_ffn),
                     fmt::format("shared experts of at most {} summed", kMaxFfn));
  }
  return count * expert_ffn;
}

// The experts of an MoE config; the dense MLP size (m.ffn) is already read.
MoeConfig read_experts(ConfigReader& r, const TransformerConfig& m) {
  MoeConfig e;
  const Experts kind = r.architecture().experts;
  if (kind == Experts::kNone) return e;
  for (std::string_view key : kRoutingKeys) (void)r.has(key);
  e.top_k = r.whole<int>("num_experts_per_tok");
  switch (kind) {
    case Experts::kMixtral:
      e.experts = r.whole<int>("num_local_experts");
      e.expert_ffn = m.ffn;  // every layer is MoE, its experts of intermediate_size
      break;
    case Experts::kQwenMoe: {
      e.experts = r.whole<int>("num_experts");
      e.expert_ffn = r.whole<std::int64_t>("moe_intermediate_size");
      e.shared_ffn = r.optional_whole<std::int64_t>("shared_expert_intermediate_size").value_or(0);
      if (const auto step = r.optional_whole<int>("decoder_sparse_step"); step && *step != 1) {
        throw InputError(r.where("decoder_sparse_step"),
                         fmt::format("{}: MoE every {} layers is not modelled", *step, *step), "1 (every layer MoE)");
      }
      if (!r.empty_list("mlp_only_layers")) {
        throw InputError(r.where("mlp_only_layers"), "dense layers among MoE ones are not modelled", "[]");
      }
      break;
    }
    case Experts::kDeepSeek: {
      e.experts = r.whole<int>("n_routed_experts");
      e.expert_ffn = r.whole<std::int64_t>("moe_intermediate_size");
      e.shared_ffn = shared_experts_ffn(r, e.expert_ffn);
      e.first_dense_layers = r.optional_whole<int>("first_k_dense_replace").value_or(0);
      if (const auto freq = r.optional_whole<int>("moe_layer_freq"); freq && *freq != 1) {
        throw InputError(r.where("moe_layer_freq"),
                         fmt::format("{}: MoE every {} layers is not modelled", *freq, *freq),
                         "1 (every layer after the first dense ones MoE)");
      }
      break;
    }
    case Experts::kNone:
      break;
  }
  return e;
}

// The config's names of the MoE fields validate_model checks.
void name_expert_keys(Experts kind, ModelKeys& k) {
  k.top_k = "num_experts_per_tok";
  k.capacity_factor = "capacity_factor";
  switch (kind) {
    case Experts::kMixtral:
      k.experts = "num_local_experts";
      k.expert_ffn = "intermediate_size";
      break;
    case Experts::kQwenMoe:
      k.experts = "num_experts";
      k.expert_ffn = "moe_intermediate_size";
      k.shared_ffn = "shared_expert_intermediate_size";
      break;
    case Experts::kDeepSeek:
      k.experts = "n_routed_experts";
      k.expert_ffn = "moe_intermediate_size";
      k.shared_ffn = "n_shared_experts";
      k.first_dense_layers = "first_k_dense_replace";
      k.q_lora_rank = "q_lora_rank";
      k.kv_lora_rank = "kv_lora_rank";
      k.qk_nope_head_dim = "qk_nope_head_dim";
      k.qk_rope_head_dim = "qk_rope_head_dim";
      k.v_head_dim = "v_head_dim";
      break;
    case Experts::kNone:
      break;
  }
}

std::int64_t training_seq(ConfigReader& r, const TransformerConfig& m, std::string_view positions_key,
                          std::optional<std::int64_t> seq) {
  std::int64_t max_positions = 2048;  // FalconConfig's default; the others require the key
  if (r.architecture().family != Family::kFalcon || r.has(positions_key))
    max_positions = r.whole<std::int64_t>(positions_key);
  if (!seq) return std::min(max_positions, kDefaultHfSeq);
  // Learned positions have a table of max_positions rows: a longer sequence has no position to look up.
  if (m.positions == PositionEmbedding::kLearned && *seq > max_positions) {
    throw InputError("--seq",
                     fmt::format("{} is longer than the {} positions of {} ({})", *seq, max_positions, m.name,
                                 r.where(positions_key)),
                     fmt::format("at most {}", max_positions));
  }
  return *seq;
}

std::string model_name(const json& doc, std::string_view origin) {
  if (doc.contains("_name_or_path") && doc.at("_name_or_path").is_string() &&
      !doc.at("_name_or_path").get<std::string>().empty()) {
    return printable(doc.at("_name_or_path").get<std::string>());
  }
  const std::filesystem::path file(origin);
  // A config.json names its model by its folder (models/llama-2-7b/config.json).
  if (file.stem() == "config" && file.has_parent_path()) return printable(file.parent_path().filename().string());
  return printable(file.stem().string());
}

}  // namespace

bool is_hf_config(const json& doc) noexcept {
  return doc.is_object() && (doc.contains("model_type") || doc.contains("architectures"));
}

TransformerConfig model_from_hf_config(const json& doc, std::string_view origin, std::optional<std::int64_t> seq) {
  if (!doc.is_object()) throw InputError(origin, "the config is not a JSON object", "a Hugging Face config.json");
  const Architecture& arch = find_architecture(doc, origin);
  ConfigReader r(doc, origin, arch);
  const ConfigKeys keys = config_keys(arch.family, doc);
  TransformerConfig m;
  m.name = model_name(doc, origin);
  m.layers = r.whole<int>(keys.model.layers);
  m.hidden = r.whole<std::int64_t>(keys.model.hidden);
  m.heads = r.whole<int>(keys.model.heads);
  m.kv_heads = read_kv_heads(r, m.heads);
  m.vocab = r.whole<std::int64_t>("vocab_size");
  m.activation = read_activation(r, keys.activation, arch.family == Family::kGated);
  // GPT-2's n_inner and Falcon's ffn_hidden_size are optional (4 x hidden); the others' required.
  const bool ffn_optional = arch.family == Family::kGpt2 || arch.family == Family::kFalcon;
  m.ffn = ffn_optional ? r.optional_whole<std::int64_t>(keys.model.ffn).value_or(4 * std::min(m.hidden, kMaxHidden + 1))
                       : r.whole<std::int64_t>(keys.model.ffn);
  m.norm = arch.family == Family::kGated ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  m.positions = arch.family == Family::kGpt2 ? PositionEmbedding::kLearned : PositionEmbedding::kRotary;
  m.linear_bias = read_linear_bias(r);
  m.tied_embeddings = r.flag("tie_word_embeddings", arch.tied);
  m.moe = read_experts(r, m);
  m.mla = read_mla(r);
  m.seq = training_seq(r, m, keys.model.seq, seq);
  check_unmodelled(r, m);
  r.finish();
  ModelKeys names = keys.model;
  if (seq) names.seq = "seq";  // the sequence is --seq's, not the file's
  name_expert_keys(arch.experts, names);
  validate_model(m, origin, names);
  return m;
}

std::string supported_hf_architectures() {
  std::string out;
  for (const Architecture& a : kArchitectures) {
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", a.model_type, a.class_name);
  }
  return out;
}

std::string hf_metadata_keys() { return joined(kMetadataKeys); }

}  // namespace commscale
