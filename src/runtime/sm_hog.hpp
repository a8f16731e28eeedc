#pragma once

// Testing (`commscale doctor --inject-sm-hog`): holds a share of the current GPU's SMs with a kernel
// that takes each one's whole shared memory, as a stray second process on the GPU would, so that the
// GEMM doctor times runs on the rest and doctor must name the GPU. Changes no setting of the machine.

#include <memory>

namespace commscale {

class SmHog {
 public:
  virtual ~SmHog() = default;  // releases the SMs and waits for the kernel to end
  [[nodiscard]] virtual int sms_held() const noexcept = 0;
  [[nodiscard]] virtual int sms_total() const noexcept = 0;
};

// Holds round(fraction x SMs) SMs (at least 1) of the current device once its blocks all run, for at
// most 120 s. Throws RuntimeFailure when they do not all start within 10 s, and in a build without
// the GPU backend.
[[nodiscard]] std::unique_ptr<SmHog> hold_sms(double fraction);

}  // namespace commscale
