// The GPU entry points of a build without CUDA: there is never a GPU to use, and we say why.
#if !defined(COMMSCALE_HAVE_CUDA)

#include "core/error.hpp"
#include "runtime/gpu.hpp"
#include "runtime/calibration_probes.hpp"
#include "runtime/gpu_probes.hpp"

namespace commscale {

int visible_gpu_count(std::string* why) {
  *why = "this commscale was built without the GPU backend (no CUDA toolkit or NCCL at build time)";
  return 0;
}

std::unique_ptr<Backend> make_gpu_backend(const MpiComm&, int, Seconds) {
  throw RuntimeFailure("this commscale was built without the GPU backend");
}

std::unique_ptr<GpuProbes> make_gpu_probes(Bytes, bool) {
  throw RuntimeFailure("this commscale was built without the GPU backend");
}

HostIssueTimes measure_host_issue(const HostIssueOptions&) {
  throw RuntimeFailure("this commscale was built without the GPU backend");
}

InterferenceResult measure_interference(const InterferenceOptions&) {
  throw RuntimeFailure("this commscale was built without the GPU backend");
}

}  // namespace commscale

#endif
