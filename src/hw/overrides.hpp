#pragma once

// What-if overrides of a cluster or its GPU without editing files (`--set KEY=VALUE`, `compare --sweep`).
// KEY is a path in the topology JSON (topologies/README.md): `network.nic_rate_Gbps`, `node.devices.gpu`,
// `node.links[3].bw_GBps`, `transports.p2p`, `system_price_USD`; `gpu.KEY` is a key of the cluster's GPU
// file (`gpu.memory_GiB`), `gpu` alone swaps the GPU (`gpu=h100-sxm5`). Shorthands: `node.gpus` and
// `node.nics` for node.devices.gpu and .nic. A key whose value is a figure keeps its figure form: the
// value is replaced and the figure becomes tag U, source "what-if: --set KEY=VALUE". The patched
// documents go through the loaders as files do, so a bad key or value gets the file's message
// (prefixed with the --set that caused it).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace commscale::hw {

struct Override {
  std::string key;             // as given, after shorthands: "network.nic_rate_Gbps"
  std::string text;            // "network.nic_rate_Gbps=400", as typed
  nlohmann::json value;        // the VALUE read as JSON (400, true, "pcie"), else as a string
  std::string flag = "--set";  // the flag it came from (compare --sweep makes them too)
  [[nodiscard]] bool on_gpu() const noexcept { return key.rfind("gpu.", 0) == 0; }
};

// "KEY=VALUE" items of `flag`; throws InputError naming the flag.
[[nodiscard]] std::vector<Override> parse_overrides(const std::vector<std::string>& items, std::string_view flag);
[[nodiscard]] Override parse_override(const std::string& item, std::string_view flag);

// Applies the overrides of one document: the cluster's (every key not under gpu.) or the GPU's (the keys
// under gpu., without the prefix). Throws InputError naming the --set when a path cannot be followed.
void apply_cluster_overrides(nlohmann::json& cluster, const std::vector<Override>& overrides);
void apply_gpu_overrides(nlohmann::json& gpu, const std::vector<Override>& overrides);

// "--set a=1 --set b=2" (each with its flag), for messages and outputs.
[[nodiscard]] std::string overrides_text(const std::vector<Override>& overrides);
[[nodiscard]] nlohmann::json overrides_json(const std::vector<Override>& overrides);

}  // namespace commscale::hw
