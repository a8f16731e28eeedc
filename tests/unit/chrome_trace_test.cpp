#include "report/chrome_trace.hpp"

#include <gtest/gtest.h>

namespace commscale {
namespace {

// One rank whose program is one GEMM.
ProgramSet one_gemm() {
  ProgramSet set;
  set.world_size = 1;
  std::vector<Op> ops(1);
  ops[0] = Op{0, Stream::kCompute, Phase::kForward, {}, "mb0.L0.fwd.qkv", 0, 0, make_gemm(8, 8, 8, 1, DataType::kBFloat16)};
  set.programs = {ops};
  set.ranks = {RankProgram{0, 0, {}}};
  return set;
}

// The streams a trace names without offload: all but the two copy streams (named only where they have ops).
constexpr std::size_t kNamed = kStreamCount - 2;

TEST(ChromeTrace, ProcessesThreadsAndStepsEndToEnd) {
  const ProgramSet set = one_gemm();
  // Two steps of 2 ms each: the second is placed after the first ends.
  const Timeline t{"executor", 1, 2, {{0, 0, 0, Seconds(0.0005), Seconds(0.002)}, {0, 1, 0, Seconds(0.0), Seconds(0.002)}}};
  const nlohmann::json trace(chrome_trace(set, t));
  const nlohmann::json& events = trace.at("traceEvents");
  ASSERT_EQ(events.size(), 1u + kNamed + 2u);  // a process name, a thread name per stream, two ops
  EXPECT_EQ(events[0]["ph"], "M");
  EXPECT_EQ(events[0]["args"]["name"], "rank 0");
  EXPECT_EQ(events[1]["args"]["name"], "compute");
  const nlohmann::json& first = events[1 + kNamed];
  EXPECT_EQ(first["name"], "mb0.L0.fwd.qkv");
  EXPECT_EQ(first["ph"], "X");
  EXPECT_EQ(first["pid"], 0);
  EXPECT_EQ(first["tid"], 0);
  EXPECT_DOUBLE_EQ(first["ts"], 500.0);    // microseconds
  EXPECT_DOUBLE_EQ(first["dur"], 1500.0);
  EXPECT_EQ(first["args"]["gemm"]["m"], 8);
  EXPECT_DOUBLE_EQ(events[2 + kNamed]["ts"], 2000.0);  // step 1 starts where step 0 ended
}

TEST(ChromeTrace, MemoryKernelsNameTheirKind) {
  ProgramSet set;
  set.world_size = 1;
  MemoryKernel eager{Bytes(64), Bytes(32), 16, MemoryKernelKind::kSoftmax, KernelSet::kEager};
  MemoryKernel fused = eager;
  fused.kernels = KernelSet::kFused;
  std::vector<Op> ops(2);
  ops[0] = Op{0, Stream::kCompute, Phase::kForward, {}, "mb0.L0.fwd.attn.softmax", 0, 0, eager};
  ops[1] = Op{1, Stream::kCompute, Phase::kForward, {}, "mb0.L0.fwd.attn.dropout", 0, 0, fused};
  set.programs = {ops};
  set.ranks = {RankProgram{0, 0, {}}};
  const Timeline t{"predictor", 1, 1,
                   {{0, 0, 0, Seconds(0.0), Seconds(0.001)}, {0, 0, 1, Seconds(0.001), Seconds(0.002)}}};
  const nlohmann::json events = nlohmann::json(chrome_trace(set, t)).at("traceEvents");
  const nlohmann::json& a = events[1 + kNamed]["args"];
  EXPECT_EQ(a["kernel"], "softmax");
  EXPECT_EQ(a["kernels"], "eager");
  EXPECT_EQ(a["bytes_read"], 64);
  EXPECT_EQ(a["bytes_written"], 32);
  EXPECT_FALSE(events[2 + kNamed]["args"].contains("kernels"));  // fused, the default, is not written
}

// A predicted timeline's attribution goes into each op's args, in microseconds, the parts it has: the
// host's hold of 250 us and the 40 us latency term of 0.5 ms, none of the zero ones.
TEST(ChromeTrace, AttributionGoesIntoTheArgsOfItsOp) {
  const ProgramSet set = one_gemm();
  Timeline t{"predictor", 1, 1, {{0, 0, 0, Seconds(0.0005), Seconds(0.001)}}};
  t.attribution = {{Seconds(250e-6), Seconds(0.0), Seconds(40e-6), Seconds(0.0)}};
  const nlohmann::json args = nlohmann::json(chrome_trace(set, t)).at("traceEvents")[1 + kNamed]["args"];
  EXPECT_DOUBLE_EQ(args.at("host_us"), 250.0);
  EXPECT_DOUBLE_EQ(args.at("latency_us"), 40.0);
  EXPECT_FALSE(args.contains("peers_us"));
  EXPECT_FALSE(args.contains("interference_us"));
  t.attribution.clear();  // a measured timeline: none
  const nlohmann::json plain = nlohmann::json(chrome_trace(set, t)).at("traceEvents")[1 + kNamed]["args"];
  EXPECT_FALSE(plain.contains("host_us"));
}

TEST(ChromeTrace, AHostCopyNamesItsStreamAndDirection) {
  ProgramSet set = one_gemm();
  set.programs[0].push_back(
      Op{1, Stream::kDeviceToHost, Phase::kForward, {0}, "mb0.L0.fwd.activations_to_host", 0, 0,
         HostCopy{CopyDirection::kToHost, Bytes(4096)}});
  const Timeline t{"predictor", 1, 1,
                   {{0, 0, 0, Seconds(0.0), Seconds(0.001)}, {0, 0, 1, Seconds(0.001), Seconds(0.002)}}};
  const nlohmann::json trace(chrome_trace(set, t));
  const nlohmann::json& events = trace.at("traceEvents");
  ASSERT_EQ(events.size(), 1u + kNamed + 1u + 2u);  // and the d2h stream's name
  EXPECT_EQ(events[1 + kNamed]["args"]["name"], "d2h");
  const nlohmann::json& copy = events[3 + kNamed];
  EXPECT_EQ(copy["name"], "mb0.L0.fwd.activations_to_host");
  EXPECT_EQ(copy["args"]["copy"], "to_host");
  EXPECT_EQ(copy["args"]["bytes"], 4096);
}

}  // namespace
}  // namespace commscale
