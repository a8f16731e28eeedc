// Calibration profiles: reading and checking them (errors name the file and key), the interpolation
// rules, and how the compute and collective models use them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "input_error_matcher.hpp"
#include "predict/calibration.hpp"
#include "predict/comm_model.hpp"
#include "predict/compute_model.hpp"
#include "predict_test_support.hpp"
#include "workload/layer_ops.hpp"
#include "workload/presets.hpp"

namespace commscale::predict {
namespace {

// The fixed part of a bf16 GEMM call that ComputeModel passes to gemm_efficiency: the fastest row, at
// most the catalog's call time.
Seconds fixed_part(const CalibrationProfile& p) {
  return std::min(*fastest_gemm(p, DataType::kBFloat16), microseconds(kGemmCallUs));
}

using commscale::testing::throws_input_error;

const std::string kFixture = hw::testing::kSourceDir + "/tests/data/predict/h200x2-calibration.json";

nlohmann::json minimal() {
  return nlohmann::json::parse(R"({
    "schema_version": 1, "kind": "commscale-calibration",
    "machine": {"gpu": "h200-sxm", "source": "test"},
    "gemm": [{"m": 1024, "n": 1024, "k": 1024, "dtype": "bf16", "seconds": 1e-5},
             {"m": 16384, "n": 16384, "k": 16384, "dtype": "bf16", "seconds": 0.02}],
    "memory": [{"bytes": 1048576, "seconds": 1e-5}, {"bytes": 1073741824, "seconds": 2.5e-4}],
    "collectives": [{"collective": "all_reduce", "ranks": 2, "path_class": "nvlink",
                     "points": [{"size_bytes": 1024, "time_us": 10}, {"size_bytes": 1048576, "time_us": 100}]}]
  })");
}

CalibrationProfile parse(const nlohmann::json& doc) {
  return parse_calibration(doc, "cal.json", hw::testing::catalog());
}

TEST(Calibration, ReadsTheCommittedFixture) {
  const CalibrationProfile p = load_calibration(kFixture, hw::testing::catalog());
  EXPECT_EQ(p.gpu.name, "h200-sxm");
  EXPECT_EQ(p.collectives.size(), 15u);  // 5 collectives x NVLink, host-staged, sockets
  // 8192^3 at 783 TFLOP/s is 783 / 989.5 of the H200's dense BF16 peak.
  EXPECT_NEAR(p.gemm.front().efficiency, 783.0 / 989.5, 1e-9);
  EXPECT_NEAR(p.memory.front().efficiency, 4273.0 / 4800.0, 1e-9);
  // Written back and read again, the same profile.
  const CalibrationProfile again =
      parse_calibration(nlohmann::json::parse(calibration_to_json(p).dump()), "again", hw::testing::catalog());
  EXPECT_EQ(again.gemm.size(), p.gemm.size());
  EXPECT_EQ(again.collectives.back().points.size(), p.collectives.back().points.size());
}

TEST(Calibration, ErrorsNameTheFileAndTheKey) {
  nlohmann::json doc = minimal();
  doc["extra"] = 1;
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"cal.json", "extra"}));
  doc = minimal();
  doc["gemm"][1]["dtype"] = "int8";
  EXPECT_TRUE(
      throws_input_error([&] { (void)parse(doc); }, {"cal.json", "gemm[1].dtype", "bf16, fp16, fp32 or fp8_e4m3"}));
  doc = minimal();
  doc["machine"]["gpu"] = "no-such-gpu";
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"machine.gpu", "no-such-gpu"}));
  doc = minimal();
  doc["gemm"][0]["seconds"] = 1e-9;  // 2 x 1024^3 FLOPs in 1 ns: far beyond the peak
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"gemm[0].seconds", "peak"}));
  doc = minimal();
  doc["collectives"][0]["points"][1]["size_bytes"] = 1024;
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"collectives[0].points", "twice"}));
  doc = minimal();
  doc["collectives"][0]["path_class"] = "carrier-pigeon";
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"collectives[0].path_class", "host_staged"}));
  doc = minimal();
  doc["kind"] = "commscale-bench";
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"cal.json", "kind"}));
}

