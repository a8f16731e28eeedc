// The text table, laid out as nccl-tests lays it out (same columns, same `#` headers, same footer),
// with median, p99 and coefficient of variation appended on the right so scripts that read
// nccl-tests columns by position keep working.

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "core/size.hpp"
#include "report/bench_reporters.hpp"

namespace commscale {
namespace {

// A number in at most `width` characters with as many decimals (up to 2) as fit, as nccl-tests prints times.
std::string fit(double value, int width) {
  for (int decimals = 2; decimals > 0; --decimals) {
    std::string text = fmt::format("{:.{}f}", value, decimals);
    if (static_cast<int>(text.size()) <= width) return text;
  }
  return fmt::format("{:.0f}", value);
}

std::string_view combine_name(RankCombine c) {
  switch (c) {
    case RankCombine::kRank0: return "rank 0's of";
    case RankCombine::kMean: return "the mean of";
    case RankCombine::kMin: return "the minimum of";
    case RankCombine::kMax: return "the maximum of";
  }
  return "";
}

// "pml ob1 (requested: ^ucx), UCX_TLS default, ...": the PML first, then every other setting.
std::string transport_line(const std::map<std::string, std::string>& t) {
  std::string line;
  if (const auto pml = t.find("pml"); pml != t.end()) {
    const auto requested = t.find("pml_requested");
    line = fmt::format("pml {} (requested: {})", pml->second, requested == t.end() ? "?" : requested->second);
  }
  for (const auto& [key, value] : t) {
    if (key == "pml" || key == "pml_requested") continue;
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", key, value);
  }
  return line;
}

class TextBenchReporter final : public BenchReporter {
 public:
  explicit TextBenchReporter(std::ostream& out) : out_(out) {}

  void begin(const BenchSetup& setup) override {
    const RunContext& c = setup.context;
    const BenchOptions& o = setup.options;
    fmt::print(out_, "# commscale {} ({}) bench: {} rank{} on {} host{}, backend {} ({})\n", c.commscale_version,
               c.git_sha, c.ranks.size(), c.ranks.size() == 1 ? "" : "s", c.hosts.size(), c.hosts.size() == 1 ? "" : "s",
               c.backend, c.comm_library);
    if (!c.backend_note.empty()) fmt::print(out_, "# {}\n", c.backend_note);
    if (!c.mpi_transport.empty()) fmt::print(out_, "# MPI transport: {}\n", transport_line(c.mpi_transport));
    fmt::print(out_, "# iters: {} warmup: {} check: {} blocking: {} graph: {} group size: {} groups: {}\n", o.iters,
               o.warmup, o.check_iters, static_cast<int>(o.blocking), o.graph_launches, setup.group_size,
               setup.groups);
    fmt::print(out_, "# timing: {}; ranks' times combined by taking {} them\n", setup.timing, combine_name(o.combine));
    fmt::print(out_, "#\n# Using devices\n");
    for (const RankPlacement& p : c.ranks) {
      const int group = group_of(setup, p.rank);
      if (p.device >= 0) {
        fmt::print(out_, "#  Rank {:2} Group {:2} Pid {:6} on {:>10} device {:2} [{}] {}\n", p.rank, group, p.pid,
                   p.host, p.device, p.pci_bus_id, p.gpu_name);
      } else {
        fmt::print(out_, "#  Rank {:2} Group {:2} Pid {:6} on {:>10} host memory\n", p.rank, group, p.pid, p.host);
      }
    }
    fmt::print(out_, "#\n");
    one_rank_ = setup.group_size == 1;
    traffic_ = setup.traffic;
    if (one_rank_) {
      fmt::print(out_,
                 "# One rank per group: every collective here is a local copy {} (no communication, no link);\n"
                 "# algbw and busbw measure that copy, and busbw is 0 where its factor holds n-1 (all_reduce,\n"
                 "# all_gather, reduce_scatter, alltoall).\n#\n",
                 c.ranks.empty() || c.ranks.front().device < 0 ? "in host memory" : "on one GPU");
    }
    out_.flush();
  }

