#include "runtime/local_context.hpp"

#include <unistd.h>

#include <cstdlib>

#include "core/version.hpp"

extern char** environ;

namespace commscale {

RunContext single_process_context(const std::string& command_line, const MachineDiscovery& m) {
  RunContext c;
  c.commscale_version = std::string(version());
  c.git_sha = std::string(git_sha());
  c.command_line = command_line;
  c.start_time_utc = utc_timestamp();
  c.backend = m.gpus.empty() ? "none" : "gpu";
  c.backend_note = m.gpus.empty() ? m.no_gpu_reason : "one process over every GPU it uses (no MPI)";
  c.cuda_runtime = m.cuda_runtime;
  c.cuda_driver = m.cuda_driver;
  c.gpu_driver = m.gpu_driver;
  c.hosts = {m.host};
  for (const DiscoveredGpu& g : m.gpus) {
    RankPlacement p;
    p.pid = static_cast<int>(::getpid());
    p.host = m.host;
    p.device = g.device;
    p.gpu_name = g.name;
    p.pci_bus_id = g.pci_bus_id;
    p.gpu_uuid = g.uuid;
    p.gpu_memory_GiB = g.memory.gib();
    p.compute_capability = g.compute_capability;
    c.ranks.push_back(p);
  }
  c.environment = relevant_environment(environ);
  // Which GPUs a single process sees is set here, and it changes what the device numbers mean.
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) c.environment["CUDA_VISIBLE_DEVICES"] = visible;
  return c;
}

}  // namespace commscale
