#include "predict/op_costs.hpp"

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace commscale::predict {
namespace {

using GroupKey = std::pair<std::string, std::vector<int>>;

// Equal links, equal id: what makes two ranks' costs provably the same.
template <class T, class Key>
std::vector<int> value_ids(const std::vector<T>& items, Key key) {
  std::map<decltype(key(items.front())), int> ids;
  std::vector<int> out;
  out.reserve(items.size());
  for (const T& item : items) out.push_back(ids.try_emplace(key(item), static_cast<int>(ids.size())).first->second);
  return out;
}

auto group_value(const GroupLinks& g) {
  return std::make_tuple(g.ranks, g.nodes, g.local, static_cast<int>(g.intra_class), g.intra_nvlink, g.intra_bw.value(),
                         g.inter_bw.value(), g.alone_bw.value(), g.intra_latency.value(), g.inter_latency.value());
}

auto flow_value(const FlowLinks& f) {
  return std::make_tuple(static_cast<int>(f.path_class), f.bw.value(), f.latency.value());
}

// Handles that carry collectives in each program, and whether any of them is an all-to-all.
std::vector<std::set<std::uint32_t>> collective_handles(const ProgramSet& set, std::set<std::uint32_t>* all_to_all) {
  std::vector<std::set<std::uint32_t>> out(set.programs.size());
  for (std::size_t p = 0; p < set.programs.size(); ++p) {
    for (const Op& op : set.programs[p]) {
      if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
        out[p].insert(c->group);
        if (c->kind == Collective::kAllToAll) all_to_all->insert(c->group);
      }
    }
  }
  return out;
}

}  // namespace

ProgramCosts::ProgramCosts(const ProgramSet& set, const Target& target, LinkAnalyzer& analyzer)
    : set_(set), target_(target), compute_(set.programs.size()) {
  analyze_groups(analyzer);
  analyze_flows(analyzer);
  make_signatures();
}

ProgramCosts::ProgramCosts(const ProgramSet& set, const Target& target, std::vector<GroupLinks> links)
    : set_(set), target_(target), links_(std::move(links)), compute_(set.programs.size()) {
  std::set<std::uint32_t> all_to_all_handles;
  const auto handles = collective_handles(set_, &all_to_all_handles);
  group_of_.assign(set_.ranks.size(), {});
  for (const RankProgram& rp : set_.ranks) {
    auto& of = group_of_[static_cast<std::size_t>(rp.rank)];
    of.assign(rp.groups.size(), -1);
    for (const std::uint32_t h : handles[static_cast<std::size_t>(rp.program)]) {
      if (h >= links_.size()) throw std::logic_error(fmt::format("ProgramCosts: no links for group handle {}", h));
      of[h] = static_cast<int>(h);
    }
  }
  for (const std::vector<Op>& ops : set_.programs) {
    for (const Op& op : ops) {
      if (std::holds_alternative<PointToPoint>(op.payload)) {
        throw std::logic_error("ProgramCosts: a set of stand-in groups has no transfers");
      }
    }
  }
  // An all-to-all's time needs its pairs' paths, which only a link analysis of the real group finds.
  if (!all_to_all_handles.empty()) throw std::logic_error("ProgramCosts: an all-to-all on a stand-in group");
  all_to_all_.resize(links_.size());
  if (!links_.empty()) links_value_ = value_ids(links_, group_value);
  make_signatures();
}

