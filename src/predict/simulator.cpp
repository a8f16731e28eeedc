// The event simulation (semantics in simulator.hpp). Durations are fixed per op, so no event queue
// is needed: an op's times follow from its predecessors alone, and a worklist of (rank, stream)
// heads advances every stream as far as its dependencies allow.

#include "predict/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "predict/sim_index.hpp"
#include "predict/sim_recording.hpp"

namespace commscale::predict {
namespace sim_detail {

// The calls of one (simulated rank, handle, category, peer): when each arrived, and who waits for the
// next one. The k-th arrival is call k of the channel.
struct Channel {
  std::vector<double> arrivals;
  std::vector<OpId> arrived;  // the op of each arrival, while the run records (SimRecording)
  std::vector<std::pair<int, OpId>> waiters;
};
using ChannelSlots = std::vector<std::vector<std::vector<Channel>>>;  // [sim][handle][0: collective; 1 + 2 peer (+1 recv)]

}  // namespace sim_detail

struct SimStorage::Impl {
  sim_detail::ChannelSlots slots;
  std::vector<std::vector<std::uint64_t>> instance;
  std::vector<std::pair<int, int>> work;
  std::vector<std::pair<int, OpId>> retry;
};

SimStorage::SimStorage() : impl_(std::make_unique<Impl>()) {}
SimStorage::~SimStorage() = default;
SimRecording::SimRecording() : impl_(std::make_unique<Impl>()) {}
SimRecording::~SimRecording() = default;

namespace {

using sim_detail::Channel;

constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();

class Channels {
 public:
  // Empties the slots of an earlier run, keeping their storage.
  Channels(const ProgramSet& set, const Simulation& sim, sim_detail::ChannelSlots& slots) : slots_(slots) {
    slots_.resize(sim.simulated.size());
    for (std::size_t i = 0; i < sim.simulated.size(); ++i) {
      auto& by_handle = slots_[i];
      by_handle.resize(set.ranks[static_cast<std::size_t>(sim.simulated[i])].groups.size());
      for (auto& channels : by_handle) {
        for (Channel& c : channels) {
          c.arrivals.clear();
          c.arrived.clear();
          c.waiters.clear();
        }
      }
    }
  }
  // `c`: a communication category (collectives have no peer).
  Channel& at(int sim, OpCategory c, std::uint32_t handle, int peer) {
    auto& slots = slots_[static_cast<std::size_t>(sim)][handle];
    const std::size_t index =
        c == OpCategory::kCollective ? 0 : 1 + 2 * static_cast<std::size_t>(peer) + (c == OpCategory::kRecv ? 1 : 0);
    if (index >= slots.size()) slots.resize(index + 1);
    return slots[index];
  }

 private:
  sim_detail::ChannelSlots& slots_;
};

// The host thread of each simulated rank (SimulationOptions::host): a cursor through the op list that
// issues one op after another at their issue costs, and stops at each synchronisation point until
// every op before it has completed: the step phase's first op with HostSync::kBeforeOptimizer, and the
// op after each run of pipeline sends and receives with HostCosts::sync_after_p2p. The points cut the
// op list into segments; the host passes point k once segment k (the ops from point k - 1 up to it)
// has completed, the segments before it having completed when it passed their points.
struct HostCursor {
  OpId next = 0;                  // the next op to issue
  double clock = 0.0;             // when the host finished issuing the op before `next`
  std::vector<OpId> sync_points;  // ascending; the host waits before each
  std::size_t at = 0;             // the next point the host will wait at
  std::vector<OpId> completed;    // ops of each segment that have completed
  std::vector<double> last_end;   // the latest end among them
  double passed_end = 0.0;        // the latest end of the ops before the points passed so far
  std::vector<int> waiting;       // streams that wait for the host while it waits at a point

