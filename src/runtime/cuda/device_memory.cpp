#include "runtime/cuda/device_memory.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/size.hpp"

namespace commscale {

DeviceMemory::DeviceMemory(int device, Bytes size, const std::string& what) : size_(size), device_(device) {
  const ScopedDevice on(device);
  void* data = nullptr;
  const cudaError_t rc = cudaMalloc(&data, std::max<std::uint64_t>(size.count(), 1));
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    throw RuntimeFailure(fmt::format("cannot allocate {} of GPU memory for the {} on device {}: {} ({} of {} free)",
                                     format_size(size), what, device, cudaGetErrorString(rc),
                                     format_size(Bytes(free_bytes)), format_size(Bytes(total_bytes))));
  }
  data_ = static_cast<std::byte*>(data);
}

PinnedMemory::PinnedMemory(Bytes size, const std::string& what) : size_(size) {
  void* data = nullptr;
  const cudaError_t rc =
      cudaHostAlloc(&data, std::max<std::uint64_t>(size.count(), 1), cudaHostAllocPortable | cudaHostAllocMapped);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    throw RuntimeFailure(fmt::format("cannot allocate {} of pinned host memory for the {}: {}", format_size(size), what,
                                     cudaGetErrorString(rc)));
  }
  data_ = static_cast<std::byte*>(data);
}

PeerAccessSet::~PeerAccessSet() {
  for (const auto& [device, peer] : enabled_) {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) continue;
    if (cudaSetDevice(device) == cudaSuccess) CUDA_CHECK_NOTHROW(cudaDeviceDisablePeerAccess(peer));
    CUDA_CHECK_NOTHROW(cudaSetDevice(previous));
  }
}

std::string PeerAccessSet::enable(int device, int peer) {
  const ScopedDevice on(device);
  const cudaError_t rc = cudaDeviceEnablePeerAccess(peer, 0);
  if (rc == cudaSuccess) {
    enabled_.emplace_back(device, peer);
    return {};
  }
  (void)cudaGetLastError();  // a refusal is an answer, not a failure of the process
  if (rc == cudaErrorPeerAccessAlreadyEnabled) return {};
  return fmt::format("cudaDeviceEnablePeerAccess({} -> {}) returned {} ({})", device, peer, cudaGetErrorName(rc),
                     cudaGetErrorString(rc));
}

}  // namespace commscale
