#include "runtime/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/version.hpp"
#include "runtime/control_plane.hpp"
#include "runtime/gpu.hpp"
#include "runtime/host_backend.hpp"
#include "runtime/mpi_transport.hpp"

extern char** environ;

namespace commscale {
namespace {

std::string mpi_library_version() {
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> text{};
  int length = 0;
  MPI_CHECK(MPI_Get_library_version(text.data(), &length));
  const std::string version(text.data(), static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of(",\n"));
}

// Decides between the backends. Returns true for the GPU backend and sets *note to what ran and why.
bool choose_gpu(const RuntimeOptions& options, const MpiComm& world, int gpus, const std::string& why,
                std::string* note) {
  if (options.backend == BackendChoice::kCpu) {
    *note = "CPU backend (--backend cpu): MPI collectives on host memory";
    return false;
  }
  const int fewest = world.min(gpus);
  const int most = world.max(gpus);
  if (most == 0) {
    if (options.backend == BackendChoice::kGpu) throw RuntimeFailure(fmt::format("--backend gpu: {}", why));
    *note = fmt::format("{}; running the CPU backend (MPI collectives on host memory)", why);
    return false;
  }
  if (fewest == 0) {
    if (gpus == 0) throw RuntimeFailure(fmt::format("other ranks see GPUs but this one does not: {}", why));
    throw PeerFailure("another rank sees no GPU");
  }
  return true;
}

int choose_device(const RuntimeOptions& options, const NodeInfo& node, int gpus, const MpiComm& world) {
  const int device = options.devices.empty()
                         ? node.local_rank % gpus
                         : options.devices[static_cast<std::size_t>(node.local_rank) % options.devices.size()];
  if (world.min(device < gpus ? 1 : 0) == 0) {
    if (device >= gpus) {
      throw InputError("--devices", fmt::format("device {} does not exist on host {}, which has {}", device,
                                                node.host, gpus),
                       fmt::format("device numbers below {}", gpus));
    }
    throw PeerFailure("another rank was given a device that does not exist");
  }
  // Two ranks on one GPU would make NCCL fail later with a less helpful message.
  const std::vector<std::string> slots = world.allgather(fmt::format("{}/{}", node.host, device));
  std::map<std::string, int> first_rank;
  for (int r = 0; r < world.size(); ++r) {
    const auto [it, fresh] = first_rank.emplace(slots[static_cast<std::size_t>(r)], r);
    if (!fresh) {
      fail_on_all_ranks(world, InputError("rank placement",
                                        fmt::format("ranks {} and {} would share GPU {}", it->second, r, it->first),
                                        "one rank per GPU: start at most as many ranks per node as it has GPUs, "
                                        "or map them with --devices"));
    }
  }
  return device;
}

std::vector<RankPlacement> gather_placements(const MpiComm& world, const RankPlacement& mine) {
  std::vector<RankPlacement> all;
  for (const std::string& text : world.allgather(nlohmann::json(mine).dump())) {
    all.push_back(nlohmann::json::parse(text).get<RankPlacement>());
  }
  return all;
}

}  // namespace

RankSession start_rank_session(const RuntimeOptions& options, const MpiComm& world) {
  RankSession s;
  set_control_plane_wait_limit(std::chrono::duration<double>(options.timeout.value()));
  set_control_plane_wait_report(std::chrono::duration<double>(options.wait_report.value()));
  s.node = discover_node(world);
  set_process_identity(s.node.host, world.rank());

  std::string why;
  const int gpus = options.backend == BackendChoice::kCpu ? 0 : visible_gpu_count(&why);
  RunContext& c = s.context;
  if (choose_gpu(options, world, gpus, why, &c.backend_note)) {
    s.backend = make_gpu_backend(world, choose_device(options, s.node, gpus, world), options.timeout);
  } else {
    s.backend = std::make_unique<HostBackend>(world);
  }

  RankPlacement mine;
  mine.rank = world.rank();
  mine.local_rank = s.node.local_rank;
  mine.pid = static_cast<int>(::getpid());
  mine.host = s.node.host;
  s.backend->describe(mine, c);
  c.ranks = gather_placements(world, mine);
  for (const RankPlacement& p : c.ranks) {
    if (std::find(c.hosts.begin(), c.hosts.end(), p.host) == c.hosts.end()) c.hosts.push_back(p.host);
  }
  c.commscale_version = std::string(version());
  c.git_sha = std::string(git_sha());
  c.command_line = options.command_line;
  c.start_time_utc = utc_timestamp();
  c.mpi_library = mpi_library_version();
  c.environment = relevant_environment(environ);
  c.mpi_transport = mpi_transport_settings();
  return s;
}

}  // namespace commscale
