#include "bench/doctor_comm.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bench/sweep.hpp"
#include "core/size.hpp"
#include "core/stats.hpp"

namespace commscale {
namespace {

using predict::DoctorCheck;

// Keeps the one row of a one-collective, one-size sweep.
class RowKeeper final : public BenchReporter {
 public:
  void begin(const BenchSetup&) override {}
  void row(const BenchRow& row) override { row_ = row; }
  void end(const BenchSummary&) override {}
  [[nodiscard]] const BenchRow& row() const noexcept { return row_; }

 private:
  BenchRow row_;
};

std::string describe_group(const std::vector<int>& g, const JobLayout& job, const std::string& key) {
  if (key == "node_all_reduce") {
    return fmt::format("{} ({} ranks)", job.hosts.at(static_cast<std::size_t>(job.node_of.at(g.front()))), g.size());
  }
  return fmt::format("the job ({} ranks on {} node{})", g.size(), job.hosts.size(), job.hosts.size() == 1 ? "" : "s");
}

}  // namespace

int JobLayout::cluster_rank(int world_rank, int gpus_per_node) const {
  const RankPlacement& p = ranks.at(static_cast<std::size_t>(world_rank));
  if (gpus_per_node <= 0 || p.local_rank >= gpus_per_node) return -1;
  return node_of.at(static_cast<std::size_t>(world_rank)) * gpus_per_node + p.local_rank;
}

int JobLayout::largest_node() const {
  std::size_t most = 0;
  for (const auto& n : node_ranks) most = std::max(most, n.size());
  return static_cast<int>(most);
}

JobLayout job_layout(const RunContext& context) {
  JobLayout job;
  job.ranks = context.ranks;
  for (const RankPlacement& p : context.ranks) {
    auto at = std::find(job.hosts.begin(), job.hosts.end(), p.host);
    if (at == job.hosts.end()) {
      job.hosts.push_back(p.host);
      job.node_ranks.emplace_back();
      at = job.hosts.end() - 1;
    }
    const auto node = static_cast<std::size_t>(at - job.hosts.begin());
    job.node_of.push_back(static_cast<int>(node));
    job.node_ranks[node].push_back(p.rank);
  }
  for (auto& n : job.node_ranks) {
    std::sort(n.begin(), n.end(), [&](int a, int b) {
      return job.ranks[static_cast<std::size_t>(a)].local_rank < job.ranks[static_cast<std::size_t>(b)].local_rank;
    });
  }
  return job;
}

GroupTimes time_groups(Collective c, Bytes size, const std::vector<std::vector<int>>& groups,
                       const DoctorOptions& options, Backend& backend, Communicator& world_comm, const MpiComm& world) {
  BenchOptions o;
  o.collectives = {c};
  o.sizes = {size};
  o.iters = options.iters;
  o.warmup = options.warmup;
  o.check_iters = 1;
  o.timeout = options.timeout;
  o.delay = options.slow_rank;
  o.groups = groups;
  CollectiveSweep sweep(o, backend, world_comm, world);
  RowKeeper keeper;
  const BenchSummary summary = sweep.run(world.rank() == 0 ? &keeper : nullptr);
  GroupTimes t;
  if (world.rank() != 0) return t;
  const PlacementResult& p = keeper.row().out_of_place;
  t.groups = groups;
  for (const std::vector<int>& g : groups) {
    double slowest = 0.0;
    for (int r : g) slowest = std::max(slowest, p.rank_time_us.at(static_cast<std::size_t>(r)));
    t.time_us.push_back(slowest);
  }
  t.wrong = summary.wrong;
  t.checked = p.checked;
  return t;
}

double group_busbw_GBps(Collective c, Bytes size, int ranks, double time_us) {
  const CollectiveLayout layout = collective_layout(c, size, DataType::kFloat32, ranks, 0);
  return collective_bandwidths(layout, microseconds(time_us)).busbw.value();
}

std::vector<DoctorCheck> collective_checks(Collective c, const GroupTimes& t, Bytes size, const JobLayout& job,
                                           const std::string& phase, const std::string& key,
                                           const predict::DoctorExpectations& expect, double min_ratio) {
  std::vector<DoctorCheck> out;
  std::vector<double> measured;
  std::vector<double> sorted;  // of the groups of two or more: one rank moves nothing
  for (std::size_t i = 0; i < t.groups.size(); ++i) {
    measured.push_back(group_busbw_GBps(c, size, static_cast<int>(t.groups[i].size()), t.time_us[i]));
    if (t.groups[i].size() >= 2) sorted.push_back(measured.back());
  }
  std::sort(sorted.begin(), sorted.end());
  const int per_node = expect.gpus_per_node();
  for (std::size_t i = 0; i < t.groups.size(); ++i) {
    const std::vector<int>& g = t.groups[i];
    if (g.size() < 2) continue;
    std::vector<int> cluster;
    for (int r : g)
      cluster.push_back(key == "node_all_reduce" ? job.ranks[static_cast<std::size_t>(r)].local_rank
                                                 : job.cluster_rank(r, per_node));
    const std::optional<predict::Expected> e =
        expect.collective_busbw(c, size, DataType::kFloat32, {cluster}, key).front();
    DoctorCheck check;
    check.phase = phase;
    check.check = key;
    check.subject = describe_group(g, job, key);
    if (key == "node_all_reduce") check.place.host = job.hosts.at(static_cast<std::size_t>(job.node_of.at(g.front())));
    check.unit = "GB/s";
    check.measured = measured[i];
    check.detail = fmt::format("{} of {}, busbw, {:.1f} us per iteration (the group's slowest rank)", name(c),
                               format_size(size), t.time_us[i]);
    if (e) {
      check.expected = e->value;
      check.basis = e->basis;
      check = predict::judge(std::move(check), min_ratio);
      if (!e->judged) {
        check.status = predict::CheckStatus::kInfo;
        check.threshold = 0.0;
      }
    } else if (sorted.size() >= 2) {
      check.expected = percentile_nearest_rank(sorted, 75.0);
      check.basis = fmt::format("peers: the 75th percentile of the {} groups' results", sorted.size());
      check = predict::judge(std::move(check), min_ratio);
    } else {
      check = predict::judge(std::move(check), min_ratio);
      // Without a cluster the header's "# expectations:" line already says why; do not repeat it per row.
      check.detail += expect.has_cluster() ? "; no expectation for this group" : "; no expectation (see the header)";
    }
    out.push_back(std::move(check));
  }
  if (t.checked && t.wrong > 0) {
    DoctorCheck data;
    data.phase = phase;
    data.check = "data";
    data.subject = fmt::format("{} of {}", name(c), format_size(size));
    data.status = predict::CheckStatus::kFail;
    data.measured = static_cast<double>(t.wrong);
    data.unit = "wrong elements";
    data.detail = "the checked run delivered wrong data";
    out.push_back(std::move(data));
  }
  return out;
}

}  // namespace commscale
