// Compute–communication interference (interference.hpp).

#include "predict/interference.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/json_reader.hpp"
#include "hw/topology_dir.hpp"
#include "predict/calibration_sections.hpp"

namespace commscale::predict {
namespace {

double figure_or(const hw::Figure<int>& f, double fallback) {
  return f.value ? static_cast<double>(*f.value) : fallback;
}

// Linear in x between points sorted by x, from (0, y0) below the first, flat past the last.
template <class Point, class X, class Y>
double along(const std::vector<Point>& points, double x, double y0, X get_x, Y get_y) {
  double px = 0.0;
  double py = y0;
  for (const Point& p : points) {
    if (x <= get_x(p)) {
      const double span = get_x(p) - px;
      return span > 0 ? py + (get_y(p) - py) * (x - px) / span : get_y(p);
    }
    px = get_x(p);
    py = get_y(p);
  }
  return py;
}

struct Busy {
  double start = 0.0;
  double end = 0.0;
  OpId op = 0;
};

double overlap(const Busy& a, const Busy& b) { return std::max(0.0, std::min(a.end, b.end) - std::max(a.start, b.start)); }

// For every pair of a compute op and a communication op of one simulated rank that overlap: `visit`
// with both. Each stream's ops run one at a time, so each list is sorted and a sweep finds the pairs.
template <class Visit>
void overlapping_pairs(const std::vector<Busy>& compute, const std::vector<Busy>& comm, Visit visit) {
  std::size_t first = 0;
  for (const Busy& c : compute) {
    while (first < comm.size() && comm[first].end <= c.start) ++first;
    for (std::size_t j = first; j < comm.size() && comm[j].start < c.end; ++j) {
      const double o = overlap(c, comm[j]);
      if (o > 0) visit(c, comm[j], o);
    }
  }
}

}  // namespace

InterferenceModel::InterferenceModel(std::vector<InterferencePoint> rows, const hw::GpuSpec& probe_gpu,
                                     const hw::GpuSpec& gpu, std::string source)
    : sms_(figure_or(gpu.sm_count, 0.0)),
      memory_GBps_(gpu.memory_bw.value ? gpu.memory_bw.value->value() : 0.0),
      source_(std::move(source)) {
  const double probe_sms = figure_or(probe_gpu.sm_count, 0.0);
  const double probe_bw = probe_gpu.memory_bw.value ? probe_gpu.memory_bw.value->value() : 0.0;
  if (probe_sms <= 0 || probe_bw <= 0 || sms_ <= 0 || memory_GBps_ <= 0) return;  // no shares: no model
  for (const InterferencePoint& p : rows) {
    rows_.push_back({p.sms / probe_sms, p.probe_GBps / probe_bw, p.beside, p.compute_slowdown, p.probe_slowdown});
  }
  std::sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) { return a.sm_share < b.sm_share; });
  for (const Row& r : rows_) {
    auto& side = r.probe_share > 0 ? streaming_ : spinning_;
    side[static_cast<std::size_t>(r.beside)].push_back(r);
  }
}

InterferenceModel::Load InterferenceModel::load(int channels, GBps bus_bw) const noexcept {
  if (sms_ <= 0 || memory_GBps_ <= 0) return {};
  return {std::min(1.0, channels / sms_), std::min(1.0, 2.0 * bus_bw.value() / memory_GBps_)};
}

double InterferenceModel::slowdown(Beside kind, const Load& load, bool of_compute) const noexcept {
  const std::vector<Row>& stream = streaming_[static_cast<std::size_t>(kind)];
  const std::vector<Row>& spin = spinning_[static_cast<std::size_t>(kind)];
  const auto x = [](const Row& r) { return r.sm_share; };
  const auto y = [of_compute](const Row& r) { return of_compute ? r.compute : r.probe; };
  const double held = spin.empty() ? 1.0 : along(spin, load.sm_share, 1.0, x, y);
  if (stream.empty()) return std::max(1.0, held);
  const double streaming = along(stream, load.sm_share, 1.0, x, y);
  const double rate = along(stream, load.sm_share, 0.0, x, [](const Row& r) { return r.probe_share; });
  const double traffic = rate > 0 ? std::min(1.0, load.hbm_share / rate) : 1.0;
  return std::max(1.0, held + (streaming - held) * traffic);
}

