#include "runtime/sysfs_pci.hpp"

#include <charconv>
#include <fstream>

#include "hw/topo_matrix.hpp"

namespace commscale {

std::string read_sysfs_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

namespace {

int read_int(const std::filesystem::path& file, int fallback) {
  const std::string text = read_sysfs_line(file);
  int value = fallback;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end != text.data() ? value : fallback;
}

PcieLink read_link(const std::filesystem::path& dir, const std::string& prefix) {
  PcieLink link;
  link.generation = pcie_generation_from_speed(read_sysfs_line(dir / (prefix + "_link_speed"))).value_or(0);
  link.width = read_int(dir / (prefix + "_link_width"), 0);
  return link;
}

}  // namespace

SysfsPciFacts read_sysfs_pci(const std::string& bus_id, const std::filesystem::path& devices_dir) {
  SysfsPciFacts facts;
  std::error_code ec;
  const std::filesystem::path dir = devices_dir / normalize_pci_bus_id(bus_id);
  const std::filesystem::path real = std::filesystem::canonical(dir, ec);
  if (ec) return facts;
  // /sys/devices/pci0000:00/0000:00:01.0/0000:18:00.0: the tree starts at the root complex.
  bool in_tree = false;
  for (const std::filesystem::path& part : real) {
    const std::string name = part.string();
    in_tree = in_tree || (name.starts_with("pci") && name.find(':') != std::string::npos);
    if (in_tree) facts.path.push_back(name);
  }
  facts.numa_node = read_int(dir / "numa_node", -1);
  facts.max = read_link(dir, "max");
  facts.current = read_link(dir, "current");
  return facts;
}

}  // namespace commscale
