#pragma once

// One descriptor per collective, shared by the benchmark and the predictor, so that measured and
// predicted bandwidths mean the same thing. Sizes and bandwidth factors follow nccl-tests exactly;
// the derivation of each bus-bandwidth factor is in src/bench/BUSBW.md.

#include <cstdint>
#include <span>
#include <string_view>

#include "core/dtype.hpp"
#include "core/hd.hpp"
#include "core/units.hpp"

namespace commscale {

enum class Collective : std::uint8_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };

[[nodiscard]] std::string_view name(Collective c) noexcept;  // all_reduce, all_gather, ...
[[nodiscard]] std::span<const Collective> all_collectives() noexcept;
// Accepts the canonical names and the nccl-tests spellings (allreduce, all_reduce_perf, ...).
[[nodiscard]] Collective parse_collective(std::string_view text, std::string_view where);
[[nodiscard]] COMMSCALE_HD constexpr bool takes_reduce_op(Collective c) noexcept {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}
[[nodiscard]] constexpr bool takes_root(Collective c) noexcept {
  return c == Collective::kBroadcast || c == Collective::kReduce;
}

// Buffers and counts of one collective call on one rank, in elements unless the name says bytes.
struct CollectiveLayout {
  std::uint64_t count = 0;       // the count passed to the library (per-rank chunk for gather/scatter/all-to-all)
  std::uint64_t send_count = 0;  // elements in the send buffer
  std::uint64_t recv_count = 0;  // elements in the receive buffer
  // In place, the send buffer starts at recv + send_inplace_offset, or the receive buffer at
  // send + recv_inplace_offset (elements; already multiplied by the rank).
  std::uint64_t send_inplace_offset = 0;
  std::uint64_t recv_inplace_offset = 0;
  Bytes size;           // the "size" column: the larger of the two buffers
  Bytes algbw_bytes;    // the bytes algbw is computed from (nccl-tests' convention for this collective)
  double busbw_factor;  // busbw = algbw * busbw_factor
};

// The layout for a requested `size` in bytes, as nccl-tests derives it: the element count is
// size / sizeof(type); gathers, scatters and all-to-all round the per-rank chunk down to 16 bytes.
[[nodiscard]] CollectiveLayout collective_layout(Collective c, Bytes size, DataType type, int nranks, int rank);

[[nodiscard]] double busbw_factor(Collective c, int nranks) noexcept;

struct Bandwidths {
  GBps algbw;
  GBps busbw;
};
[[nodiscard]] Bandwidths collective_bandwidths(const CollectiveLayout& layout, Seconds time) noexcept;

}  // namespace commscale
