#pragma once

// What-if device counts (`--set node.gpus=4`, `node.nics`, any `node.devices.KIND`): the file's links
// name devices one by one ("gpu5") as well as by kind ("gpu*"). A count made smaller drops the removed
// devices from every link entry (an entry left with no device at one end goes, a "zip" entry loses the
// removed devices' partners), so that the file still loads; a note says which entries changed. A count
// made larger adds devices that only "kind*" entries reach: where that leaves one without links, the
// loader's message stands, and the caller adds what to do (grown_devices_hint).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/overrides.hpp"

namespace commscale::hw {

struct DeviceCountChange {
  std::string kind;  // "gpu"
  int from = 0;
  int to = 0;
};

// The node.devices counts that differ between the file and the patched document (whole numbers only;
// anything else is left to the loader's message).
[[nodiscard]] std::vector<DeviceCountChange> device_count_changes(const nlohmann::json& original,
                                                                  const nlohmann::json& patched);

// Drops the devices removed by `changes` from patched's node.links; returns the note saying what went
// (empty when no entry changed). `overrides` name the change in the note.
[[nodiscard]] std::optional<std::string> drop_removed_devices(nlohmann::json& patched,
                                                              const std::vector<DeviceCountChange>& changes,
                                                              const std::vector<Override>& overrides);

// For a loader error after a count grew: what to do instead. Empty when no count grew.
[[nodiscard]] std::string grown_devices_hint(const std::vector<DeviceCountChange>& changes,
                                             const std::string& cluster_name);

}  // namespace commscale::hw
