#include <dlfcn.h>

#include <array>

#include "runtime/gpu.hpp"

namespace commscale {
namespace {

// The few NVML entry points we use, resolved by name. Their C signatures are stable across NVML versions.
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlSystemGetDriverVersion = int (*)(char*, unsigned int);

}  // namespace

std::string nvml_driver_version() {
  void* nvml = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml == nullptr) return {};
  std::string version;
  const auto init = reinterpret_cast<NvmlInit>(::dlsym(nvml, "nvmlInit_v2"));
  const auto shutdown = reinterpret_cast<NvmlShutdown>(::dlsym(nvml, "nvmlShutdown"));
  const auto get = reinterpret_cast<NvmlSystemGetDriverVersion>(::dlsym(nvml, "nvmlSystemGetDriverVersion"));
  if (init != nullptr && shutdown != nullptr && get != nullptr && init() == 0) {
    std::array<char, 96> text{};
    if (get(text.data(), static_cast<unsigned int>(text.size())) == 0) version = text.data();
    shutdown();
  }
  ::dlclose(nvml);
  return version;
}

}  // namespace commscale
