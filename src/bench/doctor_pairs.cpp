#include "bench/doctor_pairs.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/size.hpp"

namespace commscale {
namespace {

using predict::BlameSide;
using predict::DoctorCheck;
using predict::Suspect;
using predict::UnitBlame;

// The transfers (sender, receiver) of one round, as world ranks: rail by rail between paired nodes.
std::vector<std::pair<int, int>> round_transfers(const PairPlan& plan, const JobLayout& job, int round) {
  std::vector<std::pair<int, int>> out;
  for (const auto& [a, b] : predict::pair_round(plan.unit_count, round)) {
    if (plan.units == "ranks") {
      out.emplace_back(a, b);
      continue;
    }
    const std::vector<int>& na = job.node_ranks.at(static_cast<std::size_t>(a));
    const std::vector<int>& nb = job.node_ranks.at(static_cast<std::size_t>(b));
    for (std::size_t l = 0; l < std::min(na.size(), nb.size()); ++l) out.emplace_back(na[l], nb[l]);
  }
  return out;
}

// Two-rank groups {sender, receiver} (the sender is the broadcast's root), and every other rank alone.
std::vector<std::vector<int>> groups_of(const std::vector<std::pair<int, int>>& transfers, int ranks) {
  std::vector<std::vector<int>> groups;
  std::vector<bool> taken(static_cast<std::size_t>(ranks));
  for (const auto& [src, dst] : transfers) {
    groups.push_back({src, dst});
    taken[static_cast<std::size_t>(src)] = taken[static_cast<std::size_t>(dst)] = true;
  }
  for (int r = 0; r < ranks; ++r) {
    if (!taken[static_cast<std::size_t>(r)]) groups.push_back({r});
  }
  return groups;
}

std::string rank_name(int r, const JobLayout& job, const std::map<std::string, std::string>& nearest_nic) {
  const RankPlacement& p = job.ranks.at(static_cast<std::size_t>(r));
  std::string text = fmt::format("rank {} on {}", r, p.host);
  if (p.device >= 0) text += fmt::format(" (GPU {} [{}]", p.device, p.pci_bus_id);
  const auto nic = nearest_nic.find(p.pci_bus_id);
  if (p.device >= 0) text += nic != nearest_nic.end() ? fmt::format(", nearest NIC {})", nic->second) : ")";
  return text;
}

std::string unit_name(int r, const PairPlan& plan, const JobLayout& job) {
  const RankPlacement& p = job.ranks.at(static_cast<std::size_t>(r));
  if (plan.units == "ranks") return fmt::format("rank {}", r);
  const bool alone =
      job.node_ranks.at(static_cast<std::size_t>(job.node_of.at(static_cast<std::size_t>(r)))).size() == 1;
  return alone ? p.host : fmt::format("{} rank {}", p.host, r);
}

std::string side_text(BlameSide s) {
  switch (s) {
    case BlameSide::kSend:
      return "its send path";
    case BlameSide::kReceive:
      return "its receive path";
    case BlameSide::kBoth:
      return "its link, both directions";
    case BlameSide::kPath:
      return "the path";
  }
  return "";
}

std::string evidence(const UnitBlame& b, double min_ratio) {
  return fmt::format("{} of {} of its transfers below {:.2f} x expected (median {:.3f} of expected)", b.slow, b.of,
                     min_ratio, b.median_ratio);
}

// Why a slow transfer that neither end's blame explains is put on the path, or on the pair when an
// end met no other partner that way and so nothing vouches for it.
std::string path_evidence(const UnitBlame& b, const std::string& sender, const std::string& receiver) {
  if (!b.ambiguous()) {
    return fmt::format(
        "ran at {:.3f} of expected while both ends ran at speed with their other partners: the path between "
        "them (cable, switch port, route)",
        b.median_ratio);
  }
  std::string alone;
  if (b.sender_alone && b.receiver_alone) {
    alone = fmt::format("neither end met another partner: {}'s send path, {}'s receive path", sender, receiver);
  } else if (b.sender_alone) {
    alone =
        fmt::format("{} sent to no other partner: its send path ({} received at speed from others)", sender, receiver);
  } else {
    alone = fmt::format("{} received from no other partner: its receive path ({} sent at speed to others)", receiver,
                        sender);
  }
  return fmt::format("the one transfer between them ran at {:.3f} of expected; {}, or the path between them",
                     b.median_ratio, alone);
}

bool covers(BlameSide have, BlameSide want) { return have == want || have == BlameSide::kBoth; }

// Rolls rank blames up to their node when every rank of the node that took part is blamed for the
// same side; the rest stay rank blames.
void unit_suspects(const PairPlan& plan, const JobLayout& job, const predict::PairJudgement& j, double min_ratio,
                   const std::map<std::string, std::string>& nearest_nic, std::vector<Suspect>* out) {
  std::map<int, UnitBlame> by_rank;
  for (const UnitBlame& b : j.blame) {
    if (b.side != BlameSide::kPath) by_rank[b.unit] = b;
  }
  std::vector<bool> absorbed(job.ranks.size());
  for (std::size_t n = 0; plan.units == "nodes" && n < job.node_ranks.size(); ++n) {
    const std::vector<int>& ranks = job.node_ranks[n];
    for (BlameSide side : {BlameSide::kBoth, BlameSide::kSend, BlameSide::kReceive}) {
      const bool all = std::all_of(ranks.begin(), ranks.end(), [&](int r) {
        const auto it = by_rank.find(r);
        return it != by_rank.end() && covers(it->second.side, side);
      });
      if (!all) continue;
      Suspect s;
      s.kind = "node";
      s.name = ranks.size() == 1 ? fmt::format("{} (rank {})", job.hosts[n], ranks.front()) : job.hosts[n];
      s.place.host = job.hosts[n];
      if (ranks.size() == 1) s.place.rank = ranks.front();
      const UnitBlame& first = by_rank.at(ranks.front());
      s.evidence =
          fmt::format("{}: {}{}", side_text(side), evidence(first, min_ratio),
                      ranks.size() > 1 ? fmt::format(", and so on every one of its {} ranks", ranks.size()) : "");
      out->push_back(std::move(s));
      for (int r : ranks) absorbed[static_cast<std::size_t>(r)] = true;
      break;
    }
  }
  for (const auto& [r, b] : by_rank) {
    if (absorbed[static_cast<std::size_t>(r)]) continue;
    Suspect s;
    s.kind = "rank";
    s.name = rank_name(r, job, nearest_nic);
    s.place.host = job.ranks[static_cast<std::size_t>(r)].host;
    s.place.rank = r;
    s.place.gpu = job.ranks[static_cast<std::size_t>(r)].device;
    if (const auto nic = nearest_nic.find(job.ranks[static_cast<std::size_t>(r)].pci_bus_id);
        nic != nearest_nic.end()) {
      s.place.nic = nic->second;
    }
    s.evidence = fmt::format("{}: {}", side_text(b.side), evidence(b, min_ratio));
    out->push_back(std::move(s));
  }
}

// One direction of one round: every transfer at once; rank 0 appends the samples.
void time_direction(const std::vector<std::pair<int, int>>& transfers, int round, const JobLayout& job, Bytes size,
                    const DoctorOptions& options, Backend& backend, Communicator& world_comm, const MpiComm& world,
                    const predict::DoctorExpectations* expect, PairRoundsResult& result) {
  const GroupTimes t = time_groups(Collective::kBroadcast, size, groups_of(transfers, world.size()), options, backend,
                                   world_comm, world);
  if (world.rank() != 0) return;
  result.wrong += t.wrong;
  const int per_node = expect->gpus_per_node();
  std::vector<std::vector<int>> cluster;
  for (const auto& [src, dst] : transfers) {
    cluster.push_back(std::vector<int>{job.cluster_rank(src, per_node), job.cluster_rank(dst, per_node)});
  }
  const std::vector<std::optional<predict::Expected>> expected =
      expect->collective_busbw(Collective::kBroadcast, size, DataType::kFloat32, cluster, "pair");
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    predict::PairSample s;
    s.src = transfers[i].first;
    s.dst = transfers[i].second;
    s.round = round;
    s.bw_GBps = group_busbw_GBps(Collective::kBroadcast, size, 2, t.time_us[i]);
    if (expected[i]) s.expected_GBps = expected[i]->value;
    result.samples.push_back(s);
    result.basis.push_back(expected[i] ? expected[i]->basis : "");
  }
}

}  // namespace