  [[nodiscard]] OpId segment_begin(std::size_t k) const { return k == 0 ? 0 : sync_points[k - 1]; }
  [[nodiscard]] bool segment_done(std::size_t k) const {
    return completed[k] == sync_points[k] - segment_begin(k);
  }
};

class Engine {
 public:
  Engine(const ProgramSet& set, const OpCosts& costs, Simulation& sim, const std::vector<ProgramIndex>* indexes,
         SimStorage::Impl& storage, const HostCosts* host, SimRecording::Impl* recording)
      : costs_(costs),
        host_(host),
        recording_(recording),
        sim_(sim),
        index_(set, sim, indexes),
        channels_(set, sim, storage.slots),
        instance_(storage.instance),
        work_(storage.work),
        retry_(storage.retry) {
    const std::size_t n = sim.simulated.size();
    instance_.resize(n);
    work_.clear();
    next_.assign(n, {});
    for (std::size_t i = 0; i < n; ++i) {
      programs_.push_back(&ops_of(set, sim.simulated[i]));
      indexes_.push_back(&index_.program(static_cast<int>(i)));
      seconds_.push_back(costs.seconds_by_op(sim.simulated[i]));
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t ops = program(static_cast<int>(i)).size();
      sim.start[i].assign(ops, kUnset);
      sim.end[i].assign(ops, kUnset);
      sim.data_start[i].assign(ops, kUnset);
      instance_[i].assign(ops, 0);
      for (int s = 0; s < kStreamCount; ++s) work_.push_back({static_cast<int>(i), s});
    }
    sim.host_wait.assign(host_ != nullptr ? n : 0, 0.0);
    sim.issued.resize(host_ != nullptr ? n : 0);
    sim.host_hold.resize(host_ != nullptr ? n : 0);
    if (host_ != nullptr) start_hosts();
    if (recording_ != nullptr) start_recording();
  }

  void run() {
    while (!work_.empty()) {
      const auto [i, s] = work_.back();
      work_.pop_back();
      advance(i, s);
    }
    check_finished();
    if (recording_ != nullptr) recording_->recorded = true;
  }

 private:
  const std::vector<Op>& program(int i) const { return *programs_[static_cast<std::size_t>(i)]; }
  const ProgramIndex& index_of(int i) const { return *indexes_[static_cast<std::size_t>(i)]; }

  void advance(int i, int s) {
    auto& start = sim_.start[static_cast<std::size_t>(i)];
    auto& end = sim_.end[static_cast<std::size_t>(i)];
    const ProgramIndex& index = index_of(i);
    const auto& order = index.streams[static_cast<std::size_t>(s)];
    std::size_t& next = next_[static_cast<std::size_t>(i)][static_cast<std::size_t>(s)];
    while (next < order.size()) {
      const OpId id = order[next];
      if (!std::isnan(end[id])) {
        ++next;
        continue;
      }
      if (!std::isnan(start[id])) return;  // reached, waiting for its peers
      double ready = next > 0 ? end[order[next - 1]] : 0.0;
      for (std::uint32_t k = index.deps_begin[id]; k < index.deps_begin[id + 1]; ++k) {
        const OpId d = index.deps[k];
        if (std::isnan(end[d])) return;  // its completion pushes this stream again
        ready = std::max(ready, end[d]);
      }
      if (host_ != nullptr) {
        const double issued = issue(i, id);
        if (std::isnan(issued)) {  // the host waits at its synchronisation: its end pushes this stream again
          hosts_[static_cast<std::size_t>(i)].waiting.push_back(s);
          return;
        }
        if (issued > ready && index.info[id].compute()) sim_.host_wait[static_cast<std::size_t>(i)] += issued - ready;
        if (issued > ready) sim_.host_hold[static_cast<std::size_t>(i)][id] = issued - ready;
        ready = std::max(ready, issued);
      }
      start[id] = ready;
      const OpInfo& info = index.info[id];
      if (recording_ != nullptr) record_start(i, id, info, next > 0 ? order[next - 1] : kFirst);
      if (info.local()) {
        sim_.data_start[static_cast<std::size_t>(i)][id] = ready;
        complete(i, id, ready + duration(i, id));
        ++next;
        continue;
      }
      arrive(i, id, info);
      if (std::isnan(end[id])) return;
      ++next;
    }
  }

  double duration(int i, OpId id) const {
    const double* seconds = seconds_[static_cast<std::size_t>(i)];
    if (seconds != nullptr) return seconds[id];
    return costs_.duration(sim_.simulated[static_cast<std::size_t>(i)], program(i)[id]).value();
  }

