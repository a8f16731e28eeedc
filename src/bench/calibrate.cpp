#include "bench/calibrate.hpp"

#include <algorithm>
#include <ostream>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "bench/sweep.hpp"
#include "core/error.hpp"
#include "core/size.hpp"
#include "hw/catalog.hpp"
#include "hw/gpu_match.hpp"
#include "hw/kinds.hpp"
#include "hw/topo_matrix.hpp"
#include "hw/topology_dir.hpp"
#include "runtime/discovery.hpp"
#include "runtime/gpu_probes.hpp"
#include "runtime/step_buffers.hpp"

namespace commscale {
namespace {

using Json = nlohmann::ordered_json;

// GPU memory the GEMM and memory probes rotate their operands through (fits a 24 GB card).
constexpr Bytes kProbePool(8ull << 30);

// Every (m, n, k) of the grid per type, and the two batched GEMMs of attention (scores and context,
// head size 128) at three sequence lengths and every batch count of the options.
std::vector<Gemm> gemm_shapes(const CalibrateOptions& o) {
  std::vector<Gemm> shapes;
  for (DataType type : o.gemm_types) {
    const std::int64_t cap = type == DataType::kFloat32 ? o.fp32_max_dim : INT64_MAX;
    for (std::int64_t m : o.gemm_dims) {
      for (std::int64_t n : o.gemm_dims) {
        for (std::int64_t k : o.gemm_dims) {
          if (std::max({m, n, k}) <= cap) shapes.push_back(make_gemm(m, n, k, 1, type));
        }
      }
    }
    for (std::int64_t s : {std::int64_t{1024}, std::int64_t{2048}, std::int64_t{4096}}) {
      for (std::int64_t batch : o.attention_batches) {
        shapes.push_back(make_gemm(s, s, 128, batch, type));
        shapes.push_back(make_gemm(s, 128, s, batch, type));
      }
    }
  }
  return shapes;
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

Json measure_gemms(const CalibrateOptions& o, GpuProbes& probes, std::ostream& log) {
  Json rows = Json::array();
  for (const Gemm& g : gemm_shapes(o)) {
    const Bytes operands(gemm_operand_layout(g).bytes);  // as the probe places them
    if (operands > kProbePool) {
      log << fmt::format("# skipped {} {} x {} x {} x {}: {:.1f} GiB of operands exceed the {:.0f} GiB probe pool\n",
                         name(g.dtype), g.m, g.n, g.k, g.batch, operands.gib(), kProbePool.gib());
      continue;
    }
    if (o.heat_ms > 0) probes.heat(Seconds(o.heat_ms * 1e-3));
    const Seconds t = probes.gemm(g, o.repetitions);
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

}  // namespace

Json run_calibration(const CalibrateOptions& o, const RankSession& session, const MpiComm& world,
                     const BenchReporterFactory& sweep_table, std::ostream& log) {
  const RunContext& context = session.context;
  if (context.backend != "gpu") {
    fail_on_all_ranks(world, InputError("--backend",
                                        fmt::format("calibrate measures GPUs, and this run has none ({})",
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

  if (world.rank() == 0) {
    log << fmt::format("# calibrate: GEMMs and memory kernels on rank 0's GPU ({}, catalog {})\n",
                       context.ranks.front().gpu_name, gpu);
    const std::unique_ptr<GpuProbes> probes = make_gpu_probes(kProbePool, false);
    profile["gemm"] = measure_gemms(o, *probes, log);
    profile["memory"] = measure_memory(o, *probes, log);
  }
  world.barrier();
  if (world.size() == 1) {
    log << "# one rank: no collective to measure\n";
  } else {
    profile["collectives"] = measure_collectives(o, session, world, sweep_table, log);
  }
  if (world.rank() != 0) return nullptr;
  return profile;
}

}  // namespace commscale
