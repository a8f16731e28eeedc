#include "bench/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "bench/calibrate_rows.hpp"
#include "bench/sweep.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "hw/catalog.hpp"
#include "hw/gpu_match.hpp"
#include "hw/kinds.hpp"
#include "hw/topo_matrix.hpp"
#include "hw/topology_dir.hpp"
#include "predict/compute_model.hpp"
#include "predict/calibration_sections.hpp"
#include "runtime/calibration_probes.hpp"
#include "runtime/discovery.hpp"
#include "runtime/gpu_probes.hpp"
#include "runtime/step_buffers.hpp"
#include "workload/layer_ops.hpp"

namespace commscale {
namespace {

using Json = nlohmann::ordered_json;

// GPU memory the GEMM and memory probes rotate their operands through (fits a 24 GB card).
constexpr Bytes kProbePool(8ull << 30);

// Every (m, n, k) of the grid per type (fp32: its smaller range), and the two batched GEMMs of
// attention (scores and context) at every sequence length, head size and batch count of the options,
// whole and as the causal shares that `train --flash-attn` runs them as (workload/layer_ops.hpp):
// their keys, about half the sequence, fall between the grid's rows, where interpolating missed the
// executor's flash products by 6-12% on the H200 (results/h200x1-2026-12-03b).
std::vector<Gemm> gemm_shapes(const CalibrateOptions& o) {
  std::vector<Gemm> shapes;
  for (DataType type : o.gemm_types) {
    const bool fp32 = type == DataType::kFloat32;
    if (is_fp8(type)) {  // the linear layers' GEMMs only: attention stays in bf16 under FP8 (workload/fp8_ops.hpp)
      for (std::int64_t m : o.gemm_dims) {
        for (std::int64_t n : o.gemm_dims) {
          for (std::int64_t k : o.gemm_dims) {
            shapes.push_back(fp8_gemm(make_gemm(m, n, k, 1, type), type, type, DataType::kBFloat16));
          }
        }
      }
      continue;
    }
    const std::int64_t low = fp32 ? o.fp32_min_dim : 0;
    const std::int64_t high = fp32 ? o.fp32_max_dim : INT64_MAX;
    for (std::int64_t m : o.gemm_dims) {
      for (std::int64_t n : o.gemm_dims) {
        for (std::int64_t k : o.gemm_dims) {
          if (std::min({m, n, k}) >= low && std::max({m, n, k}) <= high) shapes.push_back(make_gemm(m, n, k, 1, type));
        }
      }
    }
    for (std::int64_t s : o.attention_seqs) {
      for (std::int64_t d : o.attention_head_dims) {
        if (fp32 && (d != 128 || s < 1024)) continue;
        for (std::int64_t batch : o.attention_batches) {
          shapes.push_back(make_gemm(s, s, d, batch, type));
          shapes.push_back(make_gemm(s, d, s, batch, type));
          if (const std::int64_t keys = flash_causal_keys(s); keys != s) {
            shapes.push_back(make_gemm(s, keys, d, batch, type));
            shapes.push_back(make_gemm(s, d, keys, batch, type));
          }
        }
      }
    }
  }
  return shapes;
}

// Timed calls of a GEMM: the options' repetitions, fewer (at least 5) for a GEMM whose calls would run
// past 100 ms even at the catalog's peak: a long GEMM's median settles in a few calls.
int repetitions_for(const Gemm& g, const hw::GpuSpec& gpu, int repetitions) {
  constexpr double kBudgetS = 0.1;
  const std::optional<FlopsPerSecond> peak = predict::dense_rate(gpu, g.dtype, DataType::kFloat32);
  if (!peak) return repetitions;
  const double fastest_s = g.flops.value() / peak->value();
  return std::clamp(static_cast<int>(std::ceil(kBudgetS / fastest_s)), std::min(5, repetitions), repetitions);
}

// The catalog GPU of rank 0's device, or --gpu.
std::string catalog_gpu(const CalibrateOptions& o, const RunContext& context) {
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  if (!o.gpu.empty()) return catalog.gpu(o.gpu, "--gpu").name;
  const std::string& device = context.ranks.front().gpu_name;
  const std::optional<std::string> match = hw::match_gpu_name(device, catalog.gpu_names());
  if (!match) {
    throw InputError("--gpu", fmt::format("the device \"{}\" is no GPU of the catalog ({})", device, catalog.root().string()),
                     "--gpu NAME naming the catalog GPU it is (commscale hw list)");
  }
  return *match;
}

Json measure_gemms(const CalibrateOptions& o, const hw::GpuSpec& gpu, GpuProbes& probes, std::ostream& log) {
  Json rows = Json::array();
  double last_run_ms = 0.0;  // wall time of the shape timed just before: a heat of its own when long
  const bool fp8 = gpu.rate(hw::MathRate::kFp8Tensor).value.has_value();
  if (!fp8 && std::any_of(o.gemm_types.begin(), o.gemm_types.end(), [](DataType t) { return is_fp8(t); })) {
    log << fmt::format("# skipped fp8 GEMMs: {} has no FP8 tensor cores ({} is null in its file)\n", gpu.name,
                       hw::rate_key(hw::MathRate::kFp8Tensor));
  }
  for (const Gemm& g : gemm_shapes(o)) {
    if (is_fp8(g.dtype) && !fp8) continue;
    const Bytes operands(gemm_operand_layout(g).bytes);  // as the probe places them
    if (operands > kProbePool) {
      log << fmt::format("# skipped {} {} x {} x {} x {}: {:.1f} GiB of operands exceed the {:.0f} GiB probe pool\n",
                         name(g.dtype), g.m, g.n, g.k, g.batch, operands.gib(), kProbePool.gib());
      continue;
    }
    if (o.heat_ms > 0 && last_run_ms < o.heat_ms) probes.heat(Seconds(o.heat_ms * 1e-3));
    const auto start = std::chrono::steady_clock::now();
    const Seconds t = probes.gemm(g, repetitions_for(g, gpu, o.repetitions));
    last_run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log << fmt::format("gemm    {:>4} {:>6} x {:>6} x {:>6} x {:>3}  {:>10.1f} us  {:>7.1f} TFLOP/s\n", name(g.dtype), g.m,
                       g.n, g.k, g.batch, t.value() * 1e6, g.flops.value() / t.value() / 1e12)
        << std::flush;
    rows.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"batch", g.batch}, {"dtype", name(g.dtype)},
                    {"seconds", t.value()}});
  }
  return rows;
}

