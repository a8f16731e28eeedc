#pragma once

// The data every verified collective moves, and the result each rank must see. The same functions
// run on the host (CPU backend, tests) and in the GPU fill/check kernels, so both backends verify
// against one definition. This header includes no CUDA header; under nvcc the functions are
// compiled for the device too.
//
// Input element i of rank r is a small integer drawn from a hash of (r, i, rep): in 1..8 for most
// operators, and 1 or 2 for products, so sums and products are exact in every type for the group
// sizes people run (bf16 is exact to 256, fp16 to 2048) and a misrouted chunk cannot match by
// accident. Integer types wrap as two's complement, exactly as the reduction does on the device.

#include <cstdint>

#include "core/collective.hpp"
#include "core/dtype.hpp"
#include "core/hd.hpp"

namespace commscale {

// Everything needed to generate one rank's input and to check its output. Trivially copyable: it is
// passed to kernels by value.
struct PatternSpec {
  Collective collective = Collective::kAllReduce;
  ReduceOp op = ReduceOp::kSum;
  DataType type = DataType::kFloat32;
  int nranks = 1;
  int rank = 0;
  int root = 0;
  int rep = 0;                 // check iteration: each one moves different data
  std::uint64_t count = 0;     // CollectiveLayout::count
  double rel_tolerance = 0.0;  // floating types only; see pattern_tolerance()
};

// The byte written over output buffers before a checked run: -1 for integers, NaN for floats, values
// no correct result has (for the group sizes above), so an element the collective never wrote is wrong.
inline constexpr unsigned char kPoisonByte = 0xFF;

COMMSCALE_HD inline std::uint64_t pattern_hash(std::uint64_t x) {
  // splitmix64's finalizer: every input bit affects every output bit.
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

COMMSCALE_HD inline double pattern_input(const PatternSpec& s, int rank, std::uint64_t index) {
  const std::uint64_t h = pattern_hash(index ^ (static_cast<std::uint64_t>(rank) << 40) ^
                                       (static_cast<std::uint64_t>(s.rep) << 56) ^ 0x5DEECE66Dull);
  if (s.op == ReduceOp::kProd && takes_reduce_op(s.collective)) return (h & 7) == 0 ? 2.0 : 1.0;
  return static_cast<double>(1 + (h & 7));
}

// Rounds an integer result to the type's width with two's-complement wrap-around.
COMMSCALE_HD inline double pattern_wrap(DataType type, double value) {
  const auto v = static_cast<std::int64_t>(value);
  if (type == DataType::kInt8) return static_cast<double>(static_cast<std::int8_t>(v));
  if (type == DataType::kInt32) return static_cast<double>(static_cast<std::int32_t>(v));
  return value;
}

// The reduction over all ranks of input element `index`, in the type's arithmetic.
COMMSCALE_HD inline double pattern_reduce(const PatternSpec& s, std::uint64_t index) {
  double acc = pattern_input(s, 0, index);
  for (int q = 1; q < s.nranks; ++q) {
    const double x = pattern_input(s, q, index);
    switch (s.op) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg: acc = pattern_wrap(s.type, acc + x); break;
      case ReduceOp::kProd: acc = pattern_wrap(s.type, acc * x); break;
      case ReduceOp::kMax: acc = acc > x ? acc : x; break;
      case ReduceOp::kMin: acc = acc < x ? acc : x; break;
    }
  }
  if (s.op != ReduceOp::kAvg) return acc;
  if (is_floating(s.type)) return acc / s.nranks;
  return static_cast<double>(static_cast<std::int64_t>(acc) / s.nranks);  // integer average truncates
}

// The value output element `j` of rank s.rank must hold. Returns false where the collective defines
// no output on this rank (a reduce's non-root ranks).
COMMSCALE_HD inline bool pattern_expected(const PatternSpec& s, std::uint64_t j, double* expected) {
  const std::uint64_t chunk = s.count;
  const auto rank = static_cast<std::uint64_t>(s.rank);
  switch (s.collective) {
    case Collective::kAllReduce: *expected = pattern_reduce(s, j); return true;
    case Collective::kReduce:
      if (s.rank != s.root) return false;
      *expected = pattern_reduce(s, j);
      return true;
    case Collective::kBroadcast: *expected = pattern_input(s, s.root, j); return true;
    case Collective::kAllGather: *expected = pattern_input(s, static_cast<int>(j / chunk), j % chunk); return true;
    case Collective::kReduceScatter: *expected = pattern_reduce(s, rank * chunk + j); return true;
    case Collective::kAllToAll:
      *expected = pattern_input(s, static_cast<int>(j / chunk), rank * chunk + j % chunk);
      return true;
    case Collective::kSendRecv: *expected = pattern_input(s, (s.rank + s.nranks - 1) % s.nranks, j); return true;
    // Checked a peer's segment at a time: `root` names the (sender, receiver) pair whose data it holds,
    // written by the sender as that pair's input (bench/sweep.cpp).
    case Collective::kAllToAllV: *expected = pattern_input(s, s.root, j); return true;
  }
  return false;
}

// Largest finite value of a floating type; a correct result beyond it is an infinity.
COMMSCALE_HD inline double pattern_max_finite(DataType type) {
  switch (type) {
    case DataType::kFloat16: return 65504.0;
    case DataType::kBFloat16:
    case DataType::kFloat32: return 3.4028234663852886e38;
    default: return 1.7976931348623157e308;
  }
}

COMMSCALE_HD inline bool pattern_matches(const PatternSpec& s, double got, double expected) {
  if (!is_floating(s.type)) return got == expected;
  if (got != got) return false;  // NaN: unwritten (poison) or corrupted
  if (expected > pattern_max_finite(s.type)) return got > pattern_max_finite(s.type);
  const double diff = got > expected ? got - expected : expected - got;
  const double scale = expected > 1.0 ? expected : (expected < -1.0 ? -expected : 1.0);
  return diff <= s.rel_tolerance * scale;
}

// Host-side fill and check, used by the CPU backend and as the reference in GPU tests.

// The relative error allowed on a floating result. Zero wherever the result is exact: every input is
// a small integer, so sums, products, maxima and minima are exact until they outgrow the type's
// significand (sums of 8 x nranks past 256 in bf16, say). Averages divide, and NCCL premultiplies
// each input by 1/n, so they get (nranks + 1) units in the last place; so do inexact reductions.
// Data-movement collectives are always exact.
[[nodiscard]] double pattern_tolerance(const PatternSpec& s) noexcept;

// Writes input elements [0, count) of rank s.rank to `data` (an array of s.type).
void fill_pattern_host(void* data, std::uint64_t count, const PatternSpec& s);

// Writes `value` to element `index` of an array of `type` (rounded as the type rounds).
void store_element_host(void* data, DataType type, std::uint64_t index, double value);
[[nodiscard]] double load_element_host(const void* data, DataType type, std::uint64_t index);

// Counts output elements [0, count) of `data` that differ from what rank s.rank must hold.
[[nodiscard]] std::uint64_t count_wrong_host(const void* data, std::uint64_t count, const PatternSpec& s);

// The value a seeded corruption writes into one input element: one no correct input has and that
// changes the result under every operator. -64 lowers a min, a sum or a product (to a negative one),
// and moves a truncated integer average of up to 64 ranks; 64 raises a max.
[[nodiscard]] COMMSCALE_HD constexpr double pattern_corruption(ReduceOp op) noexcept {
  return op == ReduceOp::kMax ? 64.0 : -64.0;
}

}  // namespace commscale
