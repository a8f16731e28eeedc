// `calibrate`'s measurements on the GPU under mpirun with 1 and 2 ranks: every GEMM, memory and
// collective row present, positive and no faster than the catalog GPU allows. Skips without a GPU.
#include <sstream>

#include <gtest/gtest.h>

#include "bench/calibrate.hpp"
#include "hw/catalog.hpp"
#include "hw/topology_dir.hpp"
#include "runtime/gpu.hpp"

namespace commscale {
namespace {

TEST(GpuCalibrate, MeasuresEveryRowOnATinyGrid) {
  std::string why;
  if (visible_gpu_count(&why) == 0) GTEST_SKIP() << why;
  const MpiComm world = MpiComm::world();
  if (world.size() > visible_gpu_count(&why)) GTEST_SKIP() << "more ranks than GPUs";
  RuntimeOptions runtime;
  runtime.backend = BackendChoice::kGpu;
  const RankSession session = start_rank_session(runtime, world);
  CalibrateOptions o;
  o.gemm_types = {DataType::kBFloat16, DataType::kFloat32};
  o.gemm_dims = {256, 1024};
  o.collective_max = Bytes(64 * 1024);
  o.memory_max = Bytes(16ull << 20);
  o.attention_seqs = {512, 1024};
  o.attention_head_dims = {128};
  o.attention_batches = {8, 32};
  o.heat_ms = 1;
  o.repetitions = 3;
  o.clock = true;
  std::ostringstream log;
  const nlohmann::ordered_json profile = run_calibration(o, session, world, {}, log);
  if (world.rank() != 0) return;

  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  const hw::GpuSpec gpu = catalog.gpu(profile["machine"]["gpu"].get<std::string>(), "test");
  const double peak = gpu.rate(hw::MathRate::kBf16Fp32Acc).value->value();
  // bf16: the 2^3 grid shapes, and attention's 2 GEMMs whole and as causal shares (2 more) at 2 sequence
  // lengths and 2 batch counts; fp32: the one grid shape within its 1024-8192 range and the same attention
  // GEMMs (head size 128, sequences from 1024).
  ASSERT_EQ(profile["gemm"].size(), (8u + 2 * 2 * 4) + (1u + 1 * 2 * 4));
  for (const auto& row : profile["gemm"]) {
    const double flops = 2.0 * row["m"].get<double>() * row["n"].get<double>() * row["k"].get<double>() *
                         row["batch"].get<double>();
    EXPECT_GT(row["seconds"].get<double>(), 0.0);
    EXPECT_LT(flops / row["seconds"].get<double>(), peak) << row.dump();
  }
  ASSERT_EQ(profile["memory"].size(), 5u);  // 1, 2, 4, 8, 16 MiB
  for (const auto& row : profile["memory"]) EXPECT_GT(row["seconds"].get<double>(), 0.0);
  // The clock curve: shares falling from 1, each speedup positive; this grid has no row of its GEMM,
  // so calibrate timed one.
  const auto& points = profile["clock"]["points"];
  ASSERT_GE(points.size(), 2u);
  EXPECT_EQ(points[0]["gemm_share"].get<double>(), 1.0);
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_GT(points[i]["speedup"].get<double>(), 0.0);
    if (i > 0) {
      EXPECT_LT(points[i]["gemm_share"].get<double>(), points[i - 1]["gemm_share"].get<double>());
    }
  }
  EXPECT_NE(profile["clock"]["source"].get<std::string>().find("timed before the loops"), std::string::npos);
  if (world.size() == 1) {
    EXPECT_FALSE(profile.contains("collectives"));
    return;
  }
  ASSERT_EQ(profile["collectives"].size(), o.collectives.size());
  for (const auto& curve : profile["collectives"]) {
    EXPECT_EQ(curve["ranks"].get<int>(), world.size());
    EXPECT_EQ(curve["points"].size(), 7u);  // 1K to 64K
  }
}

}  // namespace
}  // namespace commscale
