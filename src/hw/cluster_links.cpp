#include "hw/cluster_links.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/figure_io.hpp"

namespace commscale::hw {
namespace {

constexpr std::string_view kDeviceNameHelp = "a device of node.devices such as gpu0, or all of a kind such as gpu*";

std::vector<DeviceRef> expand_name(std::string_view text, const NodeSpec& counts, const std::string& where) {
  if (!text.empty() && text.back() == '*') {
    const std::optional<DeviceKind> kind = parse_device_kind(text.substr(0, text.size() - 1));
    if (!kind || *kind == DeviceKind::kNetSwitch) {
      throw InputError(where, fmt::format("\"{}\" names no kind of device", text), kDeviceNameHelp);
    }
    std::vector<DeviceRef> all;
    for (int i = 0; i < counts.count(*kind); ++i) all.push_back({*kind, i});
    return all;
  }
  return {parse_device_ref(text, counts, where)};
}

// "a"/"b": a name or an array of names.
std::vector<DeviceRef> read_ends(JsonObject& entry, std::string_view key, const NodeSpec& counts) {
  const nlohmann::json& value = entry.required(key);
  std::vector<DeviceRef> out;
  if (value.is_string()) return expand_name(value.get<std::string>(), counts, entry.where(key));
  const std::vector<std::string> names = entry.strings(key);
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (const DeviceRef& d : expand_name(names[i], counts, fmt::format("{}[{}]", entry.where(key), i)))
      out.push_back(d);
  }
  if (out.empty()) throw InputError(entry.where(key), "names no device", kDeviceNameHelp);
  return out;
}

std::vector<std::pair<DeviceRef, DeviceRef>> pair_ends(JsonObject& entry, const std::vector<DeviceRef>& a,
                                                       const std::vector<DeviceRef>& b) {
  std::vector<std::pair<DeviceRef, DeviceRef>> pairs;
  if (!entry.has("connect")) {
    if (a.size() != 1 || b.size() != 1) {
      throw InputError(entry.where("connect"), fmt::format("is missing for {} x {} devices", a.size(), b.size()),
                       "\"zip\" (a[i] with b[i]) or \"all\" (every a with every b) when a or b names several devices");
    }
    pairs.emplace_back(a[0], b[0]);
    return pairs;
  }
  const std::string connect = entry.string("connect");
  if (connect == "all") {
    for (const DeviceRef& x : a) {
      for (const DeviceRef& y : b) pairs.emplace_back(x, y);
    }
  } else if (connect == "zip") {
    if (a.size() != b.size()) {
      throw InputError(entry.where("connect"), fmt::format("\"zip\" pairs {} devices with {}", a.size(), b.size()),
                       "lists a and b of equal length");
    }
    for (std::size_t i = 0; i < a.size(); ++i) pairs.emplace_back(a[i], b[i]);
  } else {
    throw InputError(entry.where("connect"), fmt::format("\"{}\" is not a way to connect", connect),
                     "\"zip\" or \"all\"");
  }
  return pairs;
}

bool is_one_of(DeviceKind k, std::initializer_list<DeviceKind> kinds) {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

// Which device kinds each link type may join.
void check_ends(const LinkSpec& l, const std::string& where) {
  using K = DeviceKind;
  const K x = l.a.kind;
  const K y = l.b.kind;
  bool ok = false;
  std::string_view expected;
  switch (l.type) {
    case LinkType::kNvlink:
      ok = l.a != l.b && is_one_of(x, {K::kGpu, K::kNvswitch}) && is_one_of(y, {K::kGpu, K::kNvswitch}) &&
           !(x == K::kNvswitch && y == K::kNvswitch);
      expected = "NVLink between two GPUs or a GPU and an nvswitch";
      break;
    case LinkType::kPcie: {
      const auto endpoint = [](K k) { return k == K::kGpu || k == K::kNic; };
      ok = l.a != l.b && is_one_of(x, {K::kGpu, K::kNic, K::kPcieSwitch, K::kCpu}) &&
           is_one_of(y, {K::kGpu, K::kNic, K::kPcieSwitch, K::kCpu}) && !(endpoint(x) && endpoint(y)) &&
           !(x == K::kCpu && y == K::kCpu);
      expected = "PCIe from a GPU, NIC or pcie_switch up to a pcie_switch or cpu";
      break;
    }
    case LinkType::kCpu:
      ok = x == K::kCpu && y == K::kCpu && l.a != l.b;
      expected = "a cpu link between two different cpus";
      break;
    case LinkType::kSocket:
      ok = x == K::kCpu && l.a == l.b;
      expected = "a socket link from a cpu to itself (the host's TCP loopback)";
      break;
    case LinkType::kNetwork:
      expected = "nvlink, pcie, cpu or socket (network links come from the \"network\" section)";
      break;
  }
  if (!ok)
    throw InputError(where, fmt::format("{} cannot join {} and {}", name(l.type), device_name(l.a), device_name(l.b)),
                     expected);
}

Figure<GBps> nvlink_bw(int lanes, const GpuSpec& gpu) {
  const Figure<GBps>& link = gpu.nvlink.link_bw;
  Figure<GBps> out;
  if (link.value) out.value = *link.value * static_cast<double>(lanes);
  out.provenance = {
      SourceTag::kDerived,
      fmt::format("{} x {} GB/s per {} NVLink link ({}: {})", lanes, link.value ? link.value->value() : 0.0, gpu.name,
                  tag_letter(link.provenance.tag), link.provenance.source),
      {}};
  return out;
}

// The type-specific keys of an entry, and the bandwidth they give.
void read_type_keys(JsonObject& entry, LinkSpec& l, const ReferenceData& ref, const GpuSpec& gpu) {
  const SourceCitations& c = ref.citations;
  if (entry.has("bw_GBps")) l.bw_given = as_gbps(read_number_figure(entry, "bw_GBps", c, Nullable::kNo, 1e-9));
  if (l.type == LinkType::kNvlink) {
    l.lanes = entry.integer("lanes", 1, 64);
    if (!l.bw_given && !gpu.nvlink.link_bw.value) {
      throw InputError(entry.where("type"), fmt::format("{} has no NVLink in the catalog", gpu.name),
                       "a GPU with NVLink, or bw_GBps on the link");
    }
    l.bw = l.bw_given ? *l.bw_given : nvlink_bw(l.lanes, gpu);
  } else if (l.type == LinkType::kPcie) {
    l.generation = entry.integer("generation", 1, 7);
    l.lanes = entry.integer("width", 1, 32);
    if (l.lanes != 1 && l.lanes != 2 && l.lanes != 4 && l.lanes != 8 && l.lanes != 16 && l.lanes != 32) {
      throw InputError(entry.where("width"), fmt::format("is {}", l.lanes), "1, 2, 4, 8, 16 or 32 lanes");
    }
    l.bw = l.bw_given ? *l.bw_given : ref.pcie_bw(l.generation, l.lanes, entry.where("generation"));
  } else {
    if (!l.bw_given) {
      throw InputError(entry.where("bw_GBps"), "is missing",
                       fmt::format("a bandwidth figure for a {} link", name(l.type)));
    }
    l.bw = *l.bw_given;
  }
}

std::vector<LinkSpec> parse_entry(JsonObject& entry, const NodeSpec& counts, const ReferenceData& ref,
                                  const GpuSpec& gpu) {
  LinkSpec proto;
  const std::string type = entry.string("type");
  const std::optional<LinkType> link_type = parse_link_type(type);
  if (!link_type)
    throw InputError(entry.where("type"), fmt::format("\"{}\" is not a link type", type),
                     "nvlink, pcie, cpu or socket");
  proto.type = *link_type;
  const std::vector<DeviceRef> a = read_ends(entry, "a", counts);
  const std::vector<DeviceRef> b = read_ends(entry, "b", counts);
  const auto pairs = pair_ends(entry, a, b);
  read_type_keys(entry, proto, ref, gpu);
  proto.latency = ref.default_latency[static_cast<std::size_t>(proto.type)];
  if (entry.has("latency_us")) {
    proto.latency_given = from_us(read_number_figure(entry, "latency_us", ref.citations, Nullable::kNo));
    proto.latency = *proto.latency_given;
  }
  if (const nlohmann::json* note = entry.optional("note")) proto.note = expect_string(*note, entry.where("note"));
  entry.finish();
  std::vector<LinkSpec> out;
  for (const auto& [x, y] : pairs) {
    LinkSpec l = proto;
    l.a = x;
    l.b = y;
    check_ends(l, entry.where());
    out.push_back(l);
  }
  return out;
}

bool same_link(const LinkSpec& l, const LinkSpec& m) {
  return l.type == m.type && ((l.a == m.a && l.b == m.b) || (l.a == m.b && l.b == m.a));
}

}  // namespace

std::string device_name(DeviceRef d) { return fmt::format("{}{}", name(d.kind), d.index); }

DeviceRef parse_device_ref(std::string_view text, const NodeSpec& counts, const std::string& where) {
  const std::size_t digits = text.find_last_not_of("0123456789") + 1;
  const std::optional<DeviceKind> kind = parse_device_kind(text.substr(0, digits));
  int index = -1;
  const char* end = text.data() + text.size();
  const bool numeric = digits < text.size() && std::from_chars(text.data() + digits, end, index).ptr == end;
  if (!kind || *kind == DeviceKind::kNetSwitch || !numeric) {
    throw InputError(where, fmt::format("\"{}\" is not a device name", text), kDeviceNameHelp);
  }
  if (index >= counts.count(*kind)) {
    throw InputError(
        where, fmt::format("\"{}\" does not exist: node.devices has {} {}", text, counts.count(*kind), name(*kind)),
        fmt::format("{}0 to {}{}", name(*kind), name(*kind), counts.count(*kind) - 1));
  }
  return {*kind, index};
}

std::vector<LinkSpec> parse_links(JsonObject& node, const NodeSpec& counts, const ReferenceData& ref,
                                  const GpuSpec& gpu) {
  std::vector<LinkSpec> links;
  for (JsonObject& entry : node.objects("links")) {
    for (LinkSpec& l : parse_entry(entry, counts, ref, gpu)) {
      for (const LinkSpec& earlier : links) {
        if (same_link(l, earlier)) {
          throw InputError(
              entry.where(),
              fmt::format("joins {} and {} by {} a second time", device_name(l.a), device_name(l.b), name(l.type)),
              "one entry per pair: bundle NVLink links with \"lanes\"");
        }
      }
      links.push_back(std::move(l));
    }
  }
  return links;
}

}  // namespace commscale::hw