double InterferenceModel::compute_slowdown(Beside kind, const Load& load) const noexcept {
  return slowdown(kind, load, true);
}

double InterferenceModel::comm_slowdown(Beside kind, const Load& load) const noexcept {
  return slowdown(kind, load, false);
}

int nccl_channels(hw::PathClass path) noexcept {
  switch (path) {
    case hw::PathClass::kNvlink: return 16;
    case hw::PathClass::kPcie: return 8;
    case hw::PathClass::kHostStaged:
    case hw::PathClass::kSocket: return 4;
    case hw::PathClass::kNetwork: return 8;
  }
  return 8;
}

InterferenceModel interference_for(const hw::GpuSpec& gpu, const CalibrationProfile* profile) {
  if (profile != nullptr && !profile->interference.empty()) {
    return {profile->interference, profile->gpu, gpu, fmt::format("{} (measured on {})", profile->file, profile->gpu.name)};
  }
  const std::filesystem::path file = hw::find_topologies_dir() / "interference.json";
  if (!std::filesystem::exists(file)) return {};
  const nlohmann::json doc = hw::read_json_file(file);
  hw::JsonObject top(doc, file.string(), "");
  if (top.integer("schema_version", 0, 1000) != 1) throw InputError(top.where("schema_version"), "unsupported version", "1");
  if (top.string("kind") != "interference") throw InputError(top.where("kind"), "not an interference file", "\"interference\"");
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const hw::GpuSpec probe_gpu = catalog.gpu(top.string("gpu"), top.where("gpu"));
  const std::string source = top.string("source");
  std::vector<InterferencePoint> rows;
  for (hw::JsonObject& o : top.objects("rows")) rows.push_back(read_interference(o));
  reject_duplicate_interference(rows, top.where("rows"));
  top.finish();
  return {std::move(rows), probe_gpu, gpu, fmt::format("{} ({})", file.filename().string(), source)};
}

OpShares op_shares(const ProgramSet& set, const Simulation& sim, const OpCosts& costs,
                   const InterferenceCosts& shares) {
  OpShares t;
  t.seconds.resize(sim.simulated.size());
  t.gemm_share.resize(sim.simulated.size());
  for (std::size_t i = 0; i < sim.simulated.size(); ++i) {
    const int rank = sim.simulated[i];
    const std::vector<Op>& ops = ops_of(set, rank);
    t.gemm_share[i].resize(ops.size());
    if (const double* seconds = costs.seconds_by_op(rank)) {
      t.seconds[i].assign(seconds, seconds + ops.size());
    } else {
      t.seconds[i].resize(ops.size());
      for (const Op& op : ops) t.seconds[i][op.id] = costs.duration(rank, op).value();
    }
    for (const Op& op : ops) {
      const bool compute = std::holds_alternative<Gemm>(op.payload) || std::holds_alternative<MemoryKernel>(op.payload);
      t.gemm_share[i][op.id] = compute                                           ? shares.gemm_share(rank, op)
                               : std::holds_alternative<HostCopy>(op.payload) ? kNotInterfering
                                                                              : kCommunication;
    }
  }
  return t;
}

