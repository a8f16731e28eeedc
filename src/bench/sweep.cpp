#include "bench/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "core/size.hpp"

namespace commscale {

struct CollectiveSweep::Case {
  Collective collective;
  DataType type;
  ReduceOp op;
  int root;
  CollectiveLayout layout;
  // alltoallv only (AlltoallvLayout): this rank's elements to and from each peer, and the size column.
  std::vector<std::uint64_t> send_counts;
  std::vector<std::uint64_t> recv_counts;
  Bytes mean_bytes;
  TrafficLoad load;
};

namespace {

bool has_alltoallv(const BenchOptions& o) {
  return std::find(o.collectives.begin(), o.collectives.end(), Collective::kAllToAllV) != o.collectives.end();
}

// alltoallv's traffic for a group of `n` (uniform, and no routing generated, without alltoallv).
TrafficMatrix group_traffic(const BenchOptions& o, int n) {
  return has_alltoallv(o) ? alltoallv_traffic(o.matrix, o.routing, n) : uniform_traffic(n);
}

double combine(const std::vector<double>& values, RankCombine how) {
  switch (how) {
    case RankCombine::kRank0:
      return values.front();
    case RankCombine::kMean:
      return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    case RankCombine::kMin:
      return *std::min_element(values.begin(), values.end());
    case RankCombine::kMax:
      return *std::max_element(values.begin(), values.end());
  }
  return values.front();
}

}  // namespace

std::vector<std::vector<int>> split_groups(const Split& split, int world_size) {
  if (split.kind == SplitKind::kNone) {
    std::vector<int> all(static_cast<std::size_t>(world_size));
    std::iota(all.begin(), all.end(), 0);
    return {all};
  }
  const int size = split.group_size;
  if (size < 1 || world_size % size != 0) {
    throw InputError("--split",
                     fmt::format("groups of {} ranks do not divide the {} ranks of the job", size, world_size),
                     "a group size that divides the number of ranks");
  }
  const int count = world_size / size;
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(count));
  for (int r = 0; r < world_size; ++r) {
    const int group = split.kind == SplitKind::kConsecutive ? r / size : r % count;
    groups[static_cast<std::size_t>(group)].push_back(r);
  }
  return groups;
}

CollectiveSweep::CollectiveSweep(const BenchOptions& options, Backend& backend, Communicator& world_comm,
                                 const MpiComm& world)
    : options_(options), backend_(backend), world_(world) {
  try {
    groups_ = options.groups.empty() ? split_groups(options.split, world.size()) : options.groups;
    traffic_ = group_traffic(options, static_cast<int>(groups_.front().size()));
  } catch (const InputError& e) {
    fail_on_all_ranks(world, e);
  }
  const int group_size = static_cast<int>(groups_.front().size());
  for (int root : options.roots) {
    if (root >= group_size) {
      fail_on_all_ranks(world, InputError("-r/--root", fmt::format("rank {} is not in a group of {}", root, group_size),
                                          fmt::format("a root below {}", group_size)));
    }
  }
  int color = 0;
  int key = world.rank();  // the rank's place in its group: split groups list ranks in order, explicit ones need not
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto at = std::find(groups_[g].begin(), groups_[g].end(), world.rank());
    if (at == groups_[g].end()) continue;
    color = static_cast<int>(g);
    key = static_cast<int>(at - groups_[g].begin());
  }
  group_ = world_comm.split(groups_.size() == 1 ? 0 : color, key);
  group_->queue().set_timeout(options.timeout);

  std::uint64_t largest = 0;
  for (const Case& c : cases()) largest = std::max(largest, c.layout.size.count());
  send_ = backend_.allocate(Bytes(largest), "send buffer");
  recv_ = backend_.allocate(Bytes(largest), "receive buffer");
}

BenchSetup CollectiveSweep::setup(const RunContext& context) const {
  BenchSetup s;
  s.context = context;
  s.options = options_;
  s.group_size = group_->size();
  s.groups = static_cast<int>(groups_.size());
  s.group_ranks = groups_;
  s.timing = group_->queue().timing_method();
  if (has_alltoallv(options_)) s.traffic = traffic_;
  if (options_.graph_launches > 0) {
    s.timing += fmt::format(", around {} replays of a CUDA graph of {} iterations (sample = replay time / {})",
                            options_.graph_launches, options_.iters, options_.iters);
  } else if (options_.blocking != Blocking::kNone) {
    s.timing += options_.blocking == Blocking::kWait ? ", each iteration completed before the next"
                                                     : ", each iteration completed and followed by a barrier";
  }
  return s;
}