Json measure_memory(const CalibrateOptions& o, GpuProbes& probes, std::ostream& log) {
  Json rows = Json::array();
  for (Bytes b = o.memory_min; b <= o.memory_max; b = Bytes(b.count() * 2)) {
    if (o.heat_ms > 0) probes.heat(Seconds(o.heat_ms * 1e-3));
    const Seconds t = probes.memory(b, o.repetitions);
    log << fmt::format("memory  {:>10} moved  {:>10.1f} us  {:>7.1f} GB/s\n", format_size(b), t.value() * 1e6,
                       static_cast<double>(b.count()) / t.value() / 1e9)
        << std::flush;
    rows.push_back({{"bytes", b.count()}, {"seconds", t.value()}, {"kernel", "step memory kernel (read half, write half)"}});
  }
  return rows;
}

// One GEMM (2048 x 8192 x 2048 bf16, a layer's MLP GEMM at 2048 tokens) in a loop with the step's
// memory-bound kernel, at GEMM shares of the time from 1 down to 0.2: its speed there over its speed in
// the profile's GEMM row, the rate the predictor starts from (predict/clock.hpp). Each share runs 300 ms
// after the heat, timed over its second half. The row is the grid's where `gemm_rows` has the shape:
// timed again here, after the memory rows, the same 20 ms of heat left the GPU at a higher clock than
// inside the grid (97.4 against 112.7 us: results/h200x1-2026-12-03c/run-16).
Json measure_clock(const CalibrateOptions& o, const hw::GpuSpec& gpu, const RunContext& context, GpuProbes& probes,
                   const Json& gemm_rows, std::ostream& log) {
  const Gemm g = make_gemm(2048, 8192, 2048, 1, DataType::kBFloat16);
  const std::string what = fmt::format("{} {} x {} x {}", name(g.dtype), g.m, g.n, g.k);
  double row = 0.0;
  for (const Json& r : gemm_rows) {
    if (r["m"] == g.m && r["n"] == g.n && r["k"] == g.k && r["batch"] == g.batch && r["dtype"] == name(g.dtype)) {
      row = r["seconds"].get<double>();
    }
  }
  const bool from_grid = row > 0.0;
  if (!from_grid) {
    if (o.heat_ms > 0) probes.heat(Seconds(o.heat_ms * 1e-3));
    row = probes.gemm(g, repetitions_for(g, gpu, o.repetitions)).value();
  }
  log << fmt::format("clock   {} as a GEMM row   {:>8.1f} us ({})\n", what, row * 1e6,
                     from_grid ? "the grid's row" : "timed here: the grid has no such row");
  Json points = Json::array();
  double last_share = 2.0;
  for (const double asked : {1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2}) {
    if (o.heat_ms > 0) probes.heat(Seconds(o.heat_ms * 1e-3));
    const Alternation a = probes.gemm_among_memory(g, asked, Seconds(0.3));
    // Back to back is share 1 by definition (the events between calls take a little of the time).
    const double share = asked == 1.0 ? 1.0 : std::round(a.gemm_share * 1000.0) / 1000.0;
    const double speedup = row / a.gemm.value();
    log << fmt::format("clock   {} {:>4.0f}% of the time  {:>8.1f} us  {:.3f} x the row\n", what, 100 * share,
                       a.gemm.value() * 1e6, speedup)
        << std::flush;
    if (share >= last_share) continue;  // the memory kernel came out too short: no new share
    last_share = share;
    points.push_back({{"gemm_share", share}, {"speedup", speedup}});
  }
  return {{"gemm", what},
          {"source", fmt::format("commscale calibrate ({}) on {}: {} alternating with the step's memory-bound "
                                 "kernel, 300 ms per share after {} ms of heat, median over the second half, "
                                 "against its GEMM row ({:.1f} us, {})",
                                 context.git_sha, context.ranks.front().gpu_name, what, o.heat_ms, row * 1e6,
                                 from_grid ? "the grid's" : "timed before the loops")},
          {"points", points}};
}