TEST(Calibration, GemmEfficiencyInterpolatesInLogShapeSpace) {
  const CalibrationProfile p = parse(minimal());
  const double e1 = 2.0 * std::pow(1024.0, 3) / 1e-5 / 989.5e12;
  const double e2 = 2.0 * std::pow(16384.0, 3) / 0.02 / 989.5e12;
  // Exact shapes return their own row.
  EXPECT_NEAR(*gemm_efficiency(p, make_gemm(1024, 1024, 1024, 1, DataType::kBFloat16)), e1, 1e-12);
  // 4096^3 is 2 doublings from 1024 and 2 from 16384 on each of m, n, k: equal distances, equal weights.
  EXPECT_NEAR(*gemm_efficiency(p, make_gemm(4096, 4096, 4096, 1, DataType::kBFloat16)), (e1 + e2) / 2, 1e-12);
  // Beyond the rows: no extrapolation past the nearest measured efficiency.
  const double far = *gemm_efficiency(p, make_gemm(65536, 65536, 65536, 1, DataType::kBFloat16));
  EXPECT_GT(far, std::min(e1, e2));
  EXPECT_LT(far, std::max(e1, e2));
  // No fp16 rows: the default model.
  EXPECT_FALSE(gemm_efficiency(p, make_gemm(4096, 4096, 4096, 1, DataType::kFloat16)).has_value());
}

TEST(Calibration, GemmEfficiencyComesFromTheNearestRows) {
  // One batched attention GEMM among a grid of 27 large unbatched ones that run at twice its rate:
  // the same GEMM at twice the batch takes (nearly) the batched row's efficiency, not the grid's.
  nlohmann::json doc = minimal();
  const double peak = 989.5e12;
  auto row = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, double efficiency) {
    const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                         static_cast<double>(batch);
    return nlohmann::json{{"m", m}, {"n", n}, {"k", k}, {"batch", batch}, {"dtype", "bf16"},
                          {"seconds", flops / (efficiency * peak)}};
  };
  doc["gemm"] = nlohmann::json::array({row(2048, 2048, 128, 32, 0.4)});
  for (std::int64_t m : {4096, 8192, 16384}) {
    for (std::int64_t n : {4096, 8192, 16384}) {
      for (std::int64_t k : {4096, 8192, 16384}) doc["gemm"].push_back(row(m, n, k, 1, 0.8));
    }
  }
  const CalibrationProfile p = parse(doc);
  const double e = *gemm_efficiency(p, make_gemm(2048, 2048, 128, 64, DataType::kBFloat16));
  EXPECT_GT(e, 0.4);
  EXPECT_LT(e, 0.45);  // the 8 nearest give 0.437; all 28 rows, inverse-square weighted, 0.500
}

TEST(Calibration, MemoryAndCollectiveCurves) {
  const CalibrationProfile p = parse(minimal());
  const GBps bw(4800.0);
  // Below the smallest row: its time. Above the largest: its bandwidth fraction (2^30 / 2.5e-4 s over 4800).
  EXPECT_DOUBLE_EQ(memory_time(p, Bytes(1024), bw)->value(), 1e-5);
  const double fraction = 1073741824.0 / 2.5e-4 / 4800e9;
  EXPECT_NEAR(memory_time(p, Bytes(1ull << 32), bw)->value(), 4294967296.0 / (4800e9 * fraction), 1e-15);
  // Collective time interpolates linearly in log size - log time: 32 KiB is halfway between 1 KiB and
  // 1 MiB in log2 (10, 15, 20), so its time is the geometric mean of 10 and 100 us.
  const CollectiveCurve& c = p.collectives.front();
  EXPECT_NEAR(to_us(curve_time(c, Bytes(32 * 1024))), std::sqrt(10.0 * 100.0), 1e-9);
  EXPECT_DOUBLE_EQ(to_us(curve_time(c, Bytes(8))), 10.0);
  EXPECT_NEAR(to_us(curve_time(c, Bytes(2 * 1048576))), 200.0, 1e-9);  // the largest size's bus bandwidth
}