CollectiveCall CollectiveSweep::call(const Case& c, bool in_place, int iteration) const {
  const CollectiveLayout& l = c.layout;
  const std::uint64_t element = size_of(c.type);
  // Like nccl-tests, each iteration moves to a new offset in the buffers so small sizes are not
  // served from the previous iteration's cache lines; the checked run uses offset 0.
  const std::uint64_t steps =
      l.size.count() > 0 ? std::max<std::uint64_t>(1, send_->size().count() / l.size.count()) : 1;
  const std::uint64_t shift = l.size.count() * (static_cast<std::uint64_t>(iteration) % steps);
  CollectiveCall call{c.collective, send_->data() + shift, recv_->data() + shift, l.count, c.type, c.op,
                      c.root,       c.send_counts,         c.recv_counts};
  if (in_place) {
    call.send = call.recv + l.send_inplace_offset * element;
    call.recv = call.recv + l.recv_inplace_offset * element;
  }
  return call;
}

void CollectiveSweep::start(const CollectiveCall& call) {
  const std::uint64_t index = calls_++;
  const std::optional<CollectiveSkip>& skip = options_.skip;
  if (skip && skip->rank == world_.rank() && skip->index <= index) return;  // testing: a rank hung from here on
  // testing: a rank that falls behind (doctor's --inject-slow-rank)
  if (options_.delay && options_.delay->rank == world_.rank()) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(options_.delay->delay_us));
  }
  group_->start(call);
}

// This rank's times for one placement: the loop time per iteration first, then one sample per
// iteration (or per graph replay).
std::vector<double> CollectiveSweep::time_iterations(const Case& c, bool in_place) {
  const std::string what = fmt::format("{} of {}", name(c.collective), format_size(c.layout.size));
  fill_inputs(c, in_place, 0);
  for (int i = 0; i < options_.warmup; ++i) start(call(c, in_place, i));
  group_->queue().wait(what + " (warmup)");
  world_.barrier();

  std::vector<double> times = options_.graph_launches > 0            ? time_graph_replays(c, in_place, what)
                              : options_.blocking != Blocking::kNone ? time_one_by_one(c, in_place, what)
                                                                     : time_back_to_back(c, in_place, what);
  if (times[0] == 0.0) {  // graph and blocking modes: the loop time is the mean sample
    times[0] = std::accumulate(times.begin() + 1, times.end(), 0.0) / static_cast<double>(times.size() - 1);
  }
  return times;
}

// The loop is timed as a whole first, as nccl-tests times it: a mark between iterations costs the
// host the time to record it, which shows when launches, not the GPU, set the pace (small sizes). A
// second loop with a mark between iterations gives the per-iteration samples.
std::vector<double> CollectiveSweep::time_back_to_back(const Case& c, bool in_place, const std::string& what) {
  Queue& queue = group_->queue();
  const int iters = options_.iters;
  queue.reserve_marks(iters + 1);
  queue.mark(0);
  for (int i = 0; i < iters; ++i) start(call(c, in_place, i));
  queue.mark(1);
  queue.wait(what);
  std::vector<double> times = {to_us(queue.elapsed(0, 1)) / iters};
  world_.barrier();
  queue.mark(0);
  for (int i = 0; i < iters; ++i) {
    start(call(c, in_place, i));
    queue.mark(i + 1);
  }
  queue.wait(what);
  for (int i = 0; i < iters; ++i) times.push_back(to_us(queue.elapsed(i, i + 1)));
  return times;
}

// A pair of marks around each iteration keeps the wait (and barrier) between them out of the sample.
std::vector<double> CollectiveSweep::time_one_by_one(const Case& c, bool in_place, const std::string& what) {
  Queue& queue = group_->queue();
  const int iters = options_.iters;
  queue.reserve_marks(2 * iters);
  for (int i = 0; i < iters; ++i) {
    queue.mark(2 * i);
    start(call(c, in_place, i));
    queue.mark(2 * i + 1);
    queue.wait(what);
    if (options_.blocking == Blocking::kWaitAndBarrier) world_.barrier();
  }
  std::vector<double> times = {0.0};
  for (int i = 0; i < iters; ++i) times.push_back(to_us(queue.elapsed(2 * i, 2 * i + 1)));
  return times;
}

std::vector<double> CollectiveSweep::time_graph_replays(const Case& c, bool in_place, const std::string& what) {
  Queue& queue = group_->queue();
  const int iters = options_.iters;
  const int replays = options_.graph_launches;
  queue.begin_capture();
  for (int i = 0; i < iters; ++i) start(call(c, in_place, i));
  const std::unique_ptr<Graph> graph = queue.end_capture();
  graph->launch();  // the first replay uploads the graph: keep it out of the samples
  queue.wait(what);
  queue.reserve_marks(2 * replays);
  for (int g = 0; g < replays; ++g) {
    queue.mark(2 * g);
    graph->launch();
    queue.mark(2 * g + 1);
  }
  queue.wait(what);
  std::vector<double> times = {0.0};
  for (int g = 0; g < replays; ++g) times.push_back(to_us(queue.elapsed(2 * g, 2 * g + 1)) / iters);
  return times;
}

