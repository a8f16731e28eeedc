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
        } else if constexpr (std::is_same_v<T, HostCopy>) {
          return {Bytes(0), Bytes(0), p.bytes};  // the device side; the host side is in the host pool
        } else {
          return {Bytes(0), Bytes(0), p.bytes};
        }
      },
      op.payload);
}

// The optimizer's update works in place, as the real one does: its written slice is the start of its read one.
bool in_place(const Op& op) noexcept {
  const auto* k = std::get_if<MemoryKernel>(&op.payload);
  return k != nullptr && k->kind == MemoryKernelKind::kOptimizer;
}

}  // namespace

namespace {

std::uint64_t elements(std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  return static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) * static_cast<std::uint64_t>(batch);
}

std::size_t element_bytes(DataType type, std::size_t element) { return element != 0 ? element : size_of(type); }

}  // namespace

Bytes host_side_bytes(const Op& op) noexcept {
  if (const auto* h = std::get_if<HostCopy>(&op.payload)) return h->bytes;
  const auto* k = std::get_if<MemoryKernel>(&op.payload);
  if (k == nullptr || k->kind != MemoryKernelKind::kHostOptimizer) return Bytes(0);
  return std::max(k->bytes_read, k->bytes_written);
}

Bytes gemm_a_bytes(const Gemm& g, std::size_t element) noexcept {
  return Bytes(elements(g.k, g.m, g.batch) * element_bytes(g.dtype, element));
}
Bytes gemm_b_bytes(const Gemm& g, std::size_t element) noexcept {
  return Bytes(elements(g.k, g.n, g.batch) * element_bytes(gemm_b_type(g), element));
}
GemmOperandLayout gemm_operand_layout(const Gemm& g, std::uint64_t alignment) noexcept {
  GemmOperandLayout l;
  l.b_at = align_up(gemm_a_bytes(g).count(), alignment);
  l.c_at = l.b_at + align_up(gemm_b_bytes(g).count(), alignment);
  l.bytes = l.c_at + align_up(gemm_c_bytes(g).count(), alignment);
  return l;
}

Bytes gemm_c_bytes(const Gemm& g, std::size_t element) noexcept {
  return Bytes(elements(g.m, g.n, g.batch) * element_bytes(gemm_out_type(g), element));
}

namespace {

// The host pool: twice the largest host side, each op's placed after the one before and wrapping around, as
// in the device pool's halves.
void place_host_sides(const std::vector<Op>& ops, std::uint64_t alignment, StepBuffers& s) {
  std::uint64_t largest = 0;
  for (const Op& op : ops) largest = std::max(largest, align_up(host_side_bytes(op).count(), alignment));
  s.host_pool = Bytes(2 * largest);
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Bytes size = host_side_bytes(ops[i]);
    if (size.count() == 0) continue;
    const std::uint64_t bytes = align_up(size.count(), alignment);
    if (at + bytes > s.host_pool.count()) at = 0;
    s.operands[i].host = Slice{at, size};
    at += bytes;
  }
}

}  // namespace

StepBuffers place_step_buffers(const std::vector<Op>& ops, Bytes modelled, std::size_t gemm_element,
                               std::uint64_t alignment) {
  StepBuffers s;
  s.modelled = modelled;
  std::vector<Needs> needs;
  needs.reserve(ops.size());
  std::uint64_t largest = 0;       // the most an op but the in-place optimizer needs
  std::uint64_t read_side = 0;     // the most a GEMM reads (A and B)
  std::uint64_t written_side = 0;  // the most an op needs where ops write
  for (const Op& op : ops) {
    const Needs n = needs_of(op, gemm_element);
    const std::uint64_t a = align_up(n.a.count(), alignment);
    const std::uint64_t b = align_up(n.b.count(), alignment);
    const std::uint64_t c = align_up(n.c.count(), alignment);
    if (std::holds_alternative<Gemm>(op.payload)) {
      read_side = std::max(read_side, a + b);
      written_side = std::max(written_side, c);
    } else {
      written_side = std::max(written_side, in_place(op) ? std::max(a, c) : a + b + c);
    }
    if (!in_place(op)) largest = std::max(largest, a + b + c);
    needs.push_back(n);
  }
  s.largest_op = Bytes(std::max(largest, written_side));
  s.pool = Bytes(align_up(std::max({modelled.count(), 2 * largest, read_side + written_side}), alignment));
  // Two parts, halves where each holds the largest op: GEMMs read their A and B in the first, which nothing
  // writes; every written operand (GEMM results, memory kernels, collectives) and the memory kernels' reads
  // are in the second (the optimizer's update, a model's whole state, may take more than half). Each part has
  // its own cursor that wraps to the part's start where the next op's slices would not fit.
  const std::uint64_t half = s.pool.count() / 2;
  const std::uint64_t first =
      std::max(read_side, std::min(half, s.pool.count() - written_side)) / alignment * alignment;
  s.gemm_inputs = Bytes(first);
  struct Cursor {
    std::uint64_t begin, end, at;
  };
  Cursor read{0, s.gemm_inputs.count(), 0};
  Cursor written{s.gemm_inputs.count(), s.pool.count(), s.gemm_inputs.count()};
  auto take = [&](Cursor& c, Bytes size) {
    const Slice slice{c.at, size};
    c.at += align_up(size.count(), alignment);
    return slice;
  };
  auto make_room = [&](Cursor& c, std::uint64_t bytes) {
    if (c.at + bytes > c.end) c.at = c.begin;
  };
  for (std::size_t i = 0; i < needs.size(); ++i) {
    const Needs& n = needs[i];
    const std::uint64_t a = align_up(n.a.count(), alignment);
    const std::uint64_t b = align_up(n.b.count(), alignment);
    const std::uint64_t c = align_up(n.c.count(), alignment);
    OpBuffers o;
    if (std::holds_alternative<Gemm>(ops[i].payload)) {
      make_room(read, a + b);
      o.a = take(read, n.a);
      o.b = take(read, n.b);
      make_room(written, c);
      o.c = take(written, n.c);
    } else if (in_place(ops[i])) {
      make_room(written, std::max(a, c));
      o.a = Slice{written.at, n.a};
      o.c = Slice{written.at, n.c};
      written.at += std::max(a, c);
    } else {
      make_room(written, a + b + c);
      o.a = take(written, n.a);
      o.b = take(written, n.b);
      o.c = take(written, n.c);
    }
    s.operands.push_back(o);
  }
  place_host_sides(ops, alignment, s);
  return s;
}

}  // namespace commscale
