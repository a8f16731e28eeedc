#include "hw/gpu_match.hpp"

#include <cctype>

namespace commscale::hw {
namespace {

// Lower case, letters and digits only: "NVIDIA A100-SXM4-80GB" -> "nvidiaa100sxm480gb".
std::string squash(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::vector<std::string> tokens_of(std::string_view catalog_name) {
  std::vector<std::string> tokens;
  std::size_t start = 0;
  while (start <= catalog_name.size()) {
    const std::size_t dash = catalog_name.find('-', start);
    tokens.push_back(squash(catalog_name.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start)));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return tokens;
}

}  // namespace

std::optional<std::string> match_gpu_name(std::string_view device_name, const std::vector<std::string>& catalog_names) {
  const std::string device = squash(device_name);
  const bool device_pcie = device.find("pcie") != std::string::npos;
  std::optional<std::string> best;
  int best_score = -1;
  for (const std::string& name : catalog_names) {
    const std::vector<std::string> tokens = tokens_of(name);
    if (tokens.empty() || device.find(tokens.front()) == std::string::npos) continue;
    bool catalog_pcie = false;
    int score = 0;
    for (std::size_t i = 1; i < tokens.size(); ++i) {
      catalog_pcie = catalog_pcie || tokens[i] == "pcie";
      if (device.find(tokens[i]) != std::string::npos) ++score;
    }
    if (catalog_pcie != device_pcie) continue;
    if (score > best_score) {
      best_score = score;
      best = name;
    }
  }
  return best;
}

}  // namespace commscale::hw