void ProgramCosts::analyze_groups(LinkAnalyzer& analyzer) {
  std::set<std::uint32_t> all_to_all_handles;
  const auto handles = collective_handles(set_, &all_to_all_handles);
  std::map<GroupKey, int> index;
  std::map<std::string, std::vector<int>> by_name;  // distinct group indices per name
  std::set<std::string> with_all_to_all;            // names of groups an all-to-all runs on
  std::vector<std::vector<int>> members;
  group_of_.assign(set_.ranks.size(), {});
  for (const RankProgram& rp : set_.ranks) {
    auto& of = group_of_[static_cast<std::size_t>(rp.rank)];
    of.assign(rp.groups.size(), -1);
    for (const std::uint32_t h : handles[static_cast<std::size_t>(rp.program)]) {
      const Group& g = rp.groups.at(h);
      const std::string group_name(name(g.role));
      const auto [it, added] = index.try_emplace({group_name, g.members}, static_cast<int>(members.size()));
      if (added) {
        members.push_back(g.members);
        by_name[group_name].push_back(it->second);
      }
      of[h] = it->second;
      if (all_to_all_handles.contains(h)) with_all_to_all.insert(group_name);
    }
  }
  links_.resize(members.size());
  all_to_all_.resize(members.size());
  for (const auto& [name, ids] : by_name) {
    std::vector<std::vector<int>> siblings;
    for (const int id : ids) siblings.push_back(members[static_cast<std::size_t>(id)]);
    const std::vector<GroupLinks> links = analyzer.groups(siblings);
    // Every pair of every group: members^2 paths, 2e9 of them for dp 4096 groups of 524,288 ranks.
    // Only an all-to-all reads them, so they are found only for the groups that run one.
    const std::vector<FlowLinks> a2a =
        with_all_to_all.contains(name) ? analyzer.all_to_all(siblings) : std::vector<FlowLinks>(siblings.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      links_[static_cast<std::size_t>(ids[i])] = links[i];
      all_to_all_[static_cast<std::size_t>(ids[i])] = a2a[i];
      auto [slowest, added] = slowest_groups_.try_emplace(name, links[i]);
      if (!added && links[i].bus_bw() < slowest->second.bus_bw()) slowest->second = links[i];
    }
  }
  if (!links_.empty()) links_value_ = value_ids(links_, group_value);
}

void ProgramCosts::analyze_flows(LinkAnalyzer& analyzer) {
  // The point-to-point ops of each program, so that ranks need not walk their whole list.
  std::vector<std::vector<const PointToPoint*>> transfers(set_.programs.size());
  for (std::size_t p = 0; p < set_.programs.size(); ++p) {
    for (const Op& op : set_.programs[p]) {
      if (const auto* t = std::get_if<PointToPoint>(&op.payload)) transfers[p].push_back(t);
    }
  }
  const auto of_rank = [&](const RankProgram& rp) -> const auto& {
    return transfers[static_cast<std::size_t>(rp.program)];
  };
  std::map<std::string, std::vector<std::pair<int, int>>> sends;             // by group name: (src, dst)
  std::map<std::pair<int, int>, std::pair<std::string, std::size_t>> where;  // flow -> (name, position)
  std::map<std::string, std::string_view> charged;                           // group name -> charged name
  for (const RankProgram& rp : set_.ranks) {
    for (const PointToPoint* p : of_rank(rp)) {
      if (p->direction != P2pDirection::kSend) continue;
      const std::pair<int, int> flow{rp.rank, world_peer(rp, *p)};
      const GroupRole role = rp.groups.at(p->group).role;
      const std::string name(commscale::name(role));
      charged.try_emplace(name, charged_name(role));
      if (where.try_emplace(flow, name, sends[name].size()).second) sends[name].push_back(flow);
    }
  }
  std::map<std::pair<std::string, std::size_t>, int> flow_index;
  for (const auto& [name, flows] : sends) {
    const std::vector<FlowLinks> links = analyzer.flows(flows);
    for (std::size_t i = 0; i < flows.size(); ++i) {
      flow_index[{name, i}] = static_cast<int>(flows_.size());
      flows_.push_back(links[i]);
      auto [slowest, added] = slowest_flows_.try_emplace(std::string(charged.at(name)), links[i]);
      if (!added && links[i].bw < slowest->second.bw) slowest->second = links[i];
    }
  }
  for (const RankProgram& rp : set_.ranks) {
    for (const PointToPoint* p : of_rank(rp)) {
      const bool send = p->direction == P2pDirection::kSend;
      const int peer = world_peer(rp, *p);
      const auto found = where.find(send ? std::pair{rp.rank, peer} : std::pair{peer, rp.rank});
      if (found != where.end()) flow_of_[{rp.rank, p->group, p->peer, send ? 1 : 0}] = flow_index.at(found->second);
    }
  }
  if (!flows_.empty()) flows_value_ = value_ids(flows_, flow_value);
}

