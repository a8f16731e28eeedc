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

std::string_view name(Collective c) noexcept {
  switch (c) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAllToAll: return "alltoall";
    case Collective::kSendRecv: return "sendrecv";
  }
  return "?";
}

std::span<const Collective> all_collectives() noexcept { return kCollectives; }

Collective parse_collective(std::string_view text, std::string_view where) {
  const std::string wanted = squash(text);
  for (Collective c : kCollectives) {
    if (wanted == squash(name(c))) return c;
  }
  throw InputError(where, fmt::format("unknown collective \"{}\"", text),
                   "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv or all");
}

double busbw_factor(Collective c, int nranks) noexcept {
  const auto n = static_cast<double>(nranks);
  switch (c) {
    case Collective::kAllReduce: return 2.0 * (n - 1.0) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (n - 1.0) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv: return 1.0;
  }
  return 1.0;
}

CollectiveLayout collective_layout(Collective c, Bytes size, DataType type, int nranks, int rank) {
  const std::uint64_t element = size_of(type);
  const std::uint64_t count = size.count() / element;
  const auto n = static_cast<std::uint64_t>(nranks);
  const auto r = static_cast<std::uint64_t>(rank);
  // Per-rank chunk of a gather, scatter or all-to-all: rounded down to a multiple of 16 bytes.
  const std::uint64_t chunk = (count / n) & ~(16 / element - 1);

  CollectiveLayout layout;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
      layout.count = layout.send_count = layout.recv_count = count;
      break;
    case Collective::kAllGather:
      layout.count = layout.send_count = chunk;
      layout.recv_count = chunk * n;
      layout.send_inplace_offset = chunk * r;
      break;
    case Collective::kReduceScatter:
      layout.count = layout.recv_count = chunk;
      layout.send_count = chunk * n;
      layout.recv_inplace_offset = chunk * r;
      break;
    case Collective::kAllToAll:
      layout.count = chunk;
      layout.send_count = layout.recv_count = chunk * n;
      break;
  }
  layout.size = Bytes(std::max(layout.send_count, layout.recv_count) * element);
  const bool whole_group = c == Collective::kAllGather || c == Collective::kReduceScatter || c == Collective::kAllToAll;
  layout.algbw_bytes = Bytes(layout.count * element * (whole_group ? n : 1));
  layout.busbw_factor = busbw_factor(c, nranks);
  return layout;
}

Bandwidths collective_bandwidths(const CollectiveLayout& layout, Seconds time) noexcept {
  const GBps algbw = bandwidth(layout.algbw_bytes, time);
  return {algbw, algbw * layout.busbw_factor};
}

}  // namespace commscale
