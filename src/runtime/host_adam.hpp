#pragma once

// ZeRO-Offload's optimizer step on the host (MemoryKernelKind::kHostOptimizer, program/op.hpp), as both step
// engines run it: the rank's 16-bit gradient shard, copied to host memory, is widened into an fp32 gradient,
// AdamW updates the fp32 master weights and both moments, and the weights are narrowed back to 16 bits for the
// copy to the device. That is DeepSpeed's CPU Adam (csrc/adam/cpu_adam_impl.cpp, adamw_mode, its
// `ds_adam_step_plus_copy`): per parameter it reads the gradient, the master and the two moments (16 bytes)
// and writes the master, the moments (12 bytes) and the 16-bit weight, the 28 bytes a parameter the predictor
// prices it at (predict/compute_model.cpp).
//
// The state (master, two moments, the fp32 gradient: 16 bytes a parameter, what the memory model counts on the
// host) is allocated once, when the engine is made. The values are a training run's stand-ins, as the pool's
// are: they are updated for real, with the arithmetic and memory traffic of the real update. Pure C++ (no CUDA,
// no MPI), so that the CUDA engine's host function can run it and unit tests can check it by hand.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "core/dtype.hpp"  // float_to_bf16, bf16_to_float

namespace commscale {

// AdamW (Loshchilov & Hutter, arXiv 1711.05101) with bias correction, as torch.optim.AdamW; GPT-3's betas.
struct AdamSettings {
  float lr = 1e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

// One AdamW step (`step` counts from 1) on n parameters:
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
//   p = p - lr wd p - (lr / (1 - b1^step)) m / (sqrt(v) / sqrt(1 - b2^step) + eps).
inline void adam_update(const AdamSettings& s, std::int64_t step, float* master, float* m, float* v, const float* g,
                        std::size_t n) noexcept {
  const double t = static_cast<double>(step);
  const auto step_size = static_cast<float>(s.lr / (1.0 - std::pow(static_cast<double>(s.beta1), t)));
  const auto inv_sqrt_correction2 =
      static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(static_cast<double>(s.beta2), t)));
  const float decay = s.lr * s.weight_decay;
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = s.beta1 * m[i] + (1.0f - s.beta1) * g[i];
    v[i] = s.beta2 * v[i] + (1.0f - s.beta2) * g[i] * g[i];
    const float denom = std::sqrt(v[i]) * inv_sqrt_correction2 + s.eps;
    master[i] = master[i] - decay * master[i] - step_size * m[i] / denom;
  }
}

// Gradients and weights as the device holds them: `width` bytes an element, 2 read as bfloat16 with
// core/dtype.hpp's conversions (an fp16 model's bytes too: the same traffic and arithmetic, other values), 4 as
// fp32; any other width moves its bytes and carries an fp32 in its first four.
inline void widen(const std::byte* in, std::size_t width, float* out, std::size_t n) noexcept {
  if (width == 2) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t h = 0;
      std::memcpy(&h, in + 2 * i, 2);
      out[i] = bf16_to_float(h);
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) std::memcpy(out + i, in + width * i, sizeof(float));
}
inline void narrow(const float* in, std::byte* out, std::size_t width, std::size_t n) noexcept {
  if (width == 2) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t h = float_to_bf16(in[i]);
      std::memcpy(out + 2 * i, &h, 2);
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) std::memcpy(out + width * i, in + i, sizeof(float));
}

// The host optimizer's state for `parameters` parameters; each update runs on `threads` threads (the caller's
// and threads - 1 more, each a contiguous share of the parameters).
class HostAdam {
 public:
  explicit HostAdam(std::uint64_t parameters, int threads = 1, AdamSettings settings = {})
      : settings_(settings),
        threads_(std::max(1, threads)),
        n_(parameters),
        master_(std::make_unique<float[]>(parameters)),
        m_(std::make_unique<float[]>(parameters)),
        v_(std::make_unique<float[]>(parameters)),
        grad_(std::make_unique<float[]>(parameters)) {
    // make_unique value-initialises: every page is touched here, not in the first step.
    std::fill(master_.get(), master_.get() + n_, 0.02f);
  }

  [[nodiscard]] std::uint64_t parameters() const noexcept { return n_; }
  [[nodiscard]] int threads() const noexcept { return threads_; }
  [[nodiscard]] const float* master() const noexcept { return master_.get(); }
  [[nodiscard]] const float* first_moment() const noexcept { return m_.get(); }
  [[nodiscard]] const float* second_moment() const noexcept { return v_.get(); }

  // Step `step` (from 1) of parameters [first, first + count): widens `count` gradients of `width` bytes at
  // `gradients` into the fp32 gradient, updates, and narrows the master weights into `weights`.
  void update(std::uint64_t first, std::uint64_t count, std::int64_t step, const std::byte* gradients,
              std::byte* weights, std::size_t width) noexcept {
    count = first >= n_ ? 0 : std::min(count, n_ - first);
    const auto part = [&](std::uint64_t begin, std::uint64_t end) {
      const std::uint64_t p = first + begin;
      const std::size_t n = static_cast<std::size_t>(end - begin);
      widen(gradients + begin * width, width, grad_.get() + p, n);
      adam_update(settings_, step, master_.get() + p, m_.get() + p, v_.get() + p, grad_.get() + p, n);
      narrow(master_.get() + p, weights + begin * width, width, n);
    };
    // Shares of whole cache lines (16 fp32), at least 64 Ki parameters each: a thread costs tens of microseconds.
    const std::uint64_t most = (count + 65535) / 65536;
    const std::uint64_t threads = std::min<std::uint64_t>(static_cast<std::uint64_t>(threads_), most);
    if (threads <= 1) {
      part(0, count);
      return;
    }
    const std::uint64_t share = (count / threads + 15) / 16 * 16;
    std::vector<std::thread> helpers;
    std::uint64_t begin = share;
    try {
      helpers.reserve(threads - 1);
      for (; begin < count && helpers.size() + 1 < threads; begin += share) {
        helpers.emplace_back(part, begin, std::min(count, begin + share));
      }
    } catch (const std::exception&) {  // no thread to be had: the caller does the rest
    }
    if (begin < count) part(begin, count);
    part(0, std::min(count, share));
    for (std::thread& t : helpers) t.join();
  }

 private:
  AdamSettings settings_;
  int threads_ = 1;
  std::uint64_t n_ = 0;
  std::unique_ptr<float[]> master_;
  std::unique_ptr<float[]> m_;
  std::unique_ptr<float[]> v_;
  std::unique_ptr<float[]> grad_;
};

}  // namespace commscale
