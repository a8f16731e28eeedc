#pragma once

// Which catalog GPU a device is, from the name CUDA reports ("NVIDIA H200", "NVIDIA A100 80GB PCIe",
// "NVIDIA GeForce RTX 4090"), so measurements can be set against the catalog's figures (MFU).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commscale::hw {

// The catalog name that best matches `device_name`: the model token (the part of the catalog name
// before its first '-': "a100", "rtx4090") must appear in the device name, then the most other
// tokens ("sxm4", "80gb") win, and a PCIe part never matches an SXM name or the reverse. Empty when
// no catalog name's model token appears.
[[nodiscard]] std::optional<std::string> match_gpu_name(std::string_view device_name,
                                                        const std::vector<std::string>& catalog_names);

}  // namespace commscale::hw
