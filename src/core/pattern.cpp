#include "core/pattern.hpp"

#include <cmath>

namespace commscale {
namespace {

// Explicit significand bits: integers up to 2^(bits + 1) are exact.
int significand_bits(DataType type) noexcept {
  switch (type) {
    case DataType::kFloat16: return 10;
    case DataType::kBFloat16: return 7;
    case DataType::kFloat32: return 23;
    case DataType::kFloat64: return 52;
    default: return 0;
  }
}

// The largest magnitude a reduction of the pattern's inputs (1..8, or 1..2 for products) can reach.
double largest_result(ReduceOp op, int nranks) noexcept {
  switch (op) {
    case ReduceOp::kSum: return 8.0 * nranks;
    case ReduceOp::kProd: return std::ldexp(1.0, nranks);
    default: return 8.0;
  }
}

}  // namespace

double load_element_host(const void* data, DataType type, std::uint64_t i) {
  switch (type) {
    case DataType::kInt8: return static_cast<const std::int8_t*>(data)[i];
    case DataType::kInt32: return static_cast<const std::int32_t*>(data)[i];
    case DataType::kFloat16: return fp16_to_float(static_cast<const std::uint16_t*>(data)[i]);
    case DataType::kBFloat16: return bf16_to_float(static_cast<const std::uint16_t*>(data)[i]);
    case DataType::kFloat32: return static_cast<const float*>(data)[i];
    case DataType::kFloat64: return static_cast<const double*>(data)[i];
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return 0.0;  // no collective carries FP8 (dtype.hpp)
  }
  return 0.0;
}

void store_element_host(void* data, DataType type, std::uint64_t i, double value) {
  switch (type) {
    case DataType::kInt8: static_cast<std::int8_t*>(data)[i] = static_cast<std::int8_t>(value); break;
    case DataType::kInt32: static_cast<std::int32_t*>(data)[i] = static_cast<std::int32_t>(value); break;
    case DataType::kFloat16:
      static_cast<std::uint16_t*>(data)[i] = float_to_fp16(static_cast<float>(value));
      break;
    case DataType::kBFloat16:
      static_cast<std::uint16_t*>(data)[i] = float_to_bf16(static_cast<float>(value));
      break;
    case DataType::kFloat32: static_cast<float*>(data)[i] = static_cast<float>(value); break;
    case DataType::kFloat64: static_cast<double*>(data)[i] = value; break;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      break;  // no collective carries FP8 (dtype.hpp)
  }
}

double pattern_tolerance(const PatternSpec& s) noexcept {
  if (!is_floating(s.type) || !takes_reduce_op(s.collective)) return 0.0;
  const int bits = significand_bits(s.type);
  const bool exact = s.op != ReduceOp::kAvg && largest_result(s.op, s.nranks) <= std::ldexp(1.0, bits + 1);
  return exact ? 0.0 : (s.nranks + 1) * std::ldexp(1.0, -bits);
}

void fill_pattern_host(void* data, std::uint64_t count, const PatternSpec& s) {
  for (std::uint64_t i = 0; i < count; ++i) store_element_host(data, s.type, i, pattern_input(s, s.rank, i));
}

std::uint64_t count_wrong_host(const void* data, std::uint64_t count, const PatternSpec& s) {
  std::uint64_t wrong = 0;
  for (std::uint64_t j = 0; j < count; ++j) {
    double expected = 0.0;
    if (pattern_expected(s, j, &expected) && !pattern_matches(s, load_element_host(data, s.type, j), expected)) {
      ++wrong;
    }
  }
  return wrong;
}

}  // namespace commscale