  void start_hosts() {
    hosts_.assign(sim_.simulated.size(), {});
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      const std::vector<Op>& ops = program(static_cast<int>(i));
      const std::vector<OpInfo>& info = index_of(static_cast<int>(i)).info;
      HostCursor& h = hosts_[i];
      h.clock = host_->step.value();
      if (host_->sync == HostSync::kBeforeOptimizer) {
        const auto first =
            std::find_if(info.begin(), info.end(), [](const OpInfo& op) { return op.host_phase == HostPhase::kStep; });
        if (first != info.end()) h.sync_points.push_back(static_cast<OpId>(first - info.begin()));
      }
      if (host_->sync_after_p2p) {
        const auto p2p = [&](std::size_t k) {
          return info[k].category == OpCategory::kSend || info[k].category == OpCategory::kRecv;
        };
        for (std::size_t k = 0; k + 1 < info.size(); ++k) {
          if (p2p(k) && !p2p(k + 1)) h.sync_points.push_back(static_cast<OpId>(k + 1));
        }
        std::sort(h.sync_points.begin(), h.sync_points.end());
        h.sync_points.erase(std::unique(h.sync_points.begin(), h.sync_points.end()), h.sync_points.end());
      }
      h.completed.assign(h.sync_points.size(), 0);
      h.last_end.assign(h.sync_points.size(), 0.0);
      sim_.issued[i].assign(ops.size(), kUnset);
      sim_.host_hold[i].assign(ops.size(), 0.0);
    }
  }

  // When the host of rank i finished issuing op `id` (issuing every op before it first), or NaN while
  // it waits at its synchronisation.
  double issue(int i, OpId id) {
    auto& issued = sim_.issued[static_cast<std::size_t>(i)];
    HostCursor& h = hosts_[static_cast<std::size_t>(i)];
    while (h.next <= id) {
      if (h.at < h.sync_points.size() && h.next == h.sync_points[h.at]) {
        if (!h.segment_done(h.at)) return kUnset;
        h.passed_end = std::max(h.passed_end, h.last_end[h.at]);
        h.clock = std::max(h.clock, h.passed_end);
        ++h.at;
      }
      const OpInfo& op = index_of(i).info[h.next];  // what issue_cost reads of the Op, without reading it
      h.clock += issue_cost(*host_, op.host_phase, op.host_class, op.host_continued).value();
      issued[h.next++] = h.clock;
    }
    return issued[id];
  }

  void complete(int i, OpId id, double at) {
    sim_.end[static_cast<std::size_t>(i)][id] = at;
    if (host_ != nullptr) {
      HostCursor& h = hosts_[static_cast<std::size_t>(i)];
      const auto point = std::upper_bound(h.sync_points.begin(), h.sync_points.end(), id);
      if (point != h.sync_points.end()) {
        const auto k = static_cast<std::size_t>(point - h.sync_points.begin());
        h.last_end[k] = std::max(h.last_end[k], at);
        ++h.completed[k];
        if (k == h.at && h.segment_done(k)) {
          for (const int s : h.waiting) work_.push_back({i, s});
          h.waiting.clear();
        }
      }
    }
    const ProgramIndex& index = index_of(i);
    for (std::uint32_t k = index.dependents_begin[id]; k < index.dependents_begin[id + 1]; ++k) {
      work_.push_back({i, static_cast<int>(index.info[index.dependents[k]].stream)});
    }
  }

  // Records that rank i reached a communication op, then completes it if its peers have reached theirs.
  void arrive(int i, OpId id, const OpInfo& info) {
    Channel& channel = channels_.at(i, info.category, info.group, info.peer);
    instance_[static_cast<std::size_t>(i)][id] = channel.arrivals.size();
    channel.arrivals.push_back(sim_.start[static_cast<std::size_t>(i)][id]);
    if (recording_ != nullptr) channel.arrived.push_back(id);
    // Swapped, not moved, so that both vectors keep their storage (arrive is not re-entered).
    retry_.clear();
    std::swap(retry_, channel.waiters);
    try_complete(i, id);
    for (const auto& [j, waiting] : retry_) {
      if (std::isnan(sim_.end[static_cast<std::size_t>(j)][waiting]) && try_complete(j, waiting)) {
        work_.push_back({j, static_cast<int>(index_of(j).info[waiting].stream)});
      }
    }
  }

