#pragma once

// The one units header. Quantities that cross module borders carry their unit in their type:
// Bytes (an exact count), Seconds, GBps (1 GB = 1e9 bytes) and Flops (a count of floating-point
// operations). Binary multiples are spelled KiB/MiB/GiB (2^10, 2^20, 2^30), decimal ones KB/MB/GB.

#include <compare>
#include <cstdint>

namespace commscale {

inline constexpr std::uint64_t kKiB = 1ull << 10;
inline constexpr std::uint64_t kMiB = 1ull << 20;
inline constexpr std::uint64_t kGiB = 1ull << 30;
inline constexpr std::uint64_t kTiB = 1ull << 40;
inline constexpr double kGB = 1e9;

// An exact number of bytes.
class Bytes {
 public:
  constexpr Bytes() noexcept = default;
  constexpr explicit Bytes(std::uint64_t count) noexcept : count_(count) {}

  [[nodiscard]] constexpr std::uint64_t count() const noexcept { return count_; }
  [[nodiscard]] constexpr double gib() const noexcept { return static_cast<double>(count_) / kGiB; }

  constexpr auto operator<=>(const Bytes&) const noexcept = default;
  constexpr Bytes& operator+=(Bytes other) noexcept {
    count_ += other.count_;
    return *this;
  }
  friend constexpr Bytes operator+(Bytes a, Bytes b) noexcept { return Bytes(a.count_ + b.count_); }
  friend constexpr Bytes operator-(Bytes a, Bytes b) noexcept { return Bytes(a.count_ - b.count_); }
  friend constexpr Bytes operator*(Bytes a, std::uint64_t k) noexcept { return Bytes(a.count_ * k); }
  friend constexpr Bytes operator*(std::uint64_t k, Bytes a) noexcept { return Bytes(a.count_ * k); }
  friend constexpr Bytes operator/(Bytes a, std::uint64_t k) noexcept { return Bytes(a.count_ / k); }

 private:
  std::uint64_t count_ = 0;
};

// A real-valued quantity whose unit is its Tag. Only like quantities add; scaling is by plain numbers.
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() noexcept = default;
  constexpr explicit Quantity(double value) noexcept : value_(value) {}

  [[nodiscard]] constexpr double value() const noexcept { return value_; }

  constexpr auto operator<=>(const Quantity&) const noexcept = default;
  constexpr Quantity& operator+=(Quantity other) noexcept {
    value_ += other.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity other) noexcept {
    value_ -= other.value_;
    return *this;
  }
  friend constexpr Quantity operator+(Quantity a, Quantity b) noexcept { return Quantity(a.value_ + b.value_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) noexcept { return Quantity(a.value_ - b.value_); }
  friend constexpr Quantity operator*(Quantity a, double k) noexcept { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) noexcept { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) noexcept { return Quantity(a.value_ / k); }
  friend constexpr double operator/(Quantity a, Quantity b) noexcept { return a.value_ / b.value_; }

 private:
  double value_ = 0.0;
};

struct SecondsTag {};
struct GBpsTag {};
struct FlopsTag {};
struct FlopsPerSecondTag {};

using Seconds = Quantity<SecondsTag>;
using GBps = Quantity<GBpsTag>;  // 1e9 bytes per second
using Flops = Quantity<FlopsTag>;
using FlopsPerSecond = Quantity<FlopsPerSecondTag>;

[[nodiscard]] constexpr Seconds microseconds(double us) noexcept { return Seconds(us * 1e-6); }
[[nodiscard]] constexpr Seconds milliseconds(double ms) noexcept { return Seconds(ms * 1e-3); }
[[nodiscard]] constexpr double to_us(Seconds s) noexcept { return s.value() * 1e6; }
[[nodiscard]] constexpr double to_ms(Seconds s) noexcept { return s.value() * 1e3; }
[[nodiscard]] constexpr FlopsPerSecond tflops_per_s(double tflops) noexcept { return FlopsPerSecond(tflops * 1e12); }

// Bandwidth of moving `bytes` in `time`. Zero time gives zero bandwidth rather than infinity, so that
// an empty transfer (count 0 at tiny sizes) reports 0 GB/s as nccl-tests does.
[[nodiscard]] constexpr GBps bandwidth(Bytes bytes, Seconds time) noexcept {
  return time.value() > 0 ? GBps(static_cast<double>(bytes.count()) / kGB / time.value()) : GBps(0.0);
}
[[nodiscard]] constexpr Seconds transfer_time(Bytes bytes, GBps rate) noexcept {
  return Seconds(static_cast<double>(bytes.count()) / (rate.value() * kGB));
}
[[nodiscard]] constexpr Seconds compute_time(Flops work, FlopsPerSecond rate) noexcept {
  return Seconds(work.value() / rate.value());
}

}  // namespace commscale
