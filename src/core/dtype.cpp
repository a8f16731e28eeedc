#include "core/dtype.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/names.hpp"

namespace commscale {
namespace {

constexpr std::array kDataTypes = {DataType::kInt8,    DataType::kInt32,   DataType::kFloat16,
                                   DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64};
constexpr std::array kElementTypes = {DataType::kInt8,    DataType::kInt32,   DataType::kFloat16, DataType::kBFloat16,
                                      DataType::kFloat32, DataType::kFloat64, DataType::kFp8E4M3, DataType::kFp8E5M2};
constexpr std::array kReduceOps = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg};

struct Alias {
  std::string_view text;
  DataType type;
};
constexpr std::array<Alias, 6> kTypeAliases = {{{"half", DataType::kFloat16},
                                                {"float16", DataType::kFloat16},
                                                {"bfloat16", DataType::kBFloat16},
                                                {"float", DataType::kFloat32},
                                                {"float32", DataType::kFloat32},
                                                {"double", DataType::kFloat64}}};

}  // namespace

std::size_t size_of(DataType type) noexcept {
  switch (type) {
    case DataType::kInt8:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16: return 2;
    case DataType::kInt32:
    case DataType::kFloat32: return 4;
    case DataType::kFloat64: return 8;
  }
  return 0;
}

std::string_view name(DataType type) noexcept {
  switch (type) {
    case DataType::kInt8: return "int8";
    case DataType::kInt32: return "int32";
    case DataType::kFloat16: return "fp16";
    case DataType::kBFloat16: return "bf16";
    case DataType::kFloat32: return "fp32";
    case DataType::kFloat64: return "fp64";
    case DataType::kFp8E4M3:
      return "fp8_e4m3";
    case DataType::kFp8E5M2:
      return "fp8_e5m2";
  }
  return "?";
}

std::string_view name(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kAvg: return "avg";
  }
  return "?";
}

std::span<const DataType> all_data_types() noexcept { return kDataTypes; }
std::span<const ReduceOp> all_reduce_ops() noexcept { return kReduceOps; }

DataType parse_data_type(std::string_view text, std::string_view where) {
  for (const Alias& alias : kTypeAliases) {
    if (text == alias.text) return alias.type;
  }
  return parse_by_name(kDataTypes, text, where, "data type", "int8, int32, fp16, bf16, fp32, fp64 or all");
}

DataType parse_element_type(std::string_view text, std::string_view where) {
  for (DataType type : {DataType::kFp8E4M3, DataType::kFp8E5M2}) {
    if (text == name(type)) return type;
  }
  for (const Alias& alias : kTypeAliases) {
    if (text == alias.text) return alias.type;
  }
  return parse_by_name(kElementTypes, text, where, "data type");
}

ReduceOp parse_reduce_op(std::string_view text, std::string_view where) {
  return parse_by_name(kReduceOps, text, where, "reduction", "sum, prod, max, min, avg or all");
}

std::uint16_t float_to_bf16(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // keep it a quiet NaN
  const std::uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float bf16_to_float(std::uint16_t bits) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t float_to_fp16(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000);
  const std::uint32_t magnitude = bits & 0x7FFFFFFF;
  if (magnitude > 0x7F800000) return static_cast<std::uint16_t>(sign | 0x7E00);  // NaN
  if (magnitude >= 0x477FF000) return static_cast<std::uint16_t>(sign | 0x7C00);  // rounds to infinity
  if (magnitude < 0x38800000) {
    // Subnormal half (or zero): the value in units of 2^-24, rounded to nearest even.
    const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // * 2^24, exact
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits, nearest even.
  const std::uint32_t rebased = magnitude - 0x38000000;
  const std::uint32_t rounding = 0xFFF + ((rebased >> 13) & 1);
  return static_cast<std::uint16_t>(sign | ((rebased + rounding) >> 13));
}

float fp16_to_float(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1F;
  const std::uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) / 16777216.0f;  // subnormal: mantissa * 2^-24
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000 | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace commscale
