// Deadlock check: the graph of dependencies and stream order, with each collective instance and
// each matched send/receive pair merged into one event (they complete together), must be acyclic.
//
// Nodes are (class, op) where a class is either a shared op list (the quotient: every rank of a
// class maps onto it, and any cycle among ranks maps onto a cycle there) or a single rank (exact).

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "program/checker_index.hpp"

namespace commscale::check {
namespace {

constexpr std::size_t kExactNodeLimit = 50'000'000;  // beyond this, report the quotient's cycle unconfirmed

class UnionFind {
 public:
  explicit UnionFind(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<std::uint32_t> parent_;
};

class EventGraph {
 public:
  EventGraph(const ProgramSet& set, const Index& index, bool exact);
  // An empty string when acyclic, else a description of one cycle.
  [[nodiscard]] std::string find_cycle();

 private:
  [[nodiscard]] const std::vector<Op>& class_ops(std::size_t c) const {
    return set_.programs[static_cast<std::size_t>(set_.ranks[static_cast<std::size_t>(class_rank_[c])].program)];
  }
  [[nodiscard]] std::uint32_t node(std::size_t c, OpId op) const { return offset_[c] + op; }
  [[nodiscard]] const std::vector<OpId>& sequence(int rank, const CollectiveKey& key) const;
  void merge_collectives();
  void merge_p2p();
  struct Event {
    std::string text;  // up to four members, "rank 0 op 3 'x' (tp) = rank 1 op 3 'x' (tp)"
    std::set<int> ranks;
    std::size_t members = 0;
    bool point_to_point = false;
  };
  [[nodiscard]] std::map<std::uint32_t, Event> describe_events(const std::vector<std::uint32_t>& roots) const;
  [[nodiscard]] std::string describe_node(std::uint32_t root) const;
  [[nodiscard]] std::string describe_cycle(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges,
                                           const std::vector<std::uint32_t>& indegree) const;