std::vector<double> CollectiveSweep::combine_across_ranks(const std::vector<double>& mine,
                                                          std::vector<double>* loop_times) const {
  const std::vector<double> all = world_.gather(mine, 0);
  if (world_.rank() != 0) return {};
  for (int r = 0; r < world_.size(); ++r) loop_times->push_back(all[static_cast<std::size_t>(r) * mine.size()]);
  std::vector<double> combined(mine.size());
  std::vector<double> column(static_cast<std::size_t>(world_.size()));
  for (std::size_t i = 0; i < mine.size(); ++i) {
    for (std::size_t r = 0; r < column.size(); ++r) column[r] = all[r * mine.size() + i];
    combined[i] = combine(column, options_.combine);
  }
  return combined;
}

PatternSpec CollectiveSweep::spec(const Case& c, int rep) const {
  PatternSpec s{c.collective, c.op, c.type, group_->size(), group_->rank(), c.root, rep, c.layout.count};
  s.rel_tolerance = pattern_tolerance(s);
  return s;
}

void CollectiveSweep::fill_segments(const Case& c, Buffer& buffer, std::uint64_t offset, int rep) {
  const int n = group_->size();
  for (int peer = 0; peer < n; ++peer) {
    const std::uint64_t count = c.send_counts[static_cast<std::size_t>(peer)];
    PatternSpec s = spec(c, rep);
    s.rank = group_->rank() * n + peer;  // the (this rank, peer) pair's data
    if (count > 0) backend_.fill_pattern(buffer, offset, count, s);
    offset += count;
  }
}

std::uint64_t CollectiveSweep::count_wrong_segments(const Case& c, std::uint64_t offset, int rep) {
  const int n = group_->size();
  std::uint64_t wrong = 0;
  for (int peer = 0; peer < n; ++peer) {
    const std::uint64_t count = c.recv_counts[static_cast<std::size_t>(peer)];
    PatternSpec s = spec(c, rep);
    s.root = peer * n + group_->rank();  // what the (peer, this rank) pair sent
    if (count > 0) wrong += backend_.count_wrong(*recv_, offset, count, s);
    offset += count;
  }
  return wrong;
}

void CollectiveSweep::fill_inputs(const Case& c, bool in_place, int rep) {
  const CollectiveLayout& l = c.layout;
  backend_.poison(*recv_, 0, Bytes(std::max(l.send_count, l.recv_count) * size_of(c.type)));
  if (c.collective == Collective::kAllToAllV) {
    fill_segments(c, in_place ? *recv_ : *send_, in_place ? l.send_inplace_offset : 0, rep);
  } else if (in_place) {
    backend_.fill_pattern(*recv_, l.send_inplace_offset, l.send_count, spec(c, rep));
  } else {
    backend_.fill_pattern(*send_, 0, l.send_count, spec(c, rep));
  }
}

std::uint64_t CollectiveSweep::count_wrong(const Case& c, bool in_place) {
  const CollectiveLayout& l = c.layout;
  const std::uint64_t element = size_of(c.type);
  const CollectiveCall checked = call(c, in_place, 0);
  std::uint64_t wrong = 0;
  for (int rep = 1; rep <= options_.check_iters; ++rep) {
    fill_inputs(c, in_place, rep);
    if (options_.corrupt_rank == world_.rank() && l.send_count > 0) {
      backend_.store_element(in_place ? *recv_ : *send_, in_place ? l.send_inplace_offset : 0, c.type,
                             pattern_corruption(c.op));
    }
    start(checked);
    group_->queue().wait(fmt::format("checked {} of {}", name(c.collective), format_size(l.size)));
    const std::uint64_t offset = static_cast<std::uint64_t>(checked.recv - recv_->data()) / element;
    wrong += c.collective == Collective::kAllToAllV ? count_wrong_segments(c, offset, rep)
                                                    : backend_.count_wrong(*recv_, offset, l.recv_count, spec(c, rep));
  }
  return world_.sum(wrong);
}

PlacementResult CollectiveSweep::measure(const Case& c, bool in_place) {
  PlacementResult result;
  const std::vector<double> times = combine_across_ranks(time_iterations(c, in_place), &result.rank_time_us);
  if (!times.empty()) {  // rank 0
    result.time_us = times.front();
    result.samples_us.assign(times.begin() + 1, times.end());
    result.sample_stats = summarize(result.samples_us);
    const Bandwidths bw = collective_bandwidths(c.layout, microseconds(result.time_us));
    result.algbw = bw.algbw;
    result.busbw = bw.busbw;
  }
  result.checked = options_.check_iters > 0 && (!in_place || group_->in_place_defined(c.collective));
  if (result.checked) result.wrong = count_wrong(c, in_place);
  return result;
}

