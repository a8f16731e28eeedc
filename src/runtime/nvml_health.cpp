#include "runtime/nvml_health.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace commscale {
namespace {

// nvml.h is absent where commscale is built: the types passed are declared as nvml.h (CUDA 12 and
// 13) declares them. Enums are int-sized; handles are opaque pointers.
using Ret = int;
using Dev = void*;
constexpr Ret kSuccess = 0;
constexpr Ret kInsufficientSize = 7;
constexpr int kClockSm = 1;                       // NVML_CLOCK_SM
constexpr int kTemperatureGpu = 0;                // NVML_TEMPERATURE_GPU
constexpr int kErrorCorrected = 0;                // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int kErrorUncorrected = 1;              // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatile = 0;                      // NVML_VOLATILE_ECC
constexpr int kAggregate = 1;                     // NVML_AGGREGATE_ECC
constexpr unsigned long long kEventXid = 0x8ULL;  // nvmlEventTypeXidCriticalError

struct EventData {  // nvmlEventData_t
  Dev device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

template <class F>
F resolve(const NvmlLibrary& nvml, const char* name) {
  return reinterpret_cast<F>(nvml.symbol(name));
}

}  // namespace

struct NvmlHealth::Api {
  Ret (*clock)(Dev, int, unsigned int*) = nullptr;
  Ret (*max_clock)(Dev, int, unsigned int*) = nullptr;
  Ret (*reasons)(Dev, unsigned long long*) = nullptr;
  Ret (*pstate)(Dev, int*) = nullptr;
  Ret (*power)(Dev, unsigned int*) = nullptr;
  Ret (*power_limit)(Dev, unsigned int*) = nullptr;
  Ret (*temperature)(Dev, int, unsigned int*) = nullptr;
  Ret (*curr_gen)(Dev, unsigned int*) = nullptr;
  Ret (*curr_width)(Dev, unsigned int*) = nullptr;
  Ret (*ecc_mode)(Dev, int*, int*) = nullptr;
  Ret (*ecc_total)(Dev, int, int, unsigned long long*) = nullptr;
  Ret (*retired)(Dev, int, unsigned int*, unsigned long long*) = nullptr;
  Ret (*retired_pending)(Dev, int*) = nullptr;
  Ret (*remapped)(Dev, unsigned int*, unsigned int*, unsigned int*, unsigned int*) = nullptr;
  Ret (*event_set_create)(void**) = nullptr;
  Ret (*register_events)(Dev, unsigned long long, void*) = nullptr;
  Ret (*event_wait)(void*, EventData*, unsigned int) = nullptr;
  Ret (*event_set_free)(void*) = nullptr;

  explicit Api(const NvmlLibrary& n) {
    clock = resolve<decltype(clock)>(n, "nvmlDeviceGetClockInfo");
    max_clock = resolve<decltype(max_clock)>(n, "nvmlDeviceGetMaxClockInfo");
    reasons = resolve<decltype(reasons)>(n, "nvmlDeviceGetCurrentClocksEventReasons");
    if (reasons == nullptr) reasons = resolve<decltype(reasons)>(n, "nvmlDeviceGetCurrentClocksThrottleReasons");
    pstate = resolve<decltype(pstate)>(n, "nvmlDeviceGetPerformanceState");
    power = resolve<decltype(power)>(n, "nvmlDeviceGetPowerUsage");
    power_limit = resolve<decltype(power_limit)>(n, "nvmlDeviceGetEnforcedPowerLimit");
    temperature = resolve<decltype(temperature)>(n, "nvmlDeviceGetTemperature");
    curr_gen = resolve<decltype(curr_gen)>(n, "nvmlDeviceGetCurrPcieLinkGeneration");
    curr_width = resolve<decltype(curr_width)>(n, "nvmlDeviceGetCurrPcieLinkWidth");
    ecc_mode = resolve<decltype(ecc_mode)>(n, "nvmlDeviceGetEccMode");
    ecc_total = resolve<decltype(ecc_total)>(n, "nvmlDeviceGetTotalEccErrors");
    retired = resolve<decltype(retired)>(n, "nvmlDeviceGetRetiredPages");
    retired_pending = resolve<decltype(retired_pending)>(n, "nvmlDeviceGetRetiredPagesPendingStatus");
    remapped = resolve<decltype(remapped)>(n, "nvmlDeviceGetRemappedRows");
    event_set_create = resolve<decltype(event_set_create)>(n, "nvmlEventSetCreate");
    register_events = resolve<decltype(register_events)>(n, "nvmlDeviceRegisterEvents");
    event_wait = resolve<decltype(event_wait)>(n, "nvmlEventSetWait_v2");
    event_set_free = resolve<decltype(event_set_free)>(n, "nvmlEventSetFree");
  }

