#include "runtime/sm_hog.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/sm_hog.cuh"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/device_memory.hpp"
#include "runtime/cuda/handles.hpp"
#include "runtime/process.hpp"

namespace commscale {
namespace {

constexpr std::uint64_t kHoldAtMostNs = 120'000'000'000ULL;  // a host that never releases cannot hang the GPU
constexpr auto kStartWithin = std::chrono::seconds(10);

class CudaSmHog final : public SmHog {
 public:
  explicit CudaSmHog(double fraction)
      : prop_(properties()), flags_(Bytes((1 + prop_.multiProcessorCount) * sizeof(int)), "SM hog's flags") {
    const cudaDeviceProp& prop = prop_;
    total_ = prop.multiProcessorCount;
    held_ = std::clamp(static_cast<int>(std::lround(fraction * total_)), 1, total_);
    // More than half an SM's shared memory each: two never fit on one SM, and nothing that needs
    // shared memory (every cuBLASLt GEMM) fits beside one.
    const std::size_t shared = prop.sharedMemPerBlockOptin;
    for (int i = 0; i <= total_; ++i) release()[i] = 0;  // the release flag, then a started flag per block
    CUDA_CHECK(kernels::launch_sm_hog(static_cast<unsigned int>(held_), shared, release(), started(), kHoldAtMostNs,
                                      stream_.get()));
    const auto deadline = std::chrono::steady_clock::now() + kStartWithin;
    while (started_blocks() < held_) {
      if (std::chrono::steady_clock::now() > deadline) {
        release()[0] = 1;
        throw RuntimeFailure(fmt::format("--inject-sm-hog: only {} of {} blocks started within 10 s on {}",
                                         started_blocks(), held_, process_identity()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~CudaSmHog() override {
    release()[0] = 1;
    CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream_.get()));
  }
  CudaSmHog(const CudaSmHog&) = delete;
  CudaSmHog& operator=(const CudaSmHog&) = delete;

  [[nodiscard]] int sms_held() const noexcept override { return held_; }
  [[nodiscard]] int sms_total() const noexcept override { return total_; }

 private:
  static cudaDeviceProp properties() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    return prop;
  }
  [[nodiscard]] volatile int* release() const noexcept { return reinterpret_cast<volatile int*>(flags_.data()); }
  [[nodiscard]] volatile int* started() const noexcept { return release() + 1; }
  [[nodiscard]] int started_blocks() const noexcept {
    int n = 0;
    for (int b = 0; b < held_; ++b) n += started()[b];
    return n;
  }

  cudaDeviceProp prop_;
  PinnedMemory flags_;
  CudaStream stream_;
  int total_ = 0;
  int held_ = 0;
};

}  // namespace

std::unique_ptr<SmHog> hold_sms(double fraction) { return std::make_unique<CudaSmHog>(fraction); }

}  // namespace commscale
