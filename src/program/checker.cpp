#include "program/checker.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "program/checker_index.hpp"

namespace commscale {
namespace {

using check::Comm;
using check::describe;
using check::Index;

class Problems {
 public:
  explicit Problems(std::size_t max) : max_(max) {}
  template <class... Args>
  void add(fmt::format_string<Args...> format, Args&&... args) {
    if (list_.size() < max_) list_.push_back(fmt::format(format, std::forward<Args>(args)...));
  }
  [[nodiscard]] bool full() const noexcept { return list_.size() >= max_; }
  [[nodiscard]] bool empty() const noexcept { return list_.empty(); }
  [[nodiscard]] std::size_t room() const noexcept { return max_ - list_.size(); }
  std::vector<std::string>& list() noexcept { return list_; }

 private:
  std::size_t max_;
  std::vector<std::string> list_;
};

void check_payload(const RankProgram& rank, const Op& op, Problems& out) {
  if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
    if (c->group >= rank.groups.size()) {
      out.add("rank {} op {} '{}': group handle {} does not exist (the rank has {} groups)", rank.rank, op.id, op.name,
              c->group, rank.groups.size());
      return;
    }
    const std::uint64_t element = size_of(c->dtype);
    const auto n = static_cast<std::uint64_t>(rank.groups[c->group].members.size());
    const bool sharded = per_rank_chunks(traits(c->kind).shape);
    if (c->bytes.count() % element != 0 || (sharded && (c->bytes.count() / element) % n != 0)) {
      out.add("rank {} op {} '{}': {} bytes of {} do not split into whole elements{}", rank.rank, op.id, op.name,
              c->bytes.count(), name(c->dtype), sharded ? fmt::format(" over {} ranks", n) : "");
    }
  } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
    if (p->group >= rank.groups.size()) {
      out.add("rank {} op {} '{}': group handle {} does not exist", rank.rank, op.id, op.name, p->group);
    } else if (p->peer < 0 || static_cast<std::size_t>(p->peer) >= rank.groups[p->group].members.size()) {
      out.add("rank {} op {} '{}': peer {} is not another member of group '{}'", rank.rank, op.id, op.name, p->peer,
              name(rank.groups[p->group].role));
    }
  }
}

// Ids, dependencies and streams of one op list, and handles against one of the ranks that runs it
// (every rank is checked against its groups in check_groups; handles are positions, the same for all).
void check_structure(const ProgramSet& set, Problems& out) {
  if (static_cast<int>(set.ranks.size()) != set.world_size) {
    out.add("the set has {} rank programs for a world of {}", set.ranks.size(), set.world_size);
  }
  std::vector<bool> seen(set.programs.size(), false);
  // Handles and peer ranges depend only on the group sizes: check each (op list, sizes) once rather
  // than once per rank. (A peer that is the rank itself is caught per rank in check_p2p.)
  std::set<std::pair<int, std::vector<std::size_t>>> shapes;
  for (std::size_t r = 0; r < set.ranks.size() && !out.full(); ++r) {
    const RankProgram& rank = set.ranks[r];
    if (rank.rank != static_cast<int>(r)) out.add("ranks[{}] says it is rank {}", r, rank.rank);
    if (rank.program < 0 || static_cast<std::size_t>(rank.program) >= set.programs.size()) {
      out.add("rank {} names op list {}, of {}", rank.rank, rank.program, set.programs.size());
      continue;
    }
    const auto& ops = set.programs[static_cast<std::size_t>(rank.program)];
    const bool first_visit = !seen[static_cast<std::size_t>(rank.program)];
    seen[static_cast<std::size_t>(rank.program)] = true;
    std::vector<std::size_t> shape;
    for (const Group& g : rank.groups) shape.push_back(g.members.size());
    const bool new_shape = shapes.insert({rank.program, std::move(shape)}).second;
    if (!first_visit && !new_shape) continue;
    for (std::size_t i = 0; i < ops.size() && !out.full(); ++i) {
      const Op& op = ops[i];
      if (new_shape) check_payload(rank, op, out);
      if (!first_visit) continue;
      if (op.id != i) out.add("rank {} op at position {} '{}' has id {}", rank.rank, i, op.name, op.id);
      if (!stream_fits_payload(op.stream, op.payload)) {
        out.add("rank {} op {} '{}': this kind of op cannot run on stream {}", rank.rank, i, op.name, name(op.stream));
      }
      for (OpId d : op.deps) {
        if (d >= i) {
          out.add(
              "rank {} op {} '{}' depends on op {}{}: dependencies must name earlier ops (program order is the "
              "issue order), and this one is {}",
              rank.rank, i, op.name, d, d < ops.size() ? fmt::format(" '{}'", ops[d].name) : "",
              d == i ? "itself" : (d < ops.size() ? "later, a cycle for an in-order issuer" : "missing"));
        }
      }
    }
  }
}