  const ProgramSet& set_;
  const Index& index_;
  std::vector<int> class_rank_;  // a rank of each class
  std::vector<int> rank_class_;
  std::vector<std::uint32_t> offset_;
  std::vector<std::uint32_t> node_class_;
  mutable UnionFind joints_;  // find() compresses paths
};

std::size_t total_nodes(const ProgramSet& set, bool exact) {
  std::size_t n = 0;
  if (exact) {
    for (const RankProgram& r : set.ranks) n += ops_of(set, r.rank).size();
  } else {
    for (const auto& ops : set.programs) n += ops.size();
  }
  return n;
}

EventGraph::EventGraph(const ProgramSet& set, const Index& index, bool exact)
    : set_(set), index_(index), joints_(total_nodes(set, exact)) {
  if (exact) {
    for (const RankProgram& r : set.ranks) {
      rank_class_.push_back(r.rank);
      class_rank_.push_back(r.rank);
    }
  } else {
    std::vector<int> program_class(set.programs.size(), -1);
    for (const RankProgram& r : set.ranks) {
      int& c = program_class[static_cast<std::size_t>(r.program)];
      if (c < 0) {
        c = static_cast<int>(class_rank_.size());
        class_rank_.push_back(r.rank);
      }
      rank_class_.push_back(c);
    }
  }
  std::uint32_t next = 0;
  for (std::size_t c = 0; c < class_rank_.size(); ++c) {
    offset_.push_back(next);
    next += static_cast<std::uint32_t>(class_ops(c).size());
    node_class_.resize(next, static_cast<std::uint32_t>(c));
  }
  merge_collectives();
  merge_p2p();
}

const std::vector<OpId>& EventGraph::sequence(int rank, const CollectiveKey& key) const {
  static const std::vector<OpId> kEmpty;
  const auto& map = index_.collectives[static_cast<std::size_t>(set_.ranks[static_cast<std::size_t>(rank)].program)];
  const auto it = map.find(key);
  return it == map.end() ? kEmpty : it->second;
}

// The k-th collective of every member on (group, stream) is one event.
void EventGraph::merge_collectives() {
  for (std::size_t c = 0; c < index_.comms.size(); ++c) {
    for (Stream stream : {Stream::kTp, Stream::kDp}) {
      std::set<std::pair<int, int>> distinct;  // (class, handle)
      std::vector<int> representatives;
      for (int member : index_.comms[c].members) {
        const int handle = handle_of(index_, member, static_cast<int>(c));
        if (distinct.insert({rank_class_[static_cast<std::size_t>(member)], handle}).second)
          representatives.push_back(member);
      }
      if (representatives.size() < 2) continue;
      const int first = representatives.front();
      const auto key = [&](int rank) {
        return CollectiveKey{static_cast<std::uint32_t>(handle_of(index_, rank, static_cast<int>(c))), stream};
      };
      const std::vector<OpId>& reference = sequence(first, key(first));
      for (int other : representatives) {
        const std::vector<OpId>& mine = sequence(other, key(other));
        for (std::size_t k = 0; k < std::min(mine.size(), reference.size()); ++k) {
          joints_.unite(node(static_cast<std::size_t>(rank_class_[static_cast<std::size_t>(first)]), reference[k]),
                        node(static_cast<std::size_t>(rank_class_[static_cast<std::size_t>(other)]), mine[k]));
        }
      }
    }
  }
}

// The k-th send from A to B on a group and the k-th receive on B from A are one event.
void EventGraph::merge_p2p() {
  std::set<std::array<int, 6>> done;
  for (const RankProgram& rank : set_.ranks) {
    const int from_class = rank_class_[static_cast<std::size_t>(rank.rank)];
    for (const auto& [key, sends] : index_.p2p[static_cast<std::size_t>(rank.program)]) {
      const auto& [handle, peer, direction] = key;
      if (direction != P2pDirection::kSend) continue;
      const int comm = index_.rank_comms[static_cast<std::size_t>(rank.rank)][handle];
      const int to = rank.groups[handle].members[static_cast<std::size_t>(peer)];
      const int to_handle = handle_of(index_, to, comm);
      const int from_index = member_index(index_.comms[static_cast<std::size_t>(comm)], rank.rank);
      const int to_class = rank_class_[static_cast<std::size_t>(to)];
      if (!done.insert({from_class, static_cast<int>(handle), peer, to_class, to_handle, from_index}).second) continue;
      const auto& to_map = index_.p2p[static_cast<std::size_t>(set_.ranks[static_cast<std::size_t>(to)].program)];
      const auto recvs = to_map.find({static_cast<std::uint32_t>(to_handle), from_index, P2pDirection::kRecv});
      if (recvs == to_map.end()) continue;
      for (std::size_t k = 0; k < std::min(sends.size(), recvs->second.size()); ++k) {
        joints_.unite(node(static_cast<std::size_t>(from_class), sends[k]),
                      node(static_cast<std::size_t>(to_class), recvs->second[k]));
      }
    }
  }
}

std::string EventGraph::describe_node(std::uint32_t root) const { return describe_events({root}).at(root).text; }

// Each event's members as (rank, op), in one pass over every node.
std::map<std::uint32_t, EventGraph::Event> EventGraph::describe_events(const std::vector<std::uint32_t>& roots) const {
  std::map<std::uint32_t, Event> events;
  for (std::uint32_t root : roots) events[root];
  for (std::uint32_t n = 0; n < node_class_.size(); ++n) {
    const auto it = events.find(joints_.find(n));
    if (it == events.end()) continue;
    const std::size_t c = node_class_[n];
    const int rank = class_rank_[c];
    const OpId op = n - offset_[c];
    Event& e = it->second;
    e.ranks.insert(rank);
    e.point_to_point = e.point_to_point || std::holds_alternative<PointToPoint>(ops_of(set_, rank)[op].payload);
    if (++e.members <= 4) e.text += (e.text.empty() ? "" : " = ") + describe(set_, rank, op);
  }
  return events;
}

std::string EventGraph::find_cycle() {
  const std::size_t n = node_class_.size();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (std::size_t c = 0; c < class_rank_.size(); ++c) {
    const std::vector<Op>& ops = class_ops(c);
    std::array<std::int64_t, kStreamCount> last;
    last.fill(-1);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const std::uint32_t v = joints_.find(node(c, static_cast<OpId>(i)));
      for (OpId d : ops[i].deps) edges.emplace_back(joints_.find(node(c, d)), v);
      std::int64_t& previous = last[static_cast<std::size_t>(ops[i].stream)];
      if (previous >= 0) edges.emplace_back(joints_.find(node(c, static_cast<OpId>(previous))), v);
      previous = static_cast<std::int64_t>(i);
    }
  }
  for (const auto& [u, v] : edges) {
    if (u == v) return fmt::format("deadlock: an event waits for itself: {}", describe_node(u));
  }
  // Kahn's algorithm over successor lists in compressed form.
  std::vector<std::uint32_t> start(n + 1, 0), indegree(n, 0);
  for (const auto& [u, v] : edges) {
    ++start[u + 1];
    ++indegree[v];
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::uint32_t> successors(edges.size());
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for (const auto& [u, v] : edges) successors[fill[u]++] = v;
  std::vector<std::uint32_t> ready;
  for (std::uint32_t x = 0; x < n; ++x) {
    if (indegree[x] == 0) ready.push_back(x);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::uint32_t x = ready.back();
    ready.pop_back();
    ++done;
    for (std::uint32_t e = start[x]; e < start[x + 1]; ++e) {
      if (--indegree[successors[e]] == 0) ready.push_back(successors[e]);
    }
  }
  if (done == n) return {};
  return describe_cycle(edges, indegree);
}

// Every node left with a positive in-degree has a predecessor also left: walking predecessors from
// one of them must revisit a node, and the walk between the two visits is a cycle.
std::string EventGraph::describe_cycle(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges,
                                       const std::vector<std::uint32_t>& indegree) const {
  std::vector<std::vector<std::uint32_t>> predecessors(indegree.size());
  for (const auto& [u, v] : edges) {
    if (indegree[u] > 0 && indegree[v] > 0) predecessors[v].push_back(u);
  }
  std::uint32_t current = 0;
  while (indegree[current] == 0) ++current;
  std::vector<std::int64_t> position(indegree.size(), -1);
  std::vector<std::uint32_t> path;
  while (position[current] < 0) {
    position[current] = static_cast<std::int64_t>(path.size());
    path.push_back(current);
    current = predecessors[current].front();
  }
  std::vector<std::uint32_t> cycle(path.begin() + position[current], path.end());
  std::reverse(cycle.begin(), cycle.end());  // walked backwards; print in the order things wait
  const std::map<std::uint32_t, Event> events = describe_events(cycle);
  // Start at a send/receive pair, if any, so that runs between pairs are not split at the wrap.
  const auto pair = std::find_if(cycle.begin(), cycle.end(), [&](std::uint32_t e) {
    return events.at(e).point_to_point && events.at(e).members > 1;
  });
  if (pair != cycle.end()) std::rotate(cycle.begin(), pair, cycle.end());
  std::set<int> ranks;
  for (const auto& [root, e] : events) ranks.insert(e.ranks.begin(), e.ranks.end());
  // Long cycles print their send/receive pairs in full and summarize the events between them.
  const bool summarize = cycle.size() > 8 && pair != cycle.end();
  std::vector<std::string> steps;
  std::size_t run = 0;
  std::string run_from, run_to;
  const auto flush = [&] {
    if (run > 0) steps.push_back(fmt::format("({} events, from [{}] to [{}])", run, run_from, run_to));
    run = 0;
  };
  for (std::size_t i = 0; i < cycle.size() && steps.size() < 16; ++i) {
    const Event& e = events.at(cycle[i]);
    if (!summarize || (e.point_to_point && e.members > 1)) {
      flush();
      steps.push_back(fmt::format("[{}]", e.text));
    } else {
      if (run++ == 0) run_from = e.text;
      run_to = e.text;
    }
  }
  flush();
  std::string text;
  for (const std::string& step : steps) text += (text.empty() ? "" : " -> ") + step;
  return fmt::format("deadlock: a cycle of {} events through ranks {} waits on itself: {} -> back to the first",
                     cycle.size(), fmt::join(ranks, ", "), text);
}

}  // namespace

void check_cycles(const ProgramSet& set, const Index& index, std::vector<std::string>& problems, std::size_t room) {
  if (room == 0) return;
  std::string cycle = EventGraph(set, index, false).find_cycle();
  if (cycle.empty()) return;
  if (total_nodes(set, true) <= kExactNodeLimit) {
    cycle = EventGraph(set, index, true).find_cycle();
    if (cycle.empty()) return;  // the quotient merged ranks that the full graph keeps apart
  } else {
    cycle += " (found on the shared op lists; too large to confirm rank by rank)";
  }
  problems.push_back(std::move(cycle));
}

}  // namespace commscale::check