PairPlan plan_pairs(PairUnits asked, const JobLayout& job) {
  PairPlan p;
  const int nodes = static_cast<int>(job.hosts.size());
  const int ranks = static_cast<int>(job.ranks.size());
  const bool by_nodes = asked == PairUnits::kNodes || (asked == PairUnits::kAuto && nodes >= 2);
  p.units = by_nodes ? "nodes" : "ranks";
  p.unit_count = by_nodes ? nodes : ranks;
  if (p.unit_count < 2) {
    p.why_none = by_nodes ? "the job has one node: nothing to pair across nodes (--pairs ranks pairs its ranks)"
                          : "the job has one rank: nothing to pair";
    p.units = "none";
    p.unit_count = 0;
    return p;
  }
  p.rounds = predict::pair_round_count(p.unit_count);
  return p;
}

PairRoundsResult run_pair_rounds(const PairPlan& plan, const JobLayout& job, Bytes size, const DoctorOptions& options,
                                 Backend& backend, Communicator& world_comm, const MpiComm& world,
                                 const predict::DoctorExpectations* expect) {
  PairRoundsResult result;
  for (int round = 0; round < plan.rounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::pair<int, int>> forward = round_transfers(plan, job, round);
    std::vector<std::pair<int, int>> backward;
    for (const auto& [a, b] : forward) backward.emplace_back(b, a);
    time_direction(forward, round, job, size, options, backend, world_comm, world, expect, result);
    time_direction(backward, round, job, size, options, backend, world_comm, world, expect, result);
    result.round_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return result;
}

void judge_pair_rounds(const PairPlan& plan, const PairRoundsResult& r, const JobLayout& job, Bytes size,
                       double min_ratio, const std::map<std::string, std::string>& nearest_nic,
                       std::vector<DoctorCheck>* checks, std::vector<Suspect>* suspects) {
  const predict::PairJudgement j = predict::judge_pairs(r.samples, static_cast<int>(job.ranks.size()), min_ratio);
  for (std::size_t i = 0; i < r.samples.size(); ++i) {
    const predict::PairSample& s = r.samples[i];
    DoctorCheck c;
    c.phase = "pairs";
    c.check = "pair";
    c.subject = fmt::format("round {}: {} -> {}", s.round, unit_name(s.src, plan, job), unit_name(s.dst, plan, job));
    c.place.host = job.ranks[static_cast<std::size_t>(s.src)].host;
    c.place.rank = s.src;
    c.place.link = fmt::format("{} -> {}", unit_name(s.src, plan, job), unit_name(s.dst, plan, job));
    c.unit = "GB/s";
    c.measured = s.bw_GBps;
    c.detail = fmt::format("broadcast of {} from rank {} to rank {}", format_size(size), s.src, s.dst);
    if (j.expected_GBps[i] > 0.0) {
      c.expected = j.expected_GBps[i];
      c.basis = s.expected_GBps ? r.basis[i]
                                : fmt::format("peers: the 75th percentile of the job's {} transfers", r.samples.size());
      c.threshold = min_ratio;
      c.status = j.slow[i] ? predict::CheckStatus::kFail : predict::CheckStatus::kPass;
    } else {
      c.detail += "; not judged: no expectation and too few transfers to compare";
    }
    checks->push_back(std::move(c));
  }
  unit_suspects(plan, job, j, min_ratio, nearest_nic, suspects);
  for (const UnitBlame& b : j.blame) {
    if (b.side != BlameSide::kPath) continue;
    Suspect s;
    s.kind = "link";
    s.name = fmt::format("{} -> {}", unit_name(b.unit, plan, job), unit_name(b.partner, plan, job));
    s.place.host = job.ranks[static_cast<std::size_t>(b.unit)].host;
    s.place.rank = b.unit;
    s.place.link = s.name;
    s.evidence = path_evidence(b, unit_name(b.unit, plan, job), unit_name(b.partner, plan, job));
    suspects->push_back(std::move(s));
  }
}

}  // namespace commscale