// Collects the out-of-place time of every row, by collective.
class CurveCollector final : public BenchReporter {
 public:
  void begin(const BenchSetup&) override {}
  void row(const BenchRow& row) override {
    points_[row.collective].push_back({{"size_bytes", row.size.count()}, {"time_us", row.out_of_place.time_us}});
  }
  void end(const BenchSummary&) override {}
  [[nodiscard]] const std::map<Collective, Json>& points() const { return points_; }

 private:
  std::map<Collective, Json> points_;
};

std::string nccl_environment(const RunContext& context) {
  std::string env;
  for (const auto& [key, value] : context.environment) {
    if (key.rfind("NCCL_", 0) == 0) env += fmt::format("{}{}={}", env.empty() ? "" : " ", key, value);
  }
  return env;
}

bool set_to_one(const RunContext& context, const std::string& key) {
  const auto it = context.environment.find(key);
  return it != context.environment.end() && it->second == "1";
}

// How NCCL connects the group: between nodes, the network; else what the environment allows and,
// with P2P allowed, NVLink when every pair of the group's GPUs has it (NVML), else PCIe.
hw::PathClass group_path(const RunContext& context, const std::vector<int>& group, int nodes, std::ostream& log) {
  if (nodes > 1) return hw::PathClass::kNetwork;
  if (set_to_one(context, "NCCL_P2P_DISABLE")) {
    return set_to_one(context, "NCCL_SHM_DISABLE") ? hw::PathClass::kSocket : hw::PathClass::kHostStaged;
  }
  const MachineDiscovery machine = discover_machine({});
  std::vector<std::size_t> index;
  for (int r : group) {
    const std::string bus = normalize_pci_bus_id(context.ranks[static_cast<std::size_t>(r)].pci_bus_id);
    const auto it = std::find_if(machine.gpus.begin(), machine.gpus.end(),
                                 [&](const DiscoveredGpu& g) { return g.pci_bus_id == bus; });
    if (it == machine.gpus.end()) {
      log << fmt::format("# rank 0 cannot see rank {}'s GPU {}: its path is taken as PCIe\n", r, bus);
      return hw::PathClass::kPcie;
    }
    index.push_back(static_cast<std::size_t>(it - machine.gpus.begin()));
  }
  for (std::size_t a : index) {
    for (std::size_t b : index) {
      if (a != b && !machine.peers[a][b].nvlink_p2p) return hw::PathClass::kPcie;
    }
  }
  return hw::PathClass::kNvlink;
}