  // A query's value, nullopt where this NVML lacks the call or the GPU does not answer it.
  template <class T>
  static std::optional<T> get(Ret (*f)(Dev, T*), Dev d) {
    T value{};
    if (f == nullptr || f(d, &value) != kSuccess) return std::nullopt;
    return value;
  }
  template <class T>
  static std::optional<T> get(Ret (*f)(Dev, int, T*), Dev d, int a) {
    T value{};
    if (f == nullptr || f(d, a, &value) != kSuccess) return std::nullopt;
    return value;
  }
  template <class T>
  static std::optional<T> get(Ret (*f)(Dev, int, int, T*), Dev d, int a, int b) {
    T value{};
    if (f == nullptr || f(d, a, b, &value) != kSuccess) return std::nullopt;
    return value;
  }
};

std::string describe_clock_reasons(std::uint64_t reasons) {
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 9> kNames = {{
      {kClockIdle, "idle"},
      {kClockApplicationsSetting, "application clock setting"},
      {kClockSwPowerCap, "sw power cap"},
      {kClockHwSlowdown, "HW SLOWDOWN"},
      {kClockSyncBoost, "sync boost"},
      {kClockSwThermal, "SW THERMAL SLOWDOWN"},
      {kClockHwThermal, "HW THERMAL SLOWDOWN"},
      {kClockHwPowerBrake, "HW POWER BRAKE"},
      {kClockDisplaySetting, "display clock setting"},
  }};
  std::string text;
  for (const auto& [bit, label] : kNames) {
    if ((reasons & bit) != 0) text += fmt::format("{}{}", text.empty() ? "" : ", ", label);
  }
  return text.empty() ? "none" : text;
}

NvmlHealth::NvmlHealth(std::unique_ptr<NvmlLibrary> nvml, void* device, std::unique_ptr<Api> api)
    : nvml_(std::move(nvml)), device_(device), api_(std::move(api)) {}

NvmlHealth::~NvmlHealth() {
  if (events_ != nullptr && api_->event_set_free != nullptr) api_->event_set_free(events_);
}

std::unique_ptr<NvmlHealth> NvmlHealth::open(const std::string& pci_bus_id, std::string* why) {
  std::unique_ptr<NvmlLibrary> nvml = NvmlLibrary::open(why);
  if (nvml == nullptr) return nullptr;
  void* device = nvml->device_handle(pci_bus_id);
  if (device == nullptr) {
    *why = fmt::format("NVML knows no GPU at {}", pci_bus_id);
    return nullptr;
  }
  auto api = std::make_unique<Api>(*nvml);
  std::unique_ptr<NvmlHealth> h(new NvmlHealth(std::move(nvml), device, std::move(api)));
  h->facts_ = h->nvml_->gpu(pci_bus_id);
  // XIDs are events: NVML reports those that happen after registration, so watch from the start.
  void* set = nullptr;
  if (h->api_->event_set_create != nullptr && h->api_->register_events != nullptr && h->api_->event_wait != nullptr &&
      h->api_->event_set_create(&set) == kSuccess) {
    if (h->api_->register_events(device, kEventXid, set) == kSuccess) {
      h->events_ = set;
    } else if (h->api_->event_set_free != nullptr) {
      h->api_->event_set_free(set);
    }
  }
  return h;
}

std::optional<int> NvmlHealth::max_sm_clock_MHz() const {
  const auto v = Api::get(api_->max_clock, device_, kClockSm);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

std::optional<double> NvmlHealth::power_limit_W() const {
  const auto v = Api::get(api_->power_limit, device_);
  return v ? std::optional<double>(*v / 1000.0) : std::nullopt;
}

GpuLoadSample NvmlHealth::sample() const {
  GpuLoadSample s;
  if (const auto v = Api::get(api_->clock, device_, kClockSm)) s.sm_clock_MHz = static_cast<int>(*v);
  if (const auto v = Api::get(api_->reasons, device_)) s.clock_reasons = *v;
  if (const auto v = Api::get(api_->power, device_)) s.power_W = *v / 1000.0;
  if (const auto v = Api::get(api_->temperature, device_, kTemperatureGpu)) {
    s.temperature_C = static_cast<int>(*v);
  }
  if (const auto v = Api::get(api_->pstate, device_); v && *v <= 15) s.pstate = *v;  // 32: unknown
  s.pcie_current.generation = static_cast<int>(Api::get(api_->curr_gen, device_).value_or(0));
  s.pcie_current.width = static_cast<int>(Api::get(api_->curr_width, device_).value_or(0));
  return s;
}

GpuErrorState NvmlHealth::errors() const {
  GpuErrorState e;
  int current = 0;
  int pending = 0;
  if (api_->ecc_mode != nullptr && api_->ecc_mode(device_, &current, &pending) == kSuccess)
    e.ecc_enabled = current == 1;
  e.ecc_uncorrected_volatile = Api::get(api_->ecc_total, device_, kErrorUncorrected, kVolatile);
  e.ecc_corrected_volatile = Api::get(api_->ecc_total, device_, kErrorCorrected, kVolatile);
  e.ecc_uncorrected_aggregate = Api::get(api_->ecc_total, device_, kErrorUncorrected, kAggregate);
  for (int cause : {0, 1}) {  // NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, _DOUBLE_BIT_ECC_ERROR
    unsigned int count = 0;   // 0 asks for the count only
    if (api_->retired == nullptr) break;
    const Ret rc = api_->retired(device_, cause, &count, nullptr);
    if (rc != kSuccess && rc != kInsufficientSize) continue;
    (cause == 0 ? e.retired_pages_single_bit : e.retired_pages_double_bit) = static_cast<int>(count);
  }
  if (const auto v = Api::get(api_->retired_pending, device_)) e.retirement_pending = *v == 1;
  unsigned int corr = 0;
  unsigned int unc = 0;
  unsigned int is_pending = 0;
  unsigned int failed = 0;
  if (api_->remapped != nullptr && api_->remapped(device_, &corr, &unc, &is_pending, &failed) == kSuccess) {
    e.remapped_rows_correctable = static_cast<int>(corr);
    e.remapped_rows_uncorrectable = static_cast<int>(unc);
    e.remap_pending = is_pending != 0;
    e.remap_failed = failed != 0;
  }
  return e;
}

std::optional<std::vector<std::uint64_t>> NvmlHealth::xid_events() {
  if (events_ == nullptr) return std::nullopt;
  std::vector<std::uint64_t> xids;
  for (int guard = 0; guard < 1000; ++guard) {
    EventData data{};
    if (api_->event_wait(events_, &data, 0) != kSuccess) break;  // kTimeout: no event left
    if ((data.event_type & kEventXid) != 0) xids.push_back(data.event_data);
  }
  return xids;
}

}  // namespace commscale