TEST(Calibration, KeyedMemoryRowsTimeTheirOwnKernels) {
  nlohmann::json doc = minimal();
  // An eager softmax at 1 MiB takes 4x the generic copy; its backward 8x.
  doc["memory"].push_back({{"bytes", 1048576}, {"seconds", 4e-5}, {"kind", "softmax"}, {"kernels", "eager"}});
  doc["memory"].push_back(
      {{"bytes", 1048576}, {"seconds", 8e-5}, {"kind", "softmax"}, {"kernels", "eager"}, {"phase", "bwd"}});
  const CalibrationProfile p = parse(doc);
  const GBps bw(4800.0);
  MemoryKernel softmax = memory_kernel(MemoryKernelKind::kSoftmax, 1 << 18, 2, 2);  // 1 MiB
  softmax.kernels = KernelSet::kEager;
  const Bytes mib(1048576);
  EXPECT_DOUBLE_EQ(memory_time(p, mib, bw, memory_row_key(softmax, Phase::kForward))->value(), 4e-5);
  EXPECT_DOUBLE_EQ(memory_time(p, mib, bw, memory_row_key(softmax, Phase::kBackward))->value(), 8e-5);
  EXPECT_DOUBLE_EQ(memory_time(p, mib, bw, memory_row_key(softmax, Phase::kRecompute))->value(), 4e-5);
  // Beyond its only row, the row's bandwidth fraction.
  EXPECT_NEAR(memory_time(p, Bytes(2 * 1048576), bw, memory_row_key(softmax, Phase::kForward))->value(), 8e-5, 1e-15);
  // Fused softmax and other kinds have no rows of their own: the generic curve.
  softmax.kernels = KernelSet::kFused;
  EXPECT_DOUBLE_EQ(memory_time(p, mib, bw, memory_row_key(softmax, Phase::kForward))->value(), 1e-5);
  EXPECT_DOUBLE_EQ(memory_time(p, mib, bw)->value(), 1e-5);
  // And so does the compute model.
  const ComputeModel model(hw::testing::catalog().gpu("h200-sxm", "test"), &p);
  softmax.kernels = KernelSet::kEager;
  EXPECT_DOUBLE_EQ(model.time(OpPayload(softmax), Phase::kBackward).value(), 8e-5);
}

TEST(Calibration, KeyedMemoryRowErrors) {
  nlohmann::json doc = minimal();
  doc["memory"].push_back({{"bytes", 1048576}, {"seconds", 4e-5}, {"kernels", "eager"}});
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"cal.json", "memory[2].kernels", "without \"kind\""}));
  doc = minimal();
  doc["memory"].push_back({{"bytes", 1048576}, {"seconds", 4e-5}, {"kind", "softmax"}, {"phase", "sideways"}});
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"memory[2].phase", "sideways", "fwd or bwd"}));
  doc = minimal();
  doc["memory"].push_back({{"bytes", 1048576}, {"seconds", 4e-5}, {"kind", "teleport"}});
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"memory[2].kind", "teleport"}));
  doc = minimal();
  doc["memory"].push_back({{"bytes", 1048576}, {"seconds", 4e-5}, {"kind", "softmax"}, {"kernels", "lazy"}});
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"memory[2].kernels", "lazy", "eager"}));
  doc = minimal();
  doc["memory"].push_back({{"bytes", 1048576}, {"seconds", 2e-5}});  // the generic 1 MiB row again
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"cal.json", "memory", "1048576 bytes appear twice"}));
  // The same size for another kind, or the other phase, is fine; written back, read the same.
  doc = minimal();
  doc["memory"].push_back({{"bytes", 1048576}, {"seconds", 4e-5}, {"kind", "softmax"}, {"kernels", "eager"}});
  doc["memory"].push_back({{"bytes", 1048576}, {"seconds", 4e-5}, {"kind", "softmax"}, {"phase", "bwd"}});
  const CalibrationProfile p = parse(doc);
  const CalibrationProfile again = parse_calibration(nlohmann::json::parse(calibration_to_json(p).dump()), "again",
                                                     hw::testing::catalog());
  ASSERT_EQ(again.memory.size(), 4u);
  for (std::size_t i = 0; i < p.memory.size(); ++i) EXPECT_TRUE(again.memory[i].key == p.memory[i].key) << i;
}

