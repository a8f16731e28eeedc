#include "hw/kinds.hpp"

#include <array>

namespace commscale::hw {
namespace {

constexpr std::array<std::string_view, kDeviceKindCount> kDeviceNames = {"gpu", "nvswitch", "pcie_switch",
                                                                         "cpu", "nic",      "net_switch"};
constexpr std::array<std::string_view, kLinkTypeCount> kLinkNames = {"nvlink", "pcie", "cpu", "socket", "network"};
constexpr std::array<std::string_view, kPathClassCount> kClassNames = {"nvlink", "pcie", "host_staged", "socket",
                                                                       "network"};

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names, std::string_view text) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view name(DeviceKind kind) noexcept { return kDeviceNames[static_cast<std::size_t>(kind)]; }
std::string_view name(LinkType type) noexcept { return kLinkNames[static_cast<std::size_t>(type)]; }
std::string_view name(PathClass c) noexcept { return kClassNames[static_cast<std::size_t>(c)]; }

std::optional<DeviceKind> parse_device_kind(std::string_view text) noexcept {
  return parse_name<DeviceKind>(kDeviceNames, text);
}
std::optional<LinkType> parse_link_type(std::string_view text) noexcept {
  return parse_name<LinkType>(kLinkNames, text);
}

NcclHwClass nccl_hw_class(PathClass c) noexcept {
  switch (c) {
    case PathClass::kNvlink:
      return NcclHwClass::kNvlink;
    case PathClass::kPcie:
    case PathClass::kHostStaged:
      return NcclHwClass::kPci;
    case PathClass::kSocket:
    case PathClass::kNetwork:
      return NcclHwClass::kNet;
  }
  return NcclHwClass::kNet;
}

std::string_view name(NcclHwClass c) noexcept {
  switch (c) {
    case NcclHwClass::kNvlink:
      return "NVLINK";
    case NcclHwClass::kPci:
      return "PCI";
    case NcclHwClass::kNet:
      return "NET";
  }
  return "NET";
}

}  // namespace commscale::hw
