#pragma once

// RAII for a process that drives several GPUs itself (topo, p2p): the current device restored on
// scope exit, device memory of a given device, pinned host memory every device can address,
// synchronisation-only events, and peer access enabled for an object's lifetime. Destruction never
// throws; failures there are reported and ignored.

#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "runtime/cuda/checks.hpp"

namespace commscale {

class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    CUDA_CHECK(cudaGetDevice(&previous_));
    CUDA_CHECK(cudaSetDevice(device));
  }
  ~ScopedDevice() { CUDA_CHECK_NOTHROW(cudaSetDevice(previous_)); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

// cudaMalloc'ed memory of one device. Throws RuntimeFailure naming `what`, the device and its free
// memory when the allocation fails.
class DeviceMemory {
 public:
  DeviceMemory(int device, Bytes size, const std::string& what);
  ~DeviceMemory() {
    if (data_ != nullptr) CUDA_CHECK_NOTHROW(cudaFree(data_));
  }
  DeviceMemory(DeviceMemory&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(other.size_), device_(other.device_) {}
  DeviceMemory& operator=(DeviceMemory&&) = delete;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] Bytes size() const noexcept { return size_; }
  [[nodiscard]] int device() const noexcept { return device_; }

 private:
  std::byte* data_ = nullptr;
  Bytes size_;
  int device_ = 0;
};

// Page-locked host memory, portable (every device may use it) and mapped (kernels may address it:
// with unified addressing the host pointer is the device pointer).
class PinnedMemory {
 public:
  PinnedMemory(Bytes size, const std::string& what);
  ~PinnedMemory() {
    if (data_ != nullptr) CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
  }
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] Bytes size() const noexcept { return size_; }

 private:
  std::byte* data_ = nullptr;
  Bytes size_;
};

// An event for ordering streams only (no timestamp, which makes records cheaper), on the current device.
class SyncEvent {
 public:
  SyncEvent() { CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~SyncEvent() {
    if (event_ != nullptr) CUDA_CHECK_NOTHROW(cudaEventDestroy(event_));
  }
  SyncEvent(SyncEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  SyncEvent& operator=(SyncEvent&&) = delete;
  SyncEvent(const SyncEvent&) = delete;
  SyncEvent& operator=(const SyncEvent&) = delete;
  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Peer access enabled by this object, disabled again when it goes.
class PeerAccessSet {
 public:
  PeerAccessSet() = default;
  ~PeerAccessSet();
  PeerAccessSet(const PeerAccessSet&) = delete;
  PeerAccessSet& operator=(const PeerAccessSet&) = delete;

  // Lets `device` address `peer`'s memory. Returns an empty string on success, else the driver's reason.
  [[nodiscard]] std::string enable(int device, int peer);

 private:
  std::vector<std::pair<int, int>> enabled_;
};

}  // namespace commscale
