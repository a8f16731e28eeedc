// The model flags as the user gave them, as text to paste into another command (search suggests
// the `predict` of its best plan with them).

#include <optional>

#include <fmt/format.h>

#include "cli/megatron_flags.hpp"
#include "cli/model_options.hpp"

namespace commscale {
namespace {

// Single-quoted for a POSIX shell unless every character is safe as it is.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_./:=,+@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

template <class T>
void add_if_given(std::string& out, const std::optional<T>& value, const char* flag) {
  if (value) out += fmt::format(" {} {}", flag, shell_word(fmt::format("{}", *value)));
}

}  // namespace

std::string model_flags_text(const ModelPlanArguments& a) {
  const PlanRequest r = plan_request(a);
  const ModelFlags& m = r.model;
  std::string out;
  // Without a model flag, the plan file's model: by its name or path, or a model written out in the file,
  // which has no other name (flags given after it override its plan).
  if (!m.preset && !m.model_file && !m.hf_config && r.plan_file) {
    const PlanFileModel& f = r.plan_file->model;
    if (!f.preset.empty()) out += fmt::format(" --model {}", shell_word(f.preset));
    if (!f.model_file.empty()) out += fmt::format(" --model-file {}", shell_word(f.model_file));
    if (!f.hf_config.empty()) out += fmt::format(" --hf-config {}", shell_word(f.hf_config));
    if (out.empty() && f.document) out += fmt::format(" --plan-file {}", shell_word(r.plan_file->path));
  }
  add_if_given(out, m.preset, "--model");
  add_if_given(out, m.model_file, "--model-file");
  add_if_given(out, m.hf_config, "--hf-config");
  add_if_given(out, m.shape.layers, "--layers");
  add_if_given(out, m.shape.hidden, "--hidden");
  add_if_given(out, m.shape.heads, "--heads");
  add_if_given(out, m.shape.kv_heads, "--kv-heads");
  add_if_given(out, m.shape.ffn, "--ffn");
  add_if_given(out, m.shape.vocab, "--vocab");
  add_if_given(out, m.shape.seq, "--seq");
  add_if_given(out, m.activation, "--activation");
  add_if_given(out, m.dtype, "--dtype");
  out += megatron_model_flags_text(r.megatron);
  return out.empty() ? out : out.substr(1);
}

std::string shell_quoted(const std::string& word) { return shell_word(word); }

}  // namespace commscale