TEST(Calibration, CollectiveCurvesReplaceTheModelOnTheirMachineOnly) {
  const auto profile = std::make_shared<const CalibrationProfile>(load_calibration(kFixture, hw::testing::catalog()));
  const hw::Catalog& catalog = hw::testing::catalog();
  const Target h200 = make_target(catalog, catalog.cluster("h200x2", "test"), 1, profile);
  LinkAnalyzer analyzer(h200.graph, h200.achievable);
  const GroupLinks g = analyzer.groups({{0, 1}}).front();
  // 4 GiB all-reduce over NVLink: the measured 12448.27 us, not the model's 11598 us.
  const CommEstimate e = h200.comm.collective(Collective::kAllReduce, Bytes(4ull << 30), g);
  EXPECT_TRUE(e.calibrated);
  EXPECT_NEAR(to_us(e.time), 12448.268, 1e-3);
  // Another machine with the same GPU family gets the GEMM and memory fractions, not the curves.
  const Target h100 = make_target(catalog, catalog.cluster("hgx-h100", "test"), 1, profile);
  LinkAnalyzer h100_links(h100.graph, h100.achievable);
  EXPECT_FALSE(
      h100.comm.collective(Collective::kAllReduce, Bytes(4ull << 30), h100_links.groups({{0, 1}}).front()).calibrated);
  // The profile's 8192^3 row (783 TFLOP/s): the same efficiency on both, and its own time on the H200.
  const Gemm big = make_gemm(8192, 8192, 8192, 1, DataType::kBFloat16);
  EXPECT_DOUBLE_EQ(h100.compute.efficiency(big), h200.compute.efficiency(big));
  EXPECT_NEAR(h200.compute.time(big).value(), big.flops.value() / 783e12, 1e-12);
  EXPECT_FALSE(h100.notes.empty());
  // Another family (Ampere) keeps the defaults, and says so.
  const Target a100 = make_target(catalog, catalog.cluster("hgx-a100", "test"), 1, profile);
  EXPECT_DOUBLE_EQ(a100.compute.efficiency(big), a100.compute.default_efficiency(big));
  const auto says = [&](std::string_view words) {
    return std::any_of(a100.notes.begin(), a100.notes.end(),
                       [&](const std::string& n) { return n.find(words) != std::string::npos; });
  };
  EXPECT_TRUE(says("another family")) << fmt::format("{}", fmt::join(a100.notes, "\n"));
}

