// calibrate's timing of one kind of call (runtime/cuda/probe_timing.hpp) measures the GPU's time per
// call, not the host's: calls that take the host 50 us each to issue but the GPU only an empty kernel's
// time come out far below 50 us. Issued from an idle GPU, as calibrate did before, they were timed at
// the host's pace (a tiny GEMM's row was its cuBLASLt launch). Skips without a GPU.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "kernels/probe.cuh"
#include "runtime/cuda/handles.hpp"
#include "runtime/cuda/probe_timing.hpp"
#include "runtime/gpu.hpp"

namespace commscale {
namespace {

TEST(GpuProbeTiming, TimesTheGpuNotTheHost) {
  std::string why;
  if (visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
  const CudaStream stream;
  const auto slow_to_issue = [&](int) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    kernels::launch_empty(stream.get());
  };
  // 200 calls: two batches; the first spin (50 us a call) is about as long as the calls' issue, so at
  // times it is doubled and the batch run again.
  const Seconds t = median_call_time(slow_to_issue, stream.get(), 200);
  EXPECT_GT(t.value(), 0.0);
  EXPECT_LT(t.value(), 20e-6) << "an empty kernel timed at the host's 50 us per call";
}

}  // namespace
}  // namespace commscale