InterferenceResult apply_interference(const ProgramSet& set, const OpCosts& costs, const InterferenceCosts& loads,
                                      const InterferenceModel& model, const SimulationOptions& options,
                                      Simulation& sim, int max_iterations) {
  InterferenceResult result;
  if (model.empty()) return result;
  // The first simulation's classes serve the re-simulations: the program, hence its classes, is the same.
  const std::vector<int> stand_in = sim.stand_in;
  const OpShares table = op_shares(set, sim, costs, loads);
  const std::vector<std::vector<double>>& base = table.seconds;
  const std::vector<std::vector<double>>& share = table.gemm_share;
  // A communication op's slowdowns depend only on its load: worked out at its first overlap, once, and
  // once for each load (a program's communication ops have a few loads between them: a path, a size).
  struct Slowdowns {
    double compute_gemm = 1.0, compute_memory = 1.0, comm_gemm = 1.0, comm_memory = 1.0;
  };
  constexpr std::uint32_t kUnknown = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::vector<std::uint32_t>> slow(sim.simulated.size());  // of communication ops: into by_load
  for (std::size_t i = 0; i < sim.simulated.size(); ++i) slow[i].assign(ops_of(set, sim.simulated[i]).size(), kUnknown);
  std::vector<std::pair<InterferenceModel::Load, Slowdowns>> by_load;
  const auto slowdowns = [&](std::size_t i, OpId id) -> const Slowdowns& {
    std::uint32_t& known = slow[i][id];
    if (known == kUnknown) {
      const InterferenceModel::Load l = loads.comm_load(sim.simulated[i], ops_of(set, sim.simulated[i])[id]);
      const auto same = [&](const auto& entry) {
        return entry.first.sm_share == l.sm_share && entry.first.hbm_share == l.hbm_share;
      };
      const auto found = std::find_if(by_load.begin(), by_load.end(), same);
      known = static_cast<std::uint32_t>(found - by_load.begin());
      if (found == by_load.end()) {
        by_load.emplace_back(
            l, Slowdowns{model.compute_slowdown(Beside::kGemm, l), model.compute_slowdown(Beside::kMemory, l),
                         model.comm_slowdown(Beside::kGemm, l), model.comm_slowdown(Beside::kMemory, l)});
      }
    }
    return by_load[known].second;
  };
  // By simulated rank: its compute ops, and its communication ops stream by stream, each in program order
  // (the order they run in); the iterations read their times.
  struct Ids {
    std::vector<OpId> compute;
    std::array<std::vector<OpId>, kStreamCount> comm;
  };
  std::vector<Ids> ids(sim.simulated.size());
  for (std::size_t i = 0; i < sim.simulated.size(); ++i) {
    for (const Op& op : ops_of(set, sim.simulated[i])) {
      if (share[i][op.id] >= 0) {
        ids[i].compute.push_back(op.id);
      } else if (share[i][op.id] == kCommunication) {
        ids[i].comm[static_cast<std::size_t>(op.stream)].push_back(op.id);
      }
    }
  }
  const auto busy = [&](std::size_t i, const std::vector<OpId>& of, std::vector<Busy>& into) {
    into.clear();
    for (const OpId id : of) into.push_back({sim.data_start[i][id], sim.end[i][id], id});
  };
  std::vector<Busy> compute;  // storage reused from rank to rank and iteration to iteration
  std::vector<Busy> comm;
  double previous = sim.step_time.value();
  for (int iteration = 0; iteration < max_iterations; ++iteration) {
    std::vector<std::vector<double>> seconds = base;
    double added_compute = 0.0;
    double added_comm = 0.0;
    for (std::size_t i = 0; i < sim.simulated.size(); ++i) {
      busy(i, ids[i].compute, compute);
      for (const std::vector<OpId>& stream : ids[i].comm) {
        if (stream.empty()) continue;
        busy(i, stream, comm);
        overlapping_pairs(compute, comm, [&](const Busy& c, const Busy& m, double o) {
          const double g = share[i][c.op];
          const Slowdowns& l = slowdowns(i, m.op);
          const double slow_c = g * l.compute_gemm + (1 - g) * l.compute_memory;
          const double slow_m = g * l.comm_gemm + (1 - g) * l.comm_memory;
          seconds[i][c.op] += o * (1 - 1 / slow_c);
          seconds[i][m.op] += o * (1 - 1 / slow_m);
          added_compute += o * (1 - 1 / slow_c);
          added_comm += o * (1 - 1 / slow_m);
        });
      }
    }
    if (added_compute == 0.0 && added_comm == 0.0) break;  // nothing overlaps
    const auto ranks = static_cast<double>(sim.simulated.size());
    result.added_compute_s = added_compute / ranks;
    result.added_comm_s = added_comm / ranks;
    const TabledCosts lengthened(stand_in, std::move(seconds));
    simulate(set, lengthened, options, sim);
    ++result.iterations;
    const double now = sim.step_time.value();
    if (std::abs(now - previous) <= 1e-3 * previous) break;
    previous = now;
  }
  return result;
}

}  // namespace commscale::predict