// A flash-attention kernel's products take their time from the attention rows: the forward kernel of
// seq 2048, 32 heads of 128, measured at half the dense peak, makes the two forward products (scores and
// context, each half the kernel's causal FLOPs) take the measured time between them; the GEMM rows,
// which say 783 / 989.5 for square shapes, do not apply to them.
TEST(Calibration, FlashProductsTakeTheAttentionRowsTime) {
  const hw::Catalog& catalog = hw::testing::catalog();
  const double peak = 989.5e12;  // H200 dense BF16 (FP32 accumulate), the catalog's
  const double kernel_s = flash_attention_flops(2048, 32, 128, false).value() / (0.5 * peak);
  nlohmann::json doc = minimal();
  doc["attention"] = nlohmann::json::array(
      {{{"seq", 2048}, {"batch", 32}, {"head_dim", 128}, {"dtype", "bf16"}, {"phase", "fwd"}, {"seconds", kernel_s}}});
  const auto profile = std::make_shared<const CalibrationProfile>(parse(doc));
  ASSERT_EQ(profile->attention.size(), 1u);
  EXPECT_NEAR(profile->attention.front().efficiency, 0.5, 1e-12);
  const Target h200 = make_target(catalog, catalog.cluster("h200x2", "test"), 1, profile);
  TransformerConfig m = find_preset("tiny", "");
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.seq = 2048;
  LayerSharding s;
  s.flash_attention = true;
  double products_s = 0.0;
  for (const WorkloadOp& op : layer_forward_ops(m, s)) {
    const auto* g = std::get_if<Gemm>(&op.payload);
    if (g == nullptr || !g->flash) continue;
    EXPECT_NEAR(h200.compute.efficiency(*g, Phase::kForward), 0.5, 1e-12) << op.name;
    products_s += h200.compute.time(*g, Phase::kForward).value();
  }
  EXPECT_NEAR(products_s, kernel_s, 1e-12 * kernel_s + 1e-15);
  // No backward row: the backward products fall back to the GEMM rows (nearest shapes), not to 0.5.
  for (const WorkloadOp& op : layer_backward_ops(m, s)) {
    const auto* g = std::get_if<Gemm>(&op.payload);
    if (g == nullptr || !g->flash) continue;
    EXPECT_DOUBLE_EQ(h200.compute.efficiency(*g, Phase::kBackward),
                     *gemm_efficiency(*profile, *g, fixed_part(*profile)))
        << op.name;
  }
}

// Attention rows with dropout price the products of a kernel with dropout; without such rows, the
// others do. Both kinds at seq 2048, 32 heads of 128: at 0.5 of the peak without, 0.4 with.
TEST(Calibration, FlashProductsWithDropoutTakeTheDropoutRows) {
  const double peak = 989.5e12;
  const auto row = [&](double efficiency, bool dropout) {
    nlohmann::json r = {{"seq", 2048},   {"batch", 32},
                        {"head_dim", 128}, {"dtype", "bf16"},
                        {"phase", "fwd"},  {"seconds", flash_attention_flops(2048, 32, 128, false).value() /
                                                           (efficiency * peak)}};
    if (dropout) r["dropout"] = true;
    return r;
  };
  nlohmann::json doc = minimal();
  doc["attention"] = nlohmann::json::array({row(0.5, false), row(0.4, true)});
  const CalibrationProfile both = parse(doc);
  Gemm scores = make_gemm(2048, 1088, 128, 32, DataType::kBFloat16);
  scores.flash = true;
  EXPECT_NEAR(*attention_efficiency(both, scores, false), 0.5, 1e-12);
  scores.flash_dropout = true;
  EXPECT_NEAR(*attention_efficiency(both, scores, false), 0.4, 1e-12);
  // Written back and read again, the dropout row is still one.
  const CalibrationProfile again = parse_calibration(nlohmann::json::parse(calibration_to_json(both).dump()), "again",
                                                     hw::testing::catalog());
  ASSERT_EQ(again.attention.size(), 2u);
  EXPECT_TRUE(again.attention[1].dropout);
  // No dropout row: the kernel with dropout takes the others.
  doc["attention"] = nlohmann::json::array({row(0.5, false)});
  EXPECT_NEAR(*attention_efficiency(parse(doc), scores, false), 0.5, 1e-12);
  // The same case twice with and without dropout is two cases; a non-boolean dropout is refused.
  doc["attention"] = nlohmann::json::array({row(0.5, false), row(0.4, true), row(0.4, true)});
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"attention[2]", "appears twice"}));
  nlohmann::json bad = row(0.5, false);
  bad["dropout"] = "yes";
  doc["attention"] = nlohmann::json::array({bad});
  EXPECT_TRUE(throws_input_error([&] { (void)parse(doc); }, {"attention[0].dropout"}));
}

