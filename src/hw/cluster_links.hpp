#pragma once

// The "links" array of a node: each entry joins device `a` to device `b`, or, with "connect", every
// device of a list to its partner in another list ("zip") or to every device of it ("all"). A name is a
// device ("gpu3") or all devices of a kind ("gpu*"). Entries are expanded to one LinkSpec per pair.

#include <string_view>
#include <vector>

#include "hw/cluster_spec.hpp"
#include "hw/json_reader.hpp"

namespace commscale::hw {

[[nodiscard]] std::vector<LinkSpec> parse_links(JsonObject& node, const NodeSpec& counts, const ReferenceData& ref,
                                                const GpuSpec& gpu);

// Parses "gpu3" (within the node's device counts); throws InputError naming `where`.
[[nodiscard]] DeviceRef parse_device_ref(std::string_view text, const NodeSpec& counts, const std::string& where);

}  // namespace commscale::hw
