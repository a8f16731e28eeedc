#include "runtime/nvml_library.hpp"

#include <dlfcn.h>

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "hw/topo_matrix.hpp"

namespace commscale {
namespace {

// nvml.h is absent where commscale is built, so the few types we pass are declared here, laid out as
// nvml.h (CUDA 12 and 13) declares them. C enums are int-sized; nvmlDevice_t is an opaque pointer.
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;

constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlErrorNotSupported = 3;
constexpr unsigned int kMaxNvlinks = 36;              // NVML_NVLINK_MAX_LINKS (18 in NVML before CUDA 12.8)
constexpr unsigned int kFieldNvlinkSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
constexpr unsigned int kFieldNvlinkGetSpeed = 164;    // NVML_FI_DEV_NVLINK_GET_SPEED, per link (scopeId)

struct NvmlPciInfo {  // nvmlPciInfo_t
  std::array<char, 16> bus_id_legacy;
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  std::array<char, 32> bus_id;
};
static_assert(sizeof(NvmlPciInfo) == 68);

union NvmlValue {  // nvmlValue_t
  double d;
  int si;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  unsigned short us;
};

struct NvmlFieldValue {  // nvmlFieldValue_t
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_us;
  int value_type;  // nvmlValueType_t
  NvmlReturn nvml_return;
  NvmlValue value;
};
static_assert(sizeof(NvmlFieldValue) == 40);

template <class F>
F resolve(void* handle, const char* name) {
  return reinterpret_cast<F>(::dlsym(handle, name));
}

std::string text_of(const char* data, std::size_t capacity) { return std::string(data, ::strnlen(data, capacity)); }

std::optional<double> field_number(const NvmlFieldValue& f) {
  if (f.nvml_return != kNvmlSuccess) return std::nullopt;
  switch (f.value_type) {
    case 0:
      return f.value.d;
    case 1:
      return static_cast<double>(f.value.ui);
    case 2:
      return static_cast<double>(f.value.ul);
    case 3:
      return static_cast<double>(f.value.ull);
    case 4:
      return static_cast<double>(f.value.sll);
    case 5:
      return static_cast<double>(f.value.si);
    case 6:
      return static_cast<double>(f.value.us);
    default:
      return std::nullopt;
  }
}

}  // namespace

struct NvmlLibrary::Api {
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned int) = nullptr;
  NvmlReturn (*handle_by_bus)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*max_gen)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*max_width)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*curr_gen)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*curr_width)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*nvlink_state)(NvmlDevice, unsigned int, int*) = nullptr;
  NvmlReturn (*nvlink_remote_pci)(NvmlDevice, unsigned int, NvmlPciInfo*) = nullptr;
  NvmlReturn (*nvlink_remote_type)(NvmlDevice, unsigned int, int*) = nullptr;
  NvmlReturn (*field_values)(NvmlDevice, int, NvmlFieldValue*) = nullptr;
  NvmlReturn (*common_ancestor)(NvmlDevice, NvmlDevice, int*) = nullptr;
  NvmlReturn (*p2p_status)(NvmlDevice, NvmlDevice, int, int*) = nullptr;

  [[nodiscard]] NvmlDevice device(const std::string& bus_id) const {
    NvmlDevice d = nullptr;
    if (handle_by_bus == nullptr || handle_by_bus(bus_id.c_str(), &d) != kNvmlSuccess) return nullptr;
    return d;
  }
  [[nodiscard]] static int query(NvmlReturn (*f)(NvmlDevice, unsigned int*), NvmlDevice d) {
    unsigned int value = 0;
    return f != nullptr && f(d, &value) == kNvmlSuccess ? static_cast<int>(value) : 0;
  }
  [[nodiscard]] std::optional<double> field(NvmlDevice d, unsigned int id, unsigned int scope) const {
    if (field_values == nullptr) return std::nullopt;
    NvmlFieldValue f{};
    f.field_id = id;
    f.scope_id = scope;
    if (field_values(d, 1, &f) != kNvmlSuccess) return std::nullopt;
    return field_number(f);
  }
  [[nodiscard]] NvlinkInfo nvlink(NvmlDevice d, unsigned int link, bool active) const;
};