void ProgramCosts::make_signatures() {
  std::map<std::vector<int>, std::uint64_t> ids;
  std::vector<std::vector<int>> keys(set_.ranks.size());
  for (std::size_t r = 0; r < set_.ranks.size(); ++r) {
    for (const int g : group_of_[r]) keys[r].push_back(g < 0 ? -1 : links_value_[static_cast<std::size_t>(g)]);
  }
  for (const auto& [key, flow] : flow_of_) {
    keys[static_cast<std::size_t>(std::get<0>(key))].push_back(flows_value_[static_cast<std::size_t>(flow)]);
  }
  for (const auto& key : keys) signatures_.push_back(ids.try_emplace(key, ids.size()).first->second);
}

std::uint64_t ProgramCosts::signature(int rank) const { return signatures_.at(static_cast<std::size_t>(rank)); }

const GroupLinks* ProgramCosts::group_links(int rank, std::uint32_t handle) const {
  const auto& of = group_of_.at(static_cast<std::size_t>(rank));
  if (handle >= of.size() || of[handle] < 0) return nullptr;
  return &links_[static_cast<std::size_t>(of[handle])];
}

InterferenceModel::Load ProgramCosts::comm_load(int rank, const Op& op) const {
  const double seconds = duration(rank, op).value();
  if (seconds <= 0) return {};
  if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
    const int g = group_of_.at(static_cast<std::size_t>(rank)).at(c->group);
    const GroupLinks& links = links_[static_cast<std::size_t>(g)];
    const GBps busbw = CommModel::bus_bandwidth(c->kind, c->bytes, c->dtype, links.ranks, Seconds(seconds));
    return target_.interference.load(nccl_channels(links.bottleneck_class()), busbw);
  }
  const auto& p = std::get<PointToPoint>(op.payload);
  const bool send = p.direction == P2pDirection::kSend;
  const FlowLinks& flow = flows_[static_cast<std::size_t>(flow_of_.at({rank, p.group, p.peer, send ? 1 : 0}))];
  return target_.interference.load(nccl_channels(flow.path_class), bandwidth(p.bytes, Seconds(seconds)));
}

double ProgramCosts::gemm_share(int /*rank*/, const Op& op) const {
  return std::holds_alternative<Gemm>(op.payload) ? 1.0 : 0.0;
}

const CommEstimate& ProgramCosts::comm_estimate(int rank, const Op& op) const {
  if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
    const int g = group_of_.at(static_cast<std::size_t>(rank)).at(c->group);
    const auto key =
        std::make_tuple(links_value_[static_cast<std::size_t>(g)], static_cast<int>(c->kind), c->bytes.count());
    const auto found = comm_.find(key);
    if (found != comm_.end()) return found->second;
    const auto gi = static_cast<std::size_t>(g);
    return comm_.emplace(key, target_.comm.collective(c->kind, c->bytes, links_[gi], &all_to_all_[gi])).first->second;
  }
  const auto& p = std::get<PointToPoint>(op.payload);
  const bool send = p.direction == P2pDirection::kSend;
  const int f = flow_of_.at({rank, p.group, p.peer, send ? 1 : 0});
  const auto key = std::make_tuple(flows_value_[static_cast<std::size_t>(f)], -1, p.bytes.count());
  const auto found = comm_.find(key);
  if (found != comm_.end()) return found->second;
  return comm_.emplace(key, target_.comm.point_to_point(p.bytes, flows_[static_cast<std::size_t>(f)])).first->second;
}

Seconds ProgramCosts::duration(int rank, const Op& op) const {
  if (std::holds_alternative<CollectiveOp>(op.payload) || std::holds_alternative<PointToPoint>(op.payload)) {
    return comm_estimate(rank, op).time;
  }
  const auto program = static_cast<std::size_t>(set_.ranks.at(static_cast<std::size_t>(rank)).program);
  auto& cache = compute_[program];
  if (cache.empty()) cache.assign(set_.programs[program].size(), std::numeric_limits<double>::quiet_NaN());
  double& t = cache.at(op.id);
  if (std::isnan(t)) t = target_.compute.time(op.payload, op.phase).value();
  return Seconds(t);
}

Seconds ProgramCosts::latency(int rank, const Op& op) const {
  if (std::holds_alternative<CollectiveOp>(op.payload) || std::holds_alternative<PointToPoint>(op.payload)) {
    return comm_estimate(rank, op).latency;
  }
  return Seconds(0.0);
}

}  // namespace commscale::predict
