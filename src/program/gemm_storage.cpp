#include "program/gemm_storage.hpp"

#include "core/dtype.hpp"

namespace commscale {
namespace {

// Whether a matrix of `usual` x `other` values (its usual leading dimension first) keeps the usual one.
bool keeps_usual(std::int64_t usual, std::int64_t other, DataType type) noexcept {
  return aligned_leading_dimension(usual, type) || !aligned_leading_dimension(other, type);
}

}  // namespace

bool aligned_leading_dimension(std::int64_t count, DataType type) noexcept {
  return count * static_cast<std::int64_t>(size_of(type)) % 16 == 0;
}

GemmStorage gemm_storage(const Gemm& g) noexcept {
  if (is_fp8(g.dtype)) return {};
  return {keeps_usual(g.k, g.m, g.dtype), keeps_usual(g.k, g.n, gemm_b_type(g)),
          keeps_usual(g.m, g.n, gemm_out_type(g))};
}

}  // namespace commscale
