// Discovery in a build without CUDA: there are no CUDA devices to describe, and we say why.
#if !defined(COMMSCALE_HAVE_CUDA)

#include "runtime/discovery.hpp"
#include "runtime/gpu.hpp"
#include "runtime/process.hpp"

namespace commscale {

MachineDiscovery discover_machine(const std::vector<int>& /*devices*/) {
  MachineDiscovery m;
  m.host = host_name();
  (void)visible_gpu_count(&m.no_gpu_reason);
  return m;
}

}  // namespace commscale

#endif