// Where the framework runs each product as its own GEMM call (commscale's executor: attention_issue
// product), the attention rows of a fused kernel do not apply: the products take the GEMM rows.
TEST(Calibration, FlashProductsOfSeparateGemmCallsTakeTheGemmRows) {
  const hw::Catalog& catalog = hw::testing::catalog();
  nlohmann::json doc = minimal();
  doc["attention"] = nlohmann::json::array(
      {{{"seq", 2048}, {"batch", 32}, {"head_dim", 128}, {"dtype", "bf16"}, {"phase", "fwd"}, {"seconds", 1e-3}}});
  const auto profile = std::make_shared<const CalibrationProfile>(parse(doc));
  HostCosts per_product;
  per_product.framework = "commscale";
  per_product.attention = AttentionIssue::kPerProduct;
  const Target h200 = make_target(catalog, catalog.cluster("h200x2", "test"), 1, profile, per_product);
  const Gemm scores = [] {
    Gemm g = make_gemm(2048, 1088, 128, 32, DataType::kBFloat16);
    g.flash = true;
    return g;
  }();
  EXPECT_DOUBLE_EQ(h200.compute.efficiency(scores, Phase::kForward),
                   *gemm_efficiency(*profile, scores, fixed_part(*profile)));
}

// A GEMM call is not faster than the fastest row of its dtype: minimal()'s 1024^3 row (10 us, 215
// TFLOP/s, 0.217 of the peak) would put a 256^3 GEMM at 0.16 us at that efficiency; it takes the 10 us.
// A flash product priced from attention rows is a share of one kernel and has no floor of its own.
TEST(Calibration, NoGemmIsFasterThanTheFastestRow) {
  const CalibrationProfile p = parse(minimal());
  ASSERT_TRUE(fastest_gemm(p, DataType::kBFloat16).has_value());
  EXPECT_DOUBLE_EQ(fastest_gemm(p, DataType::kBFloat16)->value(), 1e-5);
  EXPECT_FALSE(fastest_gemm(p, DataType::kFloat16).has_value());
  const ComputeModel model(hw::testing::catalog().gpu("h200-sxm", "test"), &p);
  EXPECT_DOUBLE_EQ(model.time(make_gemm(256, 256, 256, 1, DataType::kBFloat16)).value(), 1e-5);
  // Large GEMMs are above the floor: the 16384^3 row's own time.
  EXPECT_NEAR(model.time(make_gemm(16384, 16384, 16384, 1, DataType::kBFloat16)).value(), 0.02, 1e-12);
}

// A small call is mostly its fixed part, and grows from it with its work: run-22's rows (results/
// h200x1-2026-12-03e) of 256^3 (6.1 us) and of q05's attention product 512 x 320 x 64 at batch 8 and 16
// (7.0 and 8.3 us) price batch 14 at 6 + (8.3 - 6) x 14/16 = 8.0 us, what q05's step measured; the
// efficiency carried over from these rows alone put it at 7.65, from run-22's whole grid at 6.8.
TEST(Calibration, ASmallCallGrowsFromItsFixedPartWithItsWork) {
  nlohmann::json doc = minimal();
  doc["gemm"] = nlohmann::json::array(
      {{{"m", 256}, {"n", 256}, {"k", 256}, {"dtype", "bf16"}, {"seconds", 6.1e-6}},
       {{"m", 512}, {"n", 320}, {"k", 64}, {"batch", 8}, {"dtype", "bf16"}, {"seconds", 7.0e-6}},
       {{"m", 512}, {"n", 320}, {"k", 64}, {"batch", 16}, {"dtype", "bf16"}, {"seconds", 8.3e-6}}});
  const CalibrationProfile p = parse(doc);
  const ComputeModel model(hw::testing::catalog().gpu("h200-sxm", "test"), &p);
  EXPECT_NEAR(model.time(make_gemm(512, 320, 64, 14, DataType::kBFloat16)).value(), 8.0e-6, 0.1e-6);
  // The rows' own shapes take their own times.
  EXPECT_NEAR(model.time(make_gemm(512, 320, 64, 16, DataType::kBFloat16)).value(), 8.3e-6, 1e-12);
  EXPECT_NEAR(model.time(make_gemm(512, 320, 64, 8, DataType::kBFloat16)).value(), 7.0e-6, 1e-12);
}

}  // namespace
}  // namespace commscale::predict