  void row(const BenchRow& r) override {
    if (!current_ || *current_ != r.collective) {
      current_ = r.collective;
      print_column_header(r.collective);
    }
    fmt::print(out_, "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.size.count(), r.count, name(r.type),
               r.op ? name(*r.op) : "none", r.root.value_or(-1));
    for (const PlacementResult* p : {&r.out_of_place, &r.in_place}) {
      fmt::print(out_, "  {:>7}  {:>6.2f}  {:>6.2f}  {:>6}", fit(p->time_us, 7), p->algbw.value(),
                 p->busbw.value(), p->checked ? fmt::to_string(p->wrong) : "N/A");
    }
    for (const PlacementResult* p : {&r.out_of_place, &r.in_place}) {
      fmt::print(out_, "  {:>7}  {:>7}  {:>5.1f}", fit(p->sample_stats.median, 7), fit(p->sample_stats.p99, 7),
                 p->sample_stats.cv * 100.0);
    }
    fmt::print(out_, "\n");
    out_.flush();
  }

  // nccl-tests' footer after each collective's table, as one nccl-tests binary per collective prints it.
  void collective_end(const CollectiveSummary& s) override {
    footer(s.wrong, s.avg_busbw_GBps, s.busbw_ok);
    footers_ += 1;
  }

  void end(const BenchSummary& s) override {
    if (footers_ == 0) footer(s.wrong, s.avg_busbw_GBps, s.busbw_ok);
  }

 private:
  void footer(std::uint64_t wrong, double avg_busbw_GBps, bool busbw_ok) {
    fmt::print(out_, "# {:<20} : {} {}\n", "Out of bounds values", wrong, wrong == 0 ? "OK" : "FAILED");
    fmt::print(out_, "# {:<20} : {:g} {}{}\n", "Avg bus bandwidth", avg_busbw_GBps, busbw_ok ? "OK" : "FAILED",
               one_rank_ ? " (one rank: local copies only)" : "");
    fmt::print(out_, "#\n");
    out_.flush();
  }

  [[nodiscard]] double busiest_receiver() const {
    double most = 0.0;
    for (int r = 0; r < traffic_->ranks; ++r) most = std::max(most, traffic_->received_by(r));
    return most / (traffic_->total() / traffic_->ranks);
  }

  static int group_of(const BenchSetup& setup, int rank) {
    for (std::size_t g = 0; g < setup.group_ranks.size(); ++g) {
      const auto& ranks = setup.group_ranks[g];
      if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) return static_cast<int>(g);
    }
    return 0;
  }

  void print_column_header(Collective c) {
    fmt::print(out_, "# Collective: {}\n", name(c));
    if (c == Collective::kAllToAllV && traffic_) {
      fmt::print(out_,
                 "# traffic: {}, {} x {}; size = the mean bytes a rank sends; algbw = the busiest rank's bytes "
                 "(max send or receive) / time; the busiest receiver gets {:.3f}x the mean\n",
                 traffic_->source, traffic_->ranks, traffic_->ranks, busiest_receiver());
    }
    fmt::print(out_, "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:^33}  {:^33}  {:^24}  {:^24}\n", "", "", "", "", "",
               "out-of-place", "in-place", "out-of-place stats", "in-place stats");
    fmt::print(out_, "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "size", "count", "type", "redop", "root");
    for (int i = 0; i < 2; ++i) fmt::print(out_, "  {:>7}  {:>6}  {:>6}  {:>6}", "time", "algbw", "busbw", "#wrong");
    for (int i = 0; i < 2; ++i) fmt::print(out_, "  {:>7}  {:>7}  {:>5}", "median", "p99", "cv");
    fmt::print(out_, "\n# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "(B)", "(elements)", "", "", "");
    for (int i = 0; i < 2; ++i) fmt::print(out_, "  {:>7}  {:>6}  {:>6}  {:>6}", "(us)", "(GB/s)", "(GB/s)", "");
    for (int i = 0; i < 2; ++i) fmt::print(out_, "  {:>7}  {:>7}  {:>5}", "(us)", "(us)", "(%)");
    fmt::print(out_, "\n");
  }

  std::ostream& out_;
  std::optional<Collective> current_;
  bool one_rank_ = false;
  std::optional<TrafficMatrix> traffic_;
  int footers_ = 0;
};

}  // namespace

std::unique_ptr<BenchReporter> make_text_bench_reporter(std::ostream& out) {
  return std::make_unique<TextBenchReporter>(out);
}

}  // namespace commscale