Json measure_collectives(const CalibrateOptions& o, const RankSession& session, const MpiComm& world,
                         const BenchReporterFactory& sweep_table, std::ostream& log) {
  Json curves = Json::array();
  const std::unique_ptr<Communicator> all = session.backend->world();
  const RunContext& context = session.context;
  std::vector<int> sizes;  // powers of two that divide the job, and the whole job
  for (int size = 2; size < world.size(); size *= 2) {
    if (world.size() % size == 0) sizes.push_back(size);
  }
  sizes.push_back(world.size());
  for (int size : sizes) {
    BenchOptions b;
    b.collectives = o.collectives;
    b.types = {DataType::kBFloat16};
    b.sizes = size_sweep(o.collective_min, o.collective_max, 2, Bytes(0));
    b.iters = o.repetitions;
    if (size < world.size()) b.split = {SplitKind::kConsecutive, size};
    const std::vector<int> group = split_groups(b.split, world.size()).front();
    std::set<std::string> hosts;
    for (int r : group) hosts.insert(context.ranks[static_cast<std::size_t>(r)].host);
    const int nodes = static_cast<int>(hosts.size());

    CollectiveSweep sweep(b, *session.backend, *all, world);
    BenchReporterList reporters;
    auto collector = std::make_unique<CurveCollector>();
    CurveCollector* curves_of_size = collector.get();
    if (world.rank() == 0) {
      if (sweep_table) reporters.add(sweep_table());
      reporters.add(std::move(collector));
      reporters.begin(sweep.setup(context));
    }
    const BenchSummary summary = sweep.run(world.rank() == 0 ? &reporters : nullptr);
    if (summary.wrong > 0) {
      throw RuntimeFailure(fmt::format("{} wrong elements in the collective sweep of groups of {}: the machine's "
                                       "collectives are broken, and no profile is written", summary.wrong, size));
    }
    if (world.rank() != 0) continue;
    reporters.end(summary);
    const hw::PathClass path = group_path(context, group, nodes, log);
    for (const auto& [collective, points] : curves_of_size->points()) {
      curves.push_back({{"collective", name(collective)}, {"ranks", size}, {"nodes", nodes},
                        {"path_class", hw::name(path)}, {"env", nccl_environment(context)},
                        {"source", fmt::format("commscale calibrate ({}), bf16, {} iterations per size, out of place",
                                               context.git_sha, b.iters)},
                        {"points", points}});
    }
  }
  return curves;
}

// Rank 0's host costs per op and kernel floor, with the job's barrier timed by every rank.
void measure_host(const RunContext& context, const MpiComm& world, std::ostream& log, Json* profile) {
  HostIssueTimes times;
  if (world.rank() == 0) {
    log << "# calibrate: host time per op on commscale's launch path (rank 0)\n";
    times = measure_host_issue(HostIssueOptions{});
  }
  std::vector<double> barrier_us;  // the barrier run_step starts with, over this job
  for (int i = 0; i < 21; ++i) {
    const auto start = std::chrono::steady_clock::now();
    world.barrier();
    barrier_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  if (world.rank() != 0) return;
  std::sort(barrier_us.begin(), barrier_us.end());
  const std::string by = fmt::format("commscale calibrate ({}) on {}", context.git_sha, context.ranks.front().gpu_name);
  const HostCosts h = commscale_host_costs(times, barrier_us[barrier_us.size() / 2], by);
  log << fmt::format("host    gemm {:.2f} us, kernel {:.2f}, collective {:.2f}, p2p {:.2f} ({}), event record {:.2f}, "
                     "stream wait {:.2f}, step {:.2f}; kernel floor {:.2f} us\n",
                     times.gemm_us, times.kernel_us, times.collective_us, times.p2p_us,
                     times.p2p_measured ? "measured" : "from the collective", times.event_record_us,
                     times.stream_wait_us, to_us(h.step), times.kernel_floor_us)
      << std::flush;
  (*profile)["host"] = Json::array({predict::section_json(h)});
  (*profile)["device"] = predict::section_json(device_figures(times, by));
}

Json measure_interference_rows(const CalibrateOptions& o, const RunContext& context, std::ostream& log) {
  log << "# calibrate: interference probe beside GEMMs and memory kernels (rank 0)\n";
  InterferenceOptions io;
  io.sms = o.interference_sms;
  io.heat_ms = o.heat_ms;
  const InterferenceResult r = measure_interference(io);
  for (const InterferenceMeasurement& m : r.rows) {
    log << fmt::format("probe   {:>3} SMs {:<9} beside {:<6}  compute {:>8.3f} -> {:>8.3f} ms  probe {:>7.1f} -> {:>7.1f} GB/s\n",
                       m.sms, m.streams_memory ? "streaming" : "held", m.beside_gemm ? "gemm" : "memory",
                       m.compute_alone_ms, m.compute_together_ms, m.probe_alone_GBps, m.probe_together_GBps);
  }
  for (const std::string& why : r.not_measured) log << "# not measured: " << why << "\n";
  std::vector<std::string> skipped;
  const std::string by = fmt::format("commscale calibrate ({}) on {}: {}", context.git_sha,
                                     context.ranks.front().gpu_name, r.method);
  Json rows = Json::array();
  for (const predict::InterferencePoint& p : interference_points(r, by, &skipped)) rows.push_back(predict::section_json(p));
  for (const std::string& s : skipped) log << "# left out (a slowdown no profile takes): " << s << "\n";
  return rows;
}

}  // namespace

