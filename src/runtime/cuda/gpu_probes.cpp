#include "runtime/gpu_probes.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

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

  // FP8 GEMMs multiply finite FP8 values (kernels/step_kernels.cuh): the pool filled so once an FP8 shape comes,
  // and as before once a shape of another type follows.
  void fill_for(const Gemm& g) {
    if (is_fp8(g.dtype) == fp8_fill_) return;
    fp8_fill_ = is_fp8(g.dtype);
    kernels::launch_fill_random(pool_, bytes_, 7u, stream_.get(), fp8_fill_);
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }
  CudaProbes(const CudaProbes&) = delete;
  CudaProbes& operator=(const CudaProbes&) = delete;

  Seconds gemm(const Gemm& g, int repetitions) override {
    fill_for(g);
    return median_gemm_time(gemm_, g, pool_, bytes_, stream_.get(), repetitions);
  }

  CallWindow gemm_within(const Gemm& g, int repetitions, Seconds limit) override {
    fill_for(g);
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

  Alternation gemm_among_memory(const Gemm& g, double gemm_share, Seconds duration) override {
    // GEMMs rotate through the pool's first half, the memory kernel through its second.
    const std::uint64_t half = bytes_ / 2 / 256 * 256;
    const std::function<void(int)> gemm_call = rotating_gemm_call(gemm_, g, pool_, half, stream_.get());
    const double alone = median_call_time(gemm_call, stream_.get(), 10).value();
    std::uint64_t moved = 0;  // bytes the memory kernel moves per round (read half, write half)
    if (gemm_share < 1.0) {
      constexpr std::uint64_t kProbeBytes = 256ull << 20;
      const double bytes_per_s = static_cast<double>(kProbeBytes) / memory(Bytes(kProbeBytes), 10).value();
      const double seconds = alone * (1.0 - gemm_share) / gemm_share;
      moved = std::min<std::uint64_t>(static_cast<std::uint64_t>(seconds * bytes_per_s), half) / 512 * 512;
    }
    const std::uint64_t sets = moved > 0 ? std::max<std::uint64_t>(1, half / moved) : 1;
    const int rounds = std::clamp(static_cast<int>(duration.value() * gemm_share / alone), 20, 20000);
    std::vector<CudaEvent> marks(2 * static_cast<std::size_t>(rounds) + 1);
    for (int i = 0; i < rounds; ++i) {
      CUDA_CHECK(cudaEventRecord(marks[2 * static_cast<std::size_t>(i)].get(), stream_.get()));
      gemm_call(i);
      CUDA_CHECK(cudaEventRecord(marks[2 * static_cast<std::size_t>(i) + 1].get(), stream_.get()));
      if (moved > 0) {
        std::byte* in = pool_ + half + (static_cast<std::uint64_t>(i) % sets) * moved;
        kernels::launch_memory_kernel(MemoryKernelKind::kResidual, in, moved / 2, in + moved / 2, moved / 2,
                                      stream_.get());
      }
    }
    CUDA_CHECK(cudaEventRecord(marks.back().get(), stream_.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    std::vector<double> gemm_s;
    double busy = 0.0;
    for (int i = rounds / 2; i < rounds; ++i) {
      float ms = 0.0f;
      const auto at = 2 * static_cast<std::size_t>(i);
      CUDA_CHECK(cudaEventElapsedTime(&ms, marks[at].get(), marks[at + 1].get()));
      gemm_s.push_back(ms * 1e-3);
      busy += ms * 1e-3;
    }
    float span_ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&span_ms, marks[2 * static_cast<std::size_t>(rounds / 2)].get(), marks.back().get()));
    std::nth_element(gemm_s.begin(), gemm_s.begin() + static_cast<std::ptrdiff_t>(gemm_s.size() / 2), gemm_s.end());
    return {Seconds(gemm_s[gemm_s.size() / 2]), span_ms > 0 ? busy / (span_ms * 1e-3) : 1.0};
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
  bool fp8_fill_ = false;  // the pool holds the FP8-safe fill (fill_for)
  CudaStream stream_;
  CublasLtGemm gemm_;
  Seconds heater_call_{0.0};
};

}  // namespace

std::unique_ptr<GpuProbes> make_gpu_probes(Bytes pool, bool tf32) { return std::make_unique<CudaProbes>(pool, tf32); }

}  // namespace commscale