NvlinkInfo NvmlLibrary::Api::nvlink(NvmlDevice d, unsigned int link, bool active) const {
  NvlinkInfo info;
  info.link = static_cast<int>(link);
  info.active = active;
  if (!active) return info;
  NvmlPciInfo pci{};
  if (nvlink_remote_pci != nullptr && nvlink_remote_pci(d, link, &pci) == kNvmlSuccess) {
    info.remote_pci_bus_id = normalize_pci_bus_id(text_of(pci.bus_id.data(), pci.bus_id.size()));
  }
  int type = -1;
  if (nvlink_remote_type != nullptr && nvlink_remote_type(d, link, &type) == kNvmlSuccess) {
    // nvmlIntNvLinkDeviceType_t: 0 GPU, 1 IBM NPU, 2 switch, 0xFF unknown.
    info.remote = type == 0   ? NvlinkRemote::kGpu
                  : type == 2 ? NvlinkRemote::kSwitch
                  : type == 1 ? NvlinkRemote::kOther
                              : NvlinkRemote::kUnknown;
  }
  return info;
}

NvmlLibrary::NvmlLibrary(void* handle, std::unique_ptr<Api> api) : handle_(handle), api_(std::move(api)) {}

NvmlLibrary::~NvmlLibrary() {
  if (api_->shutdown != nullptr) api_->shutdown();
  ::dlclose(handle_);
}

std::unique_ptr<NvmlLibrary> NvmlLibrary::open(std::string* why) {
  void* handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    *why = fmt::format("libnvidia-ml.so.1 cannot be loaded: {}", error != nullptr ? error : "not found");
    return nullptr;
  }
  const auto init = resolve<NvmlReturn (*)()>(handle, "nvmlInit_v2");
  const auto error_string = resolve<const char* (*)(NvmlReturn)>(handle, "nvmlErrorString");
  const NvmlReturn rc = init != nullptr ? init() : -1;
  if (rc != kNvmlSuccess) {
    *why = init == nullptr
               ? "libnvidia-ml.so.1 has no nvmlInit_v2"
               : fmt::format("nvmlInit_v2 failed: {}", error_string != nullptr ? error_string(rc) : "error");
    ::dlclose(handle);
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  api->shutdown = resolve<decltype(api->shutdown)>(handle, "nvmlShutdown");
  api->driver_version = resolve<decltype(api->driver_version)>(handle, "nvmlSystemGetDriverVersion");
  api->handle_by_bus = resolve<decltype(api->handle_by_bus)>(handle, "nvmlDeviceGetHandleByPciBusId_v2");
  api->max_gen = resolve<decltype(api->max_gen)>(handle, "nvmlDeviceGetMaxPcieLinkGeneration");
  api->max_width = resolve<decltype(api->max_width)>(handle, "nvmlDeviceGetMaxPcieLinkWidth");
  api->curr_gen = resolve<decltype(api->curr_gen)>(handle, "nvmlDeviceGetCurrPcieLinkGeneration");
  api->curr_width = resolve<decltype(api->curr_width)>(handle, "nvmlDeviceGetCurrPcieLinkWidth");
  api->nvlink_state = resolve<decltype(api->nvlink_state)>(handle, "nvmlDeviceGetNvLinkState");
  api->nvlink_remote_pci = resolve<decltype(api->nvlink_remote_pci)>(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  api->nvlink_remote_type = resolve<decltype(api->nvlink_remote_type)>(handle, "nvmlDeviceGetNvLinkRemoteDeviceType");
  api->field_values = resolve<decltype(api->field_values)>(handle, "nvmlDeviceGetFieldValues");
  api->common_ancestor = resolve<decltype(api->common_ancestor)>(handle, "nvmlDeviceGetTopologyCommonAncestor");
  api->p2p_status = resolve<decltype(api->p2p_status)>(handle, "nvmlDeviceGetP2PStatus");
  return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(handle, std::move(api)));
}

