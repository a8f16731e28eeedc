// The model flags as the user gave them, as text to paste into another command (search suggests
// the `predict` of its best plan with them).

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
void add_if_given(std::string& out, const CLI::Option* option, const char* flag, const T& value) {
  if (option == nullptr || option->count() == 0) return;
  out += fmt::format(" {} {}", flag, shell_word(fmt::format("{}", value)));
}

}  // namespace

std::string model_flags_text(const ModelPlanArguments& a) {
  std::string out;
  if (!a.model.empty()) out += fmt::format(" --model {}", shell_word(a.model));
  if (!a.model_file.empty()) out += fmt::format(" --model-file {}", shell_word(a.model_file));
  if (!a.hf_config.empty()) out += fmt::format(" --hf-config {}", shell_word(a.hf_config));
  // A model written out in a plan file has no other name (flags given after it override its plan).
  const bool file_model = a.model.empty() && a.model_file.empty() && a.hf_config.empty();
  if (a.loaded_plan && a.loaded_plan->model.document && file_model) {
    out += fmt::format(" --plan-file {}", shell_word(a.loaded_plan->path));
  }
  const auto& g = a.given;
  add_if_given(out, g.layers, "--layers", a.layers);
  add_if_given(out, g.hidden, "--hidden", a.hidden);
  add_if_given(out, g.heads, "--heads", a.heads);
  add_if_given(out, g.kv_heads, "--kv-heads", a.kv_heads);
  add_if_given(out, g.ffn, "--ffn", a.ffn);
  add_if_given(out, g.vocab, "--vocab", a.vocab);
  add_if_given(out, g.seq, "--seq", a.seq);
  add_if_given(out, g.activation, "--activation", a.activation);
  add_if_given(out, g.dtype, "--dtype", a.dtype);
  out += megatron_model_flags_text(a);
  return out.empty() ? out : out.substr(1);
}

std::string shell_quoted(const std::string& word) { return shell_word(word); }

}  // namespace commscale
