#include "program/arrivals.hpp"

#include <algorithm>

namespace commscale {

StepEvents::StepEvents(const ProgramSet& set, const Timeline& timeline, int step) {
  const auto n = static_cast<std::size_t>(set.world_size);
  base_.assign(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) base_[r + 1] = base_[r] + ops_of(set, static_cast<int>(r)).size();
  events_.assign(base_[n], nullptr);
  for (const TimelineEvent& e : timeline.events) {
    if (e.step == step) events_[base(e.rank) + e.op] = &e;
  }
}

Arrivals::Arrivals(const ProgramSet& set, const StepEvents& events) : set_(set), events_(events) {
  for (int r = 0; r < set.world_size; ++r) visit_rank(r);
}

double Arrivals::data_start(int rank, OpId op, double own_start) const {
  const auto it = latest_.find(key_of_[events_.base(rank) + op]);
  return it == latest_.end() ? own_start : std::max(own_start, it->second);
}

void Arrivals::visit_rank(int r) {
  const RankProgram& rp = set_.ranks[static_cast<std::size_t>(r)];
  std::map<std::tuple<std::uint32_t, int, int>, std::uint64_t> counts;
  for (const Op& op : ops_of(set_, r)) {
    const TimelineEvent* e = events_.at(r, op.id);
    Key key{-1, 0, 0, 0, 0};
    if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
      const auto& members = rp.groups.at(c->group).members;
      const int lowest = *std::min_element(members.begin(), members.end());
      key = Key{0, c->group, lowest, 0, counts[{c->group, lowest, -1}]++};
    } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
      const int peer = world_peer(rp, *p);
      const bool send = p->direction == P2pDirection::kSend;
      const int from = send ? r : peer;
      const int to = send ? peer : r;
      key = Key{1, p->group, from, to, counts[{p->group, from, to}]++};
    }
    key_of_.push_back(key);
    if (std::get<0>(key) < 0 || e == nullptr) continue;
    double& latest = latest_[key];
    latest = std::max(latest, e->start.value());
  }
}

}  // namespace commscale
