#include "runtime/gpu_probes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "kernels/step_kernels.cuh"
#include "runtime/cuda/checks.hpp"
#include "runtime/cuda/handles.hpp"
#include "runtime/cuda/probe_timing.hpp"
#include "runtime/process.hpp"

namespace commscale {
namespace {

class CudaProbes final : public GpuProbes {
 public:
  CudaProbes(Bytes pool, bool tf32) : bytes_(pool.count()), gemm_(tf32) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes_) != cudaSuccess) {
      (void)cudaGetLastError();
      throw RuntimeFailure(fmt::format("allocating {:.1f} GiB of GPU memory for the probes failed on {}",
                                       pool.gib(), process_identity()));
    }
    pool_ = static_cast<std::byte*>(p);
    kernels::launch_fill_random(pool_, bytes_, 7u, stream_.get());
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }
  ~CudaProbes() override { CUDA_CHECK_NOTHROW(cudaFree(pool_)); }
  CudaProbes(const CudaProbes&) = delete;
  CudaProbes& operator=(const CudaProbes&) = delete;

  Seconds gemm(const Gemm& g, int repetitions) override {
    return median_gemm_time(gemm_, g, pool_, bytes_, stream_.get(), repetitions);
  }

  CallWindow gemm_within(const Gemm& g, int repetitions, Seconds limit) override {
    return calls_within(rotating_gemm_call(gemm_, g, pool_, bytes_, stream_.get()), stream_.get(), repetitions, limit);
  }

  Seconds memory(Bytes bytes, int repetitions) override {
    const std::uint64_t half = (bytes.count() / 2 + 255) / 256 * 256;
    const std::uint64_t sets = std::max<std::uint64_t>(1, bytes_ / (2 * half));
    return median_call_time(
        [&](int i) {
          std::byte* in = pool_ + (static_cast<std::uint64_t>(i) % sets) * 2 * half;
          kernels::launch_memory_kernel(MemoryKernelKind::kResidual, in, half, in + half, half, stream_.get());
        },
        stream_.get(), repetitions);
  }

  void heat(Seconds at_least) override {
    const Gemm heater = make_gemm(8192, 8192, 8192, 1, DataType::kBFloat16);
    if (heater_call_.value() <= 0) heater_call_ = gemm(heater, 3);
    const double calls = std::ceil(at_least.value() / heater_call_.value());
    (void)gemm(heater, static_cast<int>(std::clamp(calls, 1.0, 10000.0)));
  }

  [[nodiscard]] std::string describe(const Gemm& g) const override { return gemm_.describe(g); }

 private:
  std::uint64_t bytes_;
  std::byte* pool_ = nullptr;
  CudaStream stream_;
  CublasLtGemm gemm_;
  Seconds heater_call_{0.0};
};

}  // namespace

std::unique_ptr<GpuProbes> make_gpu_probes(Bytes pool, bool tf32) { return std::make_unique<CudaProbes>(pool, tf32); }

}  // namespace commscale
