#include "runtime/nic_discovery.hpp"

#include <charconv>
#include <set>

#include <fmt/format.h>

#if defined(COMMSCALE_HAVE_HWLOC)
#include <hwloc.h>
#endif

#include "hw/topo_matrix.hpp"
#include "runtime/sysfs_pci.hpp"

namespace commscale {
namespace {

std::optional<double> leading_number(const std::string& text) {
  double value = 0.0;
  const char* begin = text.data();
  while (begin != text.data() + text.size() && *begin == ' ') ++begin;
  const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec != std::errc() || end == begin) return std::nullopt;
  return value;
}

void add_pci_facts(DiscoveredNic& nic) {
  if (nic.pci_bus_id.empty()) return;
  const SysfsPciFacts pci = read_sysfs_pci(nic.pci_bus_id);
  nic.pci_path = pci.path;
  nic.numa_node = pci.numa_node;
  nic.pcie_max = pci.max;
  nic.pcie_current = pci.current;
}

}  // namespace

std::optional<double> parse_ib_rate_Gbps(const std::string& text) { return leading_number(text); }

std::string parse_ib_state(const std::string& text) {
  const std::size_t colon = text.find(':');
  std::string state = colon == std::string::npos ? text : text.substr(colon + 1);
  while (!state.empty() && state.front() == ' ') state.erase(state.begin());
  return state;
}

std::vector<DiscoveredNic> rdma_ports(const std::string& device, const std::filesystem::path& ib_root) {
  std::vector<DiscoveredNic> out;
  std::error_code ec;
  const std::filesystem::path ports = ib_root / device / "ports";
  std::set<std::string> names;  // in port order
  for (const auto& entry : std::filesystem::directory_iterator(ports, ec)) names.insert(entry.path().filename());
  for (const std::string& port : names) {
    DiscoveredNic nic;
    nic.name = fmt::format("{}:{}", device, port);
    const std::filesystem::path dir = ports / port;
    nic.kind = read_sysfs_line(dir / "link_layer");
    nic.state = parse_ib_state(read_sysfs_line(dir / "state"));
    nic.active = nic.state == "ACTIVE";
    nic.rate_source = (dir / "rate").string();
    if (nic.active) nic.rate_Gbps = parse_ib_rate_Gbps(read_sysfs_line(dir / "rate"));
    out.push_back(std::move(nic));
  }
  return out;
}

DiscoveredNic network_interface(const std::string& name, const std::filesystem::path& net_root) {
  DiscoveredNic nic;
  nic.name = name;
  nic.kind = "Ethernet";
  nic.state = read_sysfs_line(net_root / name / "operstate");
  nic.active = nic.state == "up";
  nic.rate_source = (net_root / name / "speed").string();
  const std::optional<double> mbps = leading_number(read_sysfs_line(net_root / name / "speed"));
  if (nic.active && mbps && *mbps > 0) nic.rate_Gbps = *mbps / 1000.0;  // Mb/s; -1 while the link is down
  return nic;
}

#if defined(COMMSCALE_HAVE_HWLOC)

namespace {

// Ends the topology however discovery ends.
struct Topology {
  hwloc_topology_t t = nullptr;
  Topology() { hwloc_topology_init(&t); }
  ~Topology() { hwloc_topology_destroy(t); }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
};

std::string pci_bus_id_of(hwloc_obj_t osdev) {
  const hwloc_obj_t pci = osdev->parent;
  if (pci == nullptr || pci->type != HWLOC_OBJ_PCI_DEVICE) return {};
  const auto& a = pci->attr->pcidev;
  return normalize_pci_bus_id(fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func));
}

}  // namespace

NicDiscovery discover_nics() {
  NicDiscovery d;
  Topology topo;
  // Only I/O devices that matter (PCI devices with an OS device): virtual interfaces have no PCI parent.
  hwloc_topology_set_io_types_filter(topo.t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo.t) != 0) {
    d.status = "hwloc could not load this host's topology";
    return d;
  }
  std::set<std::string> rdma_buses;
  std::vector<std::pair<std::string, std::string>> interfaces;  // name, bus
  for (hwloc_obj_t o = hwloc_get_next_osdev(topo.t, nullptr); o != nullptr; o = hwloc_get_next_osdev(topo.t, o)) {
    const std::string bus = pci_bus_id_of(o);
    if (bus.empty() || o->name == nullptr) continue;
    if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      for (DiscoveredNic nic : rdma_ports(o->name, "/sys/class/infiniband")) {
        nic.pci_bus_id = bus;
        add_pci_facts(nic);
        d.nics.push_back(std::move(nic));
      }
      rdma_buses.insert(bus);
    } else if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
      interfaces.emplace_back(o->name, bus);
    }
  }
  for (const auto& [name, bus] : interfaces) {
    if (rdma_buses.count(bus) > 0) continue;  // ib0 or a RoCE netdev: counted as its RDMA port
    DiscoveredNic nic = network_interface(name, "/sys/class/net");
    nic.pci_bus_id = bus;
    add_pci_facts(nic);
    d.nics.push_back(std::move(nic));
  }
  return d;
}

#else

NicDiscovery discover_nics() {
  NicDiscovery d;
  d.status = "this commscale was built without hwloc (libhwloc-dev): NICs are not discovered";
  return d;
}

#endif

}  // namespace commscale
