#include "core/pattern.hpp"

#include <cmath>

namespace commscale {
namespace {

double unit_roundoff(DataType type) noexcept {
  switch (type) {
    case DataType::kFloat16: return std::ldexp(1.0, -10);
    case DataType::kBFloat16: return std::ldexp(1.0, -7);
    case DataType::kFloat32: return std::ldexp(1.0, -23);
    case DataType::kFloat64: return std::ldexp(1.0, -52);
    default: return 0.0;
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
  }
}

double pattern_tolerance(DataType type, int nranks) noexcept { return (nranks + 1) * unit_roundoff(type); }

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