std::string NvmlLibrary::driver_version() const {
  std::array<char, 96> text{};
  if (api_->driver_version == nullptr ||
      api_->driver_version(text.data(), static_cast<unsigned int>(text.size())) != kNvmlSuccess) {
    return {};
  }
  return text_of(text.data(), text.size());
}

NvmlGpuFacts NvmlLibrary::gpu(const std::string& pci_bus_id) const {
  NvmlGpuFacts facts;
  const NvmlDevice d = api_->device(pci_bus_id);
  if (d == nullptr) return facts;
  facts.found = true;
  facts.pcie_max = {Api::query(api_->max_gen, d), Api::query(api_->max_width, d)};
  facts.pcie_current = {Api::query(api_->curr_gen, d), Api::query(api_->curr_width, d)};
  for (unsigned int link = 0; link < kMaxNvlinks && api_->nvlink_state != nullptr; ++link) {
    int state = 0;
    const NvmlReturn rc = api_->nvlink_state(d, link, &state);
    if (rc == kNvmlErrorNotSupported) break;  // no NVLink on this GPU
    if (rc != kNvmlSuccess) continue;         // a link number this GPU does not have
    facts.nvlinks.push_back(api_->nvlink(d, link, state == 1));
  }
  facts.nvlink_speed_MBps = api_->field(d, kFieldNvlinkSpeedCommon, 0);
  for (const NvlinkInfo& l : facts.nvlinks) {
    if (facts.nvlink_speed_MBps || !l.active) continue;
    facts.nvlink_speed_MBps = api_->field(d, kFieldNvlinkGetSpeed, static_cast<unsigned int>(l.link));
  }
  if (facts.nvlink_speed_MBps && *facts.nvlink_speed_MBps <= 0.0) facts.nvlink_speed_MBps.reset();
  return facts;
}

void* NvmlLibrary::symbol(const char* name) const { return ::dlsym(handle_, name); }

void* NvmlLibrary::device_handle(const std::string& pci_bus_id) const { return api_->device(pci_bus_id); }

PcieRelation NvmlLibrary::common_ancestor(const std::string& bus_a, const std::string& bus_b) const {
  const NvmlDevice a = api_->device(bus_a);
  const NvmlDevice b = api_->device(bus_b);
  int level = -1;
  if (a == nullptr || b == nullptr || api_->common_ancestor == nullptr ||
      api_->common_ancestor(a, b, &level) != kNvmlSuccess) {
    return PcieRelation::kUnknown;
  }
  // nvmlGpuTopologyLevel_t: 0 internal (one board), 10 single switch, 20 multiple, 30 host bridge, 40 node, 50 system.
  switch (level) {
    case 0:
    case 10:
      return PcieRelation::kSingleBridge;
    case 20:
      return PcieRelation::kMultipleBridges;
    case 30:
      return PcieRelation::kHostBridge;
    case 40:
      return PcieRelation::kNumaNode;
    case 50:
      return PcieRelation::kSystem;
    default:
      return PcieRelation::kUnknown;
  }
}

std::optional<bool> NvmlLibrary::nvlink_p2p(const std::string& bus_a, const std::string& bus_b) const {
  constexpr int kCapsNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
  constexpr int kStatusOk = 0;    // NVML_P2P_STATUS_OK
  const NvmlDevice a = api_->device(bus_a);
  const NvmlDevice b = api_->device(bus_b);
  int status = -1;
  if (a == nullptr || b == nullptr || api_->p2p_status == nullptr ||
      api_->p2p_status(a, b, kCapsNvlink, &status) != kNvmlSuccess) {
    return std::nullopt;
  }
  return status == kStatusOk;
}

}  // namespace commscale