void check_groups(const ProgramSet& set, const Index& index, Problems& out) {
  for (const RankProgram& rank : set.ranks) {
    for (const Group& g : rank.groups) {
      std::vector<int> sorted = g.members;
      std::sort(sorted.begin(), sorted.end());
      const bool in_range =
          std::all_of(sorted.begin(), sorted.end(), [&](int m) { return m >= 0 && m < set.world_size; });
      if (std::find(sorted.begin(), sorted.end(), rank.rank) == sorted.end() || !in_range ||
          std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        out.add("rank {} group '{}' {}: members must be distinct world ranks including the rank itself", rank.rank,
                name(g.role), g.members);
      }
    }
  }
  if (!out.empty()) return;
  for (std::size_t c = 0; c < index.comms.size() && !out.full(); ++c) {
    for (int member : index.comms[c].members) {
      if (check::handle_of(index, member, static_cast<int>(c)) < 0) {
        out.add("group {} lists rank {}, but rank {} has no group '{}' with these members in this order",
                describe(index.comms[c]), member, member, name(index.comms[c].role));
      }
    }
  }
}

std::string collective_text(const ProgramSet& set, int rank, OpId id) {
  const auto& c = std::get<CollectiveOp>(ops_of(set, rank)[id].payload);
  return fmt::format("{} of {} bytes ({})", name(c.kind), c.bytes.count(), name(c.dtype));
}

bool same_collective(const Op& a, const Op& b) {
  const auto& x = std::get<CollectiveOp>(a.payload);
  const auto& y = std::get<CollectiveOp>(b.payload);
  return x.kind == y.kind && x.bytes == y.bytes && x.dtype == y.dtype;
}

// Compares every member's sequence on (group, stream) with the first member's.
void check_collectives(const ProgramSet& set, const Index& index, Problems& out) {
  static const std::vector<OpId> kEmpty;
  for (std::size_t c = 0; c < index.comms.size() && !out.full(); ++c) {
    const Comm& comm = index.comms[c];
    for (Stream stream : {Stream::kTp, Stream::kDp}) {
      const auto sequence = [&](int rank) -> const std::vector<OpId>& {
        const auto handle = static_cast<std::uint32_t>(check::handle_of(index, rank, static_cast<int>(c)));
        const auto& map =
            index.collectives[static_cast<std::size_t>(set.ranks[static_cast<std::size_t>(rank)].program)];
        const auto it = map.find({handle, stream});
        return it == map.end() ? kEmpty : it->second;
      };
      const int first = comm.members.front();
      const std::vector<OpId>& reference = sequence(first);
      for (int member : comm.members) {
        const std::vector<OpId>& mine = sequence(member);
        if (&mine == &reference) continue;
        const std::size_t common = std::min(mine.size(), reference.size());
        std::size_t k = 0;
        while (k < common && same_collective(ops_of(set, member)[mine[k]], ops_of(set, first)[reference[k]])) ++k;
        if (k < common) {
          out.add(
              "group {} on stream {}: collective #{} is {} on {} but {} on {}: members must issue the same "
              "collectives in the same order",
              describe(comm), name(stream), k, collective_text(set, first, reference[k]),
              describe(set, first, reference[k]), collective_text(set, member, mine[k]),
              describe(set, member, mine[k]));
          break;
        }
        if (mine.size() != reference.size()) {
          const bool longer = mine.size() > reference.size();
          const int who = longer ? member : first;
          const OpId extra = longer ? mine[common] : reference[common];
          out.add(
              "group {} on stream {}: rank {} issues {} collectives and rank {} issues {}; the first unmatched is {}",
              describe(comm), name(stream), first, reference.size(), member, mine.size(), describe(set, who, extra));
          break;
        }
      }
    }
  }
}