  // The arrival of the k-th call on a channel, or NaN (and rank i's op waits on that channel).
  static double arrival_of(Channel& channel, std::uint64_t k, int i, OpId id) {
    if (channel.arrivals.size() > k) return channel.arrivals[k];
    channel.waiters.push_back({i, id});
    return kUnset;
  }

  bool try_complete(int i, OpId id) {
    const OpInfo& info = index_of(i).info[id];
    const std::uint64_t k = instance_[static_cast<std::size_t>(i)][id];
    double data_start = sim_.start[static_cast<std::size_t>(i)][id];
    if (info.category == OpCategory::kCollective) {
      for (const Participant& m : index_.members(i, info.group)) {
        const double at = arrival_of(channels_.at(m.sim, OpCategory::kCollective, m.handle, 0), k, i, id);
        if (std::isnan(at)) return false;
        data_start = std::max(data_start, at);
      }
    } else {
      const Participant other = index_.counterpart(i, info.group, info.peer);
      const OpCategory cat = info.category == OpCategory::kSend ? OpCategory::kRecv : OpCategory::kSend;
      const double at = arrival_of(channels_.at(other.sim, cat, other.handle, other.peer), k, i, id);
      if (std::isnan(at)) return false;
      data_start = std::max(data_start, at);
    }
    sim_.data_start[static_cast<std::size_t>(i)][id] = data_start;
    complete(i, id, data_start + duration(i, id));
    if (recording_ != nullptr) record_match(i, id, info, k);
    return true;
  }

  using Recorded = SimRecording::Impl;

  void start_recording() {
    Recorded& r = *recording_;
    r.recorded = false;
    r.simulated = sim_.simulated;
    r.stand_in = sim_.stand_in;
    r.host = host_ != nullptr;
    r.host_costs = host_ != nullptr ? *host_ : HostCosts{};
    r.steps.clear();
    r.reads.clear();
    r.issue.clear();
    r.sync_points.clear();
    for (std::size_t i = 0; i < sim_.simulated.size(); ++i) {
      std::vector<double>& issue = r.issue.emplace_back();
      for (const OpInfo& op : index_of(static_cast<int>(i)).info) {
        issue.push_back(host_ != nullptr ? issue_cost(*host_, op.host_phase, op.host_class, op.host_continued).value()
                                         : 0.0);
      }
      r.sync_points.push_back(host_ != nullptr ? hosts_[i].sync_points : std::vector<OpId>{});
    }
  }

  static constexpr OpId kFirst = std::numeric_limits<OpId>::max();  // no op before it on its stream

  // Rank i's op started, after the op `before` on its stream (kFirst: none) and its deps, as advance
  // read them.
  void record_start(int i, OpId id, const OpInfo& info, OpId before) {
    Recorded& r = *recording_;
    const auto sim = static_cast<std::uint32_t>(i);
    const ProgramIndex& index = index_of(i);
    const bool after_stream = before != kFirst;
    if (after_stream) r.reads.push_back({sim, before});
    for (std::uint32_t k = index.deps_begin[id]; k < index.deps_begin[id + 1]; ++k)
      r.reads.push_back({sim, index.deps[k]});
    r.steps.push_back({.sim = sim,
                       .op = id,
                       .kind = info.local() ? Recorded::Kind::kRun : Recorded::Kind::kArrive,
                       .after_stream = after_stream,
                       .compute = info.compute(),
                       .reads_end = static_cast<std::uint32_t>(r.reads.size())});
  }

