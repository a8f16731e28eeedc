// Rank 0's judgement of every node's NICs and copies.

#include <map>

#include <fmt/format.h>

#include "bench/doctor_node.hpp"

namespace commscale {
namespace {

using predict::CheckStatus;
using predict::DoctorCheck;
using predict::Expected;

bool rdma(const DiscoveredNic& n) { return n.name.find(':') != std::string::npos; }

DoctorCheck nic_base(const NodeMeasurement& m, const DiscoveredNic& n, const char* check) {
  DoctorCheck c;
  c.phase = "node";
  c.check = check;
  c.subject = fmt::format("{} NIC {} ({}{})", m.host, n.name, n.kind.empty() ? "?" : n.kind,
                          n.pci_bus_id.empty() ? "" : " [" + n.pci_bus_id + "]");
  c.place.host = m.host;
  c.place.nic = n.name;
  return c;
}

// The rate most of the job's active RDMA ports run at: what a port of this job should run at when
// no cluster says so.
std::optional<Expected> usual_rdma_rate(const std::vector<NodeMeasurement>& nodes) {
  std::map<double, int> count;
  int ports = 0;
  for (const NodeMeasurement& m : nodes) {
    for (const DiscoveredNic& n : m.nics.nics) {
      if (rdma(n) && n.rate_Gbps) {
        ++count[*n.rate_Gbps];
        ++ports;
      }
    }
  }
  if (count.empty()) return std::nullopt;
  const auto most = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
    return a.second < b.second || (a.second == b.second && a.first < b.first);
  });
  return Expected{most->first, fmt::format("the rate {} of the job's {} active RDMA ports run at", most->second, ports),
                  true};
}

void nic_checks(const NodeMeasurement& m, const predict::DoctorExpectations& expect,
                const std::optional<Expected>& usual, double min_ratio, std::vector<DoctorCheck>& out) {
  if (m.nics.nics.empty()) {
    out.push_back(predict::not_run(
        "node", "nic", m.host,
        m.nics.status.empty() ? "hwloc lists no network adapter on the PCI bus (virtual interfaces such as veth do "
                                "not count): no NIC to check"
                              : m.nics.status));
    return;
  }
  const std::optional<Expected> cluster = expect.nic_rate_Gbps();
  for (const DiscoveredNic& n : m.nics.nics) {
    DoctorCheck state = nic_base(m, n, "nic_state");
    state.detail = fmt::format("port state {}", n.state.empty() ? "unknown" : n.state);
    // An RDMA port down is a fault; an Ethernet port without RDMA may well be unused (info).
    state.status = n.active ? CheckStatus::kPass : rdma(n) ? CheckStatus::kFail : CheckStatus::kInfo;
    out.push_back(state);
    if (!n.active) continue;
    DoctorCheck rate = nic_base(m, n, "nic_rate");
    rate.unit = "Gb/s";
    rate.measured = n.rate_Gbps;
    // The cluster's NIC rate is its GPU network's, which RDMA ports carry: a plain Ethernet port (the
    // management or storage network, 1-100 Gb/s) is shown, not judged against it.
    const std::optional<Expected> e = !rdma(n) ? std::nullopt : cluster ? cluster : usual;
    if (e) {
      rate.expected = e->value;
      rate.basis = e->basis;
    }
    rate.detail = n.rate_Gbps ? "read from " + n.rate_source
                              : "sysfs gives no rate (" + n.rate_source + "): a virtual adapter, or no carrier";
    if (!rdma(n)) rate.detail += "; not judged: an Ethernet port without RDMA is not on the GPU network";
    out.push_back(predict::judge(std::move(rate), min_ratio));
    if (!n.pcie_max.known()) {
      out.push_back(predict::not_run("node", "nic_pcie", nic_base(m, n, "nic_pcie").subject,
                                     "sysfs gives no PCIe link for this adapter (a virtual one)"));
      continue;
    }
    DoctorCheck pcie = nic_base(m, n, "nic_pcie");
    pcie.unit = "GB/s";
    pcie.place.link = "PCIe";
    pcie.measured = expect.pcie_GBps(n.pcie_current.generation, n.pcie_current.width);
    pcie.expected = expect.pcie_GBps(n.pcie_max.generation, n.pcie_max.width);
    pcie.basis = "the adapter's own maximum link (sysfs max_link_speed, max_link_width)";
    pcie.detail = fmt::format("gen{} x{} of gen{} x{}", n.pcie_current.generation, n.pcie_current.width,
                              n.pcie_max.generation, n.pcie_max.width);
    out.push_back(predict::judge(std::move(pcie), min_ratio));
  }
}

std::string end_name(int device, const std::string& bus) {
  return device < 0 ? "host" : fmt::format("GPU {} [{}]", device, bus);
}

void copy_checks(const NodeMeasurement& m, const predict::DoctorExpectations& expect, double min_ratio,
                 std::vector<DoctorCheck>& out) {
  if (!m.copies_status.empty()) {
    out.push_back(predict::not_run("node", "copies", m.host, m.copies_status));
    return;
  }
  DoctorCheck how;  // what the copies were, once per node
  how.phase = "node";
  how.check = "copies";
  how.subject = m.host;
  how.place.host = m.host;
  how.status = CheckStatus::kInfo;
  how.detail = m.copies_what;
  out.push_back(std::move(how));
  for (const NodeCopy& copy : m.copies) {
    const bool host = copy.src_device < 0 || copy.dst_device < 0;
    DoctorCheck c;
    c.phase = "node";
    c.check = host ? "host_copy" : "p2p_copy";
    c.subject = fmt::format("{} {} -> {}", m.host, end_name(copy.src_device, copy.src_bus),
                            end_name(copy.dst_device, copy.dst_bus));
    c.place.host = m.host;
    c.place.gpu = host ? std::max(copy.src_device, copy.dst_device) : copy.src_device;
    c.place.pci_bus_id = copy.src_device >= 0 ? copy.src_bus : copy.dst_bus;
    c.place.link = host ? "PCIe" : fmt::format("gpu{} -> gpu{}", copy.src_device, copy.dst_device);
    c.unit = "GB/s";
    c.measured = copy.GBps;
    const std::optional<Expected> e =
        host ? expect.host_copy_GBps(c.place.gpu) : expect.p2p_copy_GBps(copy.src_device, copy.dst_device);
    if (e) {
      c.expected = e->value;
      c.basis = e->basis;
    }
    c.detail = fmt::format("{}; samples' coefficient of variation {:.3f}", copy.path, copy.cv);
    c = predict::judge(std::move(c), min_ratio);
    if (copy.wrong_bytes > 0) {  // a copy that delivers wrong data fails whatever its speed
      c.status = CheckStatus::kFail;
      c.detail = fmt::format("{} wrong bytes after the copies; {}", copy.wrong_bytes, c.detail);
    }
    out.push_back(std::move(c));
  }
}

}  // namespace

std::vector<DoctorCheck> node_checks(const std::vector<NodeMeasurement>& nodes,
                                     const predict::DoctorExpectations& expect, double min_ratio) {
  std::vector<DoctorCheck> out;
  const std::optional<Expected> usual = usual_rdma_rate(nodes);
  for (const NodeMeasurement& m : nodes) {
    nic_checks(m, expect, usual, min_ratio, out);
    copy_checks(m, expect, min_ratio, out);
  }
  return out;
}

}  // namespace commscale