void compare_channel(const ProgramSet& set, int from, int to, const std::vector<OpId>& sends,
                     const std::vector<OpId>& recvs, const Comm& comm, Problems& out) {
  const std::size_t common = std::min(sends.size(), recvs.size());
  for (std::size_t k = 0; k < common; ++k) {
    const auto& s = std::get<PointToPoint>(ops_of(set, from)[sends[k]].payload);
    const auto& r = std::get<PointToPoint>(ops_of(set, to)[recvs[k]].payload);
    if (s.bytes != r.bytes) {
      out.add("group {}: send #{} from rank {} to rank {} is {} bytes ({}) but the matching receive is {} bytes ({})",
              describe(comm), k, from, to, s.bytes.count(), describe(set, from, sends[k]), r.bytes.count(),
              describe(set, to, recvs[k]));
      return;
    }
  }
  if (sends.size() > recvs.size()) {
    out.add("group {}: {} has no matching receive on rank {} ({} sends from rank {} to rank {}, {} receives)",
            describe(comm), describe(set, from, sends[common]), to, sends.size(), from, to, recvs.size());
  } else if (recvs.size() > sends.size()) {
    out.add("group {}: {} has no matching send from rank {} ({} sends from rank {} to rank {}, {} receives)",
            describe(comm), describe(set, to, recvs[common]), from, sends.size(), from, to, recvs.size());
  }
}

void check_p2p(const ProgramSet& set, const Index& index, Problems& out) {
  static const std::vector<OpId> kEmpty;
  const auto sequence = [&](int rank, int handle, int peer, P2pDirection d) -> const std::vector<OpId>& {
    const auto& map = index.p2p[static_cast<std::size_t>(set.ranks[static_cast<std::size_t>(rank)].program)];
    const auto it = map.find({static_cast<std::uint32_t>(handle), peer, d});
    return it == map.end() ? kEmpty : it->second;
  };
  std::set<std::tuple<int, int, int>> channels;  // (comm, from, to) with any traffic
  for (const RankProgram& rank : set.ranks) {
    for (const auto& [key, ops] : index.p2p[static_cast<std::size_t>(rank.program)]) {
      const auto& [handle, peer, direction] = key;
      const int comm = index.rank_comms[static_cast<std::size_t>(rank.rank)][handle];
      const int other = rank.groups[handle].members[static_cast<std::size_t>(peer)];
      if (other == rank.rank) {
        out.add("{}: peer {} is not another member of group '{}' but rank {} itself",
                describe(set, rank.rank, ops.front()), peer, name(rank.groups[handle].role), rank.rank);
        return;
      }
      const bool send = direction == P2pDirection::kSend;
      channels.insert({comm, send ? rank.rank : other, send ? other : rank.rank});
    }
  }
  for (const auto& [comm_id, from, to] : channels) {
    if (out.full()) return;
    const Comm& comm = index.comms[static_cast<std::size_t>(comm_id)];
    const int from_handle = check::handle_of(index, from, comm_id);
    const int to_handle = check::handle_of(index, to, comm_id);
    compare_channel(set, from, to, sequence(from, from_handle, check::member_index(comm, to), P2pDirection::kSend),
                    sequence(to, to_handle, check::member_index(comm, from), P2pDirection::kRecv), comm, out);
  }
}

}  // namespace

ProgramCheck check_program(const ProgramSet& set, std::size_t max_problems) {
  Problems out(max_problems);
  check_structure(set, out);
  if (!out.empty()) return {std::move(out.list())};
  const Index index = check::build_index(set);
  check_groups(set, index, out);
  if (!out.empty()) return {std::move(out.list())};
  check_collectives(set, index, out);
  check_p2p(set, index, out);
  if (!out.empty()) return {std::move(out.list())};
  check::check_cycles(set, index, out.list(), out.room());
  return {std::move(out.list())};
}

}  // namespace commscale