  // Rank i's communication op began to move data: matched with the k-th call of each channel try_complete read.
  void record_match(int i, OpId id, const OpInfo& info, std::uint64_t k) {
    Recorded& r = *recording_;
    const auto read = [&](int sim, const Channel& channel) {
      r.reads.push_back({static_cast<std::uint32_t>(sim), channel.arrived[k]});
    };
    if (info.category == OpCategory::kCollective) {
      for (const Participant& m : index_.members(i, info.group)) {
        read(m.sim, channels_.at(m.sim, OpCategory::kCollective, m.handle, 0));
      }
    } else {
      const Participant other = index_.counterpart(i, info.group, info.peer);
      const OpCategory cat = info.category == OpCategory::kSend ? OpCategory::kRecv : OpCategory::kSend;
      read(other.sim, channels_.at(other.sim, cat, other.handle, other.peer));
    }
    r.steps.push_back({.sim = static_cast<std::uint32_t>(i),
                       .op = id,
                       .kind = Recorded::Kind::kMatch,
                       .reads_end = static_cast<std::uint32_t>(r.reads.size())});
  }

  void check_finished() const {
    for (std::size_t i = 0; i < sim_.end.size(); ++i) {
      for (std::size_t id = 0; id < sim_.end[i].size(); ++id) {
        if (!std::isnan(sim_.end[i][id])) continue;
        const Op& op = program(static_cast<int>(i))[id];
        throw RuntimeFailure(fmt::format("simulation stalled: rank {} never completes op {} '{}' on stream {}",
                                         sim_.simulated[i], id, op.name, name(op.stream)));
      }
    }
  }

  const OpCosts& costs_;
  const HostCosts* host_;  // null: ops are issued at once
  SimRecording::Impl* recording_;  // null: the run records nothing
  std::vector<HostCursor> hosts_;
  Simulation& sim_;
  SimIndex index_;
  std::vector<const std::vector<Op>*> programs_;  // by simulated index: its op list and index, looked up once
  std::vector<const ProgramIndex*> indexes_;
  std::vector<const double*> seconds_;  // by simulated index: OpCosts::seconds_by_op, or null
  std::vector<std::array<std::size_t, kStreamCount>> next_;
  Channels channels_;
  std::vector<std::vector<std::uint64_t>>& instance_;  // [i][op]: k of a communication call
  std::vector<std::pair<int, int>>& work_;
  std::vector<std::pair<int, OpId>>& retry_;  // arrive's waiters to retry
};

}  // namespace

Simulation simulate(const ProgramSet& set, const OpCosts& costs, const SimulationOptions& options) {
  Simulation sim;
  simulate(set, costs, options, sim);
  return sim;
}

void simulate(const ProgramSet& set, const OpCosts& costs, const SimulationOptions& options, Simulation& sim) {
  const auto n = static_cast<std::size_t>(set.world_size);
  std::vector<int> classes(n);
  if (options.reduce) {
    classes = symmetry_classes(set, costs);
  } else {
    for (std::size_t r = 0; r < n; ++r) classes[r] = static_cast<int>(r);
  }
  std::vector<int> first(n, -1);
  sim.simulated.clear();
  sim.class_size.clear();
  sim.stand_in.assign(n, -1);
  for (std::size_t r = 0; r < n; ++r) {
    int& f = first[static_cast<std::size_t>(classes[r])];
    if (f < 0) {
      f = static_cast<int>(sim.simulated.size());
      sim.simulated.push_back(static_cast<int>(r));
      sim.class_size.push_back(0);
    }
    sim.stand_in[r] = f;
    ++sim.class_size[static_cast<std::size_t>(f)];
  }
  sim.start.resize(sim.simulated.size());
  sim.end.resize(sim.simulated.size());
  sim.data_start.resize(sim.simulated.size());
  const HostCosts* host = options.host != nullptr && !options.host->zero() ? options.host : nullptr;
  SimRecording::Impl* recording = options.recording != nullptr ? &options.recording->impl() : nullptr;
  if (recording != nullptr && recording->serves(sim, host)) {
    replay(*recording, set, costs, host, sim);
  } else {
    std::unique_ptr<SimStorage> own;
    if (options.storage == nullptr) own = std::make_unique<SimStorage>();
    SimStorage& storage = options.storage != nullptr ? *options.storage : *own;
    Engine(set, costs, sim, options.indexes, storage.impl(), host, recording).run();
  }
  double last = 0.0;
  for (const auto& ends : sim.end) {
    for (const double e : ends) last = std::max(last, e);
  }
  sim.step_time = Seconds(last);
}

}  // namespace commscale::predict
