#include "core/collective.hpp"

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

constexpr std::array kCollectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                                     Collective::kBroadcast, Collective::kReduce,    Collective::kAllToAll,
                                     Collective::kSendRecv};
constexpr std::array kNamed = {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                               Collective::kBroadcast, Collective::kReduce,    Collective::kAllToAll,
                               Collective::kSendRecv,  Collective::kAllToAllV};

// "all_reduce_perf" -> "allreduce": nccl-tests binaries and NCCL's API names without underscores.
std::string squash(std::string_view text) {
  if (text.ends_with("_perf")) text.remove_suffix(5);
  std::string out;
  for (char c : text) {
    if (c != '_' && c != '-') out.push_back(c);
  }
  return out;
}

}  // namespace

const CollectiveTraits& traits(Collective c) noexcept {
  using S = CollectiveShape;
  // In the enum's order.
  static constexpr std::array<CollectiveTraits, kNamed.size()> kTable = {{
      {"all_reduce", S::kWhole, 2, 2, true},
      {"all_gather", S::kGather, 1, 1, true},
      {"reduce_scatter", S::kScatter, 1, 1, true},
      {"broadcast", S::kWhole, 0, 1, true},
      {"reduce", S::kWhole, 0, 1, true},
      {"alltoall", S::kExchange, 1, 1, false},
      {"sendrecv", S::kWhole, 0, 1, false},
      // busbw as nccl-tests' alltoallv: the busiest rank's bytes x (n-1)/n (BUSBW.md)
      {"alltoallv", S::kExchange, 1, 1, false},
  }};
  return kTable[static_cast<std::size_t>(c)];
}

std::string_view name(Collective c) noexcept { return traits(c).name; }

std::span<const Collective> all_collectives() noexcept { return kCollectives; }

Collective parse_collective(std::string_view text, std::string_view where) {
  const std::string wanted = squash(text);
  for (Collective c : kNamed) {
    if (wanted == squash(name(c))) return c;
  }
  throw InputError(where, fmt::format("unknown collective \"{}\"", text),
                   "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, alltoallv, sendrecv or all");
}

double busbw_factor(Collective c, int nranks) noexcept {
  const int passes = traits(c).busbw_passes;
  const auto n = static_cast<double>(nranks);
  return passes == 0 ? 1.0 : passes * (n - 1.0) / n;
}

double algbw_per_busbw(Collective c, int nranks) noexcept {
  const int passes = traits(c).busbw_passes;
  const auto n = static_cast<double>(nranks);
  return passes == 0 ? 1.0 : n / (passes * (n - 1.0));
}

CollectiveLayout collective_layout(Collective c, Bytes size, DataType type, int nranks, int rank) {
  const std::uint64_t element = size_of(type);
  const std::uint64_t count = size.count() / element;
  const auto n = static_cast<std::uint64_t>(nranks);
  const auto r = static_cast<std::uint64_t>(rank);
  // Per-rank chunk of a gather, scatter or all-to-all: rounded down to a multiple of 16 bytes.
  const std::uint64_t chunk = (count / n) & ~(16 / element - 1);

  CollectiveLayout layout;
  const CollectiveShape shape = traits(c).shape;
  switch (shape) {
    case CollectiveShape::kWhole:
      layout.count = layout.send_count = layout.recv_count = count;
      break;
    case CollectiveShape::kGather:
      layout.count = layout.send_count = chunk;
      layout.recv_count = chunk * n;
      layout.send_inplace_offset = chunk * r;
      break;
    case CollectiveShape::kScatter:
      layout.count = layout.recv_count = chunk;
      layout.send_count = chunk * n;
      layout.recv_inplace_offset = chunk * r;
      break;
    case CollectiveShape::kExchange:
      layout.count = chunk;
      layout.send_count = layout.recv_count = chunk * n;
      break;
  }
  layout.size = Bytes(std::max(layout.send_count, layout.recv_count) * element);
  layout.algbw_bytes = Bytes(layout.count * element * (per_rank_chunks(shape) ? n : 1));
  layout.busbw_factor = busbw_factor(c, nranks);
  return layout;
}

Bandwidths collective_bandwidths(const CollectiveLayout& layout, Seconds time) noexcept {
  const GBps algbw = bandwidth(layout.algbw_bytes, time);
  return {algbw, algbw * layout.busbw_factor};
}

}  // namespace commscale
