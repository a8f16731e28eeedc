#pragma once

// Element types and reduction operators of the collectives, with the names users type.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/hd.hpp"

namespace commscale {

// The FP8 types come last so that the others keep their numbers. They are GEMM inputs only (TransformerEngine's
// E4M3 activations and weights, E5M2 gradients): no collective, pattern or bench row is FP8, so all_data_types()
// and parse_data_type() leave them out (bench's "-d all" is unchanged); parse_element_type() takes them.
enum class DataType : std::uint8_t { kInt8, kInt32, kFloat16, kBFloat16, kFloat32, kFloat64, kFp8E4M3, kFp8E5M2 };
inline constexpr std::size_t kDataTypeCount = 8;
enum class ReduceOp : std::uint8_t { kSum, kProd, kMax, kMin, kAvg };

[[nodiscard]] std::size_t size_of(DataType type) noexcept;
[[nodiscard]] COMMSCALE_HD constexpr bool is_floating(DataType type) noexcept {
  return type != DataType::kInt8 && type != DataType::kInt32;
}
[[nodiscard]] COMMSCALE_HD constexpr bool is_fp8(DataType type) noexcept {
  return type == DataType::kFp8E4M3 || type == DataType::kFp8E5M2;
}
[[nodiscard]] std::string_view name(DataType type) noexcept;  // int8 int32 fp16 bf16 fp32 fp64 fp8_e4m3 fp8_e5m2
[[nodiscard]] std::string_view name(ReduceOp op) noexcept;    // sum prod max min avg
[[nodiscard]] std::span<const DataType> all_data_types() noexcept;
[[nodiscard]] std::span<const ReduceOp> all_reduce_ops() noexcept;

// Parses a type name; nccl-tests' spellings (half, bfloat16, float, double) are accepted as aliases.
// Throws InputError naming `where`.
[[nodiscard]] DataType parse_data_type(std::string_view text, std::string_view where);
// Any element type, the FP8 ones included (a GEMM's inputs in a step program or a calibration profile).
[[nodiscard]] DataType parse_element_type(std::string_view text, std::string_view where);
[[nodiscard]] ReduceOp parse_reduce_op(std::string_view text, std::string_view where);

// IEEE binary16 and bfloat16 conversions for host code (round to nearest even; NaN stays NaN).
[[nodiscard]] std::uint16_t float_to_fp16(float value) noexcept;
[[nodiscard]] float fp16_to_float(std::uint16_t bits) noexcept;
[[nodiscard]] std::uint16_t float_to_bf16(float value) noexcept;
[[nodiscard]] float bf16_to_float(std::uint16_t bits) noexcept;

}  // namespace commscale