BenchRow CollectiveSweep::measure_row(const Case& c) {
  BenchRow row;
  row.collective = c.collective;
  row.type = c.type;
  if (takes_reduce_op(c.collective)) row.op = c.op;
  if (takes_root(c.collective)) row.root = c.root;
  row.size = c.collective == Collective::kAllToAllV ? c.mean_bytes : c.layout.size;
  row.count = c.layout.count;
  if (c.collective == Collective::kAllToAllV) {
    row.traffic = RowTraffic{c.load.max_send_bytes, c.load.max_recv_bytes, c.load.recv_imbalance()};
  }
  row.out_of_place = measure(c, false);
  row.in_place = measure(c, true);
  return row;
}

std::vector<CollectiveSweep::Case> CollectiveSweep::cases() const {
  std::vector<Case> out;
  const int group_size = group_->size();
  std::vector<int> all_roots(static_cast<std::size_t>(group_size));
  std::iota(all_roots.begin(), all_roots.end(), 0);
  for (Collective collective : options_.collectives) {
    const std::vector<ReduceOp> ops = takes_reduce_op(collective) ? options_.ops : std::vector{ReduceOp::kSum};
    const std::vector<int>& roots = !takes_root(collective) ? std::vector{0}
                                    : options_.all_roots    ? all_roots
                                                            : options_.roots;
    for (DataType type : options_.types) {
      for (ReduceOp op : ops) {
        for (int root : roots) {
          for (Bytes size : options_.sizes) out.push_back(make_case(collective, type, op, root, size));
        }
      }
    }
  }
  return out;
}

CollectiveSweep::Case CollectiveSweep::make_case(Collective c, DataType type, ReduceOp op, int root, Bytes size) const {
  Case out{c, type, op, root, {}, {}, {}, {}, {}};
  if (c != Collective::kAllToAllV) {
    out.layout = collective_layout(c, size, type, group_->size(), group_->rank());
    return out;
  }
  AlltoallvLayout v = alltoallv_layout(traffic_, size, type, group_->rank());
  out.layout = v.layout;
  out.send_counts = std::move(v.send_counts);
  out.recv_counts = std::move(v.recv_counts);
  out.mean_bytes = v.mean_bytes;
  out.load = v.load;
  return out;
}

std::size_t CollectiveSweep::row_count() const { return cases().size(); }

// Rank 0 holds the combined samples: it decides, and every rank gets its decision.
CollectiveSummary CollectiveSweep::collective_summary(Collective c, double busbw_total, int placements,
                                                      std::uint64_t wrong) {
  CollectiveSummary s;
  s.collective = c;
  s.avg_busbw_GBps = world_.broadcast(placements > 0 ? busbw_total / placements : 0.0, 0);
  s.wrong = wrong;
  s.busbw_ok = !options_.min_busbw_GBps || s.avg_busbw_GBps >= *options_.min_busbw_GBps;
  return s;
}

BenchSummary CollectiveSweep::run(BenchReporter* reporter) {
  BenchSummary summary;
  double busbw_total = 0.0;
  int placements = 0;
  double collective_busbw = 0.0;
  int collective_placements = 0;
  std::uint64_t collective_wrong = 0;
  const std::vector<Case> all = cases();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const BenchRow row = measure_row(all[i]);
    const std::uint64_t wrong = row.out_of_place.wrong + row.in_place.wrong;
    const double busbw = row.out_of_place.busbw.value() + row.in_place.busbw.value();
    summary.wrong += wrong;
    busbw_total += busbw;
    placements += 2;
    collective_wrong += wrong;
    collective_busbw += busbw;
    collective_placements += 2;
    if (reporter != nullptr) reporter->row(row);
    if (i + 1 == all.size() || all[i + 1].collective != all[i].collective) {
      summary.collectives.push_back(
          collective_summary(all[i].collective, collective_busbw, collective_placements, collective_wrong));
      summary.busbw_ok = summary.busbw_ok && summary.collectives.back().busbw_ok;
      if (reporter != nullptr) reporter->collective_end(summary.collectives.back());
      collective_busbw = 0.0;
      collective_placements = 0;
      collective_wrong = 0;
    }
  }
  summary.avg_busbw_GBps = world_.broadcast(placements > 0 ? busbw_total / placements : 0.0, 0);
  if (summary.collectives.empty()) {
    summary.busbw_ok = !options_.min_busbw_GBps || summary.avg_busbw_GBps >= *options_.min_busbw_GBps;
  }
  return summary;
}

}  // namespace commscale
