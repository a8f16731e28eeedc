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

// kAllToAllV (an uneven all-to-all from a traffic matrix, core/traffic_matrix.hpp) comes last and is not in
// all_collectives(): nccl-tests runs it as its own binary, outside `all`.
enum class Collective : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
  kAllToAllV
};

// How one rank's buffers relate to the group's, as nccl-tests lays them out (BUSBW.md, "Sizes and counts").
enum class CollectiveShape : std::uint8_t {
  kWhole,     // every rank passes the whole buffer: all-reduce, broadcast, reduce, sendrecv
  kGather,    // a chunk in, the group's chunks out: all-gather
  kScatter,   // the group's chunks in, a chunk out: reduce-scatter
  kExchange,  // a chunk for each peer in and out: all-to-all
};

// The facts of a collective that the benchmark, both launchers and the cost model rely on, in one
// table, so that a measured busbw, a launched call and a predicted time mean the same collective.
struct CollectiveTraits {
  std::string_view name;  // all_reduce, all_gather, ... (the JSON and the flags)
  CollectiveShape shape = CollectiveShape::kWhole;
  // busbw = algbw * busbw_passes * (n - 1) / n: the data crosses each of a ring's links that many
  // times per byte of algbw; 0 where busbw is algbw whatever n (broadcast, reduce, sendrecv).
  int busbw_passes = 0;
  // A ring runs ring_rounds rounds of n - 1 steps (all-reduce: a reduce-scatter, then an all-gather).
  int ring_rounds = 1;
  // NCCL defines an in-place form (buffer offsets in BUSBW.md); nccl-tests checks in place only for these.
  bool nccl_in_place = true;
};

[[nodiscard]] const CollectiveTraits& traits(Collective c) noexcept;
// The count passed to the library is one rank's chunk, and the call moves the group's chunks.
[[nodiscard]] constexpr bool per_rank_chunks(CollectiveShape s) noexcept { return s != CollectiveShape::kWhole; }

[[nodiscard]] std::string_view name(Collective c) noexcept;  // all_reduce, all_gather, ...
// The collectives `all` runs (nccl-tests' binaries but alltoallv, whose traffic needs a matrix).
[[nodiscard]] std::span<const Collective> all_collectives() noexcept;
// Accepts the canonical names and the nccl-tests spellings (allreduce, all_reduce_perf, ...), alltoallv too.
[[nodiscard]] Collective parse_collective(std::string_view text, std::string_view where);
// Predicates the kernels need too (CUDA device code cannot read the table), hence functions.
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
// 1 / busbw_factor: the algorithm bandwidth a ring of this bus bandwidth gives (the cost model's).
[[nodiscard]] double algbw_per_busbw(Collective c, int nranks) noexcept;

struct Bandwidths {
  GBps algbw;
  GBps busbw;
};
[[nodiscard]] Bandwidths collective_bandwidths(const CollectiveLayout& layout, Seconds time) noexcept;

}  // namespace commscale
