#include "runtime/step_buffers.hpp"

#include <algorithm>
#include <variant>

namespace commscale {
namespace {

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// The three operand sizes of an op, A, B, C (zero where unused).
struct Needs {
  Bytes a;
  Bytes b;
  Bytes c;
};

Needs needs_of(const Op& op, std::size_t gemm_element) {
  return std::visit(
      [gemm_element](const auto& p) -> Needs {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, Gemm>) {
          return {gemm_a_bytes(p, gemm_element), gemm_b_bytes(p, gemm_element), gemm_c_bytes(p, gemm_element)};
        } else if constexpr (std::is_same_v<T, MemoryKernel>) {
          return {p.bytes_read, Bytes(0), p.bytes_written};
        } else {
          return {Bytes(0), Bytes(0), p.bytes};
        }
      },
      op.payload);
}

}  // namespace

namespace {

std::uint64_t elements(std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  return static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) * static_cast<std::uint64_t>(batch);
}

std::size_t element_bytes(const Gemm& g, std::size_t element) { return element != 0 ? element : size_of(g.dtype); }

}  // namespace

Bytes gemm_a_bytes(const Gemm& g, std::size_t element) noexcept {
  return Bytes(elements(g.k, g.m, g.batch) * element_bytes(g, element));
}
Bytes gemm_b_bytes(const Gemm& g, std::size_t element) noexcept {
  return Bytes(elements(g.k, g.n, g.batch) * element_bytes(g, element));
}
GemmOperandLayout gemm_operand_layout(const Gemm& g, std::uint64_t alignment) noexcept {
  GemmOperandLayout l;
  l.b_at = align_up(gemm_a_bytes(g).count(), alignment);
  l.c_at = l.b_at + align_up(gemm_b_bytes(g).count(), alignment);
  l.bytes = l.c_at + align_up(gemm_c_bytes(g).count(), alignment);
  return l;
}

Bytes gemm_c_bytes(const Gemm& g, std::size_t element) noexcept {
  return Bytes(elements(g.m, g.n, g.batch) * element_bytes(g, element));
}

StepBuffers place_step_buffers(const std::vector<Op>& ops, Bytes modelled, std::size_t gemm_element,
                               std::uint64_t alignment) {
  StepBuffers s;
  s.modelled = modelled;
  std::vector<Needs> needs;
  needs.reserve(ops.size());
  std::uint64_t largest = 0;
  for (const Op& op : ops) {
    const Needs n = needs_of(op, gemm_element);
    largest = std::max(largest, align_up(n.a.count(), alignment) + align_up(n.b.count(), alignment) +
                                    align_up(n.c.count(), alignment));
    needs.push_back(n);
  }
  s.largest_op = Bytes(largest);
  s.pool = Bytes(align_up(std::max(modelled.count(), 2 * largest), alignment));
  std::uint64_t cursor = 0;
  auto take = [&](Bytes size) {
    const Slice slice{cursor, size};
    cursor += align_up(size.count(), alignment);
    return slice;
  };
  for (const Needs& n : needs) {
    const std::uint64_t total =
        align_up(n.a.count(), alignment) + align_up(n.b.count(), alignment) + align_up(n.c.count(), alignment);
    if (cursor + total > s.pool.count()) cursor = 0;  // wrap: the whole op fits from the start
    OpBuffers b;
    b.a = take(n.a);
    b.b = take(n.b);
    b.c = take(n.c);
    s.operands.push_back(b);
  }
  return s;
}

}  // namespace commscale