Json run_calibration(const CalibrateOptions& o, const RankSession& session, const MpiComm& world,
                     const BenchReporterFactory& sweep_table, std::ostream& log) {
  const RunContext& context = session.context;
  if (context.backend != "gpu") {
    const bool host_side = o.host || o.interference;
    fail_on_all_ranks(world, InputError("--backend",
                                        fmt::format("calibrate measures GPUs{}, and this run has none ({})",
                                                    host_side ? " (host costs and interference are measured on the "
                                                                "GPU's launch path and SMs)"
                                                              : "",
                                                    context.backend_note.empty() ? "CPU backend" : context.backend_note),
                                        "a machine with a GPU; predict without --calibration uses the catalog"));
  }
  const std::string gpu = catalog_gpu(o, context);  // every rank: the same answer from the same context

  Json profile;
  profile["schema_version"] = 1;
  profile["kind"] = "commscale-calibration";
  Json machine = {{"gpu", gpu},
                  {"source", fmt::format("commscale calibrate {} ({}), {}", context.commscale_version, context.git_sha,
                                         context.command_line)},
                  {"gpus", world.size()},
                  {"date", context.start_time_utc.substr(0, 10)}};
  if (!o.cluster.empty()) machine["cluster"] = o.cluster;
  machine["description"] = o.description.empty()
                               ? fmt::format("{} x {} on {}, {}", world.size(), context.ranks.front().gpu_name,
                                             fmt::join(context.hosts, ","), context.comm_library)
                               : o.description;
  profile["machine"] = machine;

  const bool kernels = !o.gemm_types.empty() || o.memory_max.count() > 0 || o.clock;
  if (world.rank() == 0 && kernels) {
    log << fmt::format("# calibrate: GEMMs and memory kernels on rank 0's GPU ({}, catalog {})\n",
                       context.ranks.front().gpu_name, gpu);
    const hw::GpuSpec spec = hw::Catalog::open(hw::find_topologies_dir()).gpu(gpu, "--gpu");
    const std::unique_ptr<GpuProbes> probes = make_gpu_probes(kProbePool, false);
    if (!o.gemm_types.empty()) profile["gemm"] = measure_gemms(o, spec, *probes, log);
    if (o.memory_max.count() > 0) profile["memory"] = measure_memory(o, *probes, log);
    if (o.clock) {
      profile["clock"] = measure_clock(o, spec, context, *probes, profile.value("gemm", Json::array()), log);
    }
  }
  if (o.host) measure_host(context, world, log, &profile);
  if (world.rank() == 0 && o.interference) {
    Json rows = measure_interference_rows(o, context, log);
    if (!rows.empty()) profile["interference"] = std::move(rows);
  }
  world.barrier();
  if (!o.collectives.empty()) {
    if (world.size() == 1) {
      log << "# one rank: no collective to measure\n";
    } else {
      profile["collectives"] = measure_collectives(o, session, world, sweep_table, log);
    }
  }
  if (world.rank() != 0) return nullptr;
  return profile;
}

}  // namespace commscale
