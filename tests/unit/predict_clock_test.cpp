// The clock under the power limit (predict/clock.hpp): the profile's curve read and checked, its
// interpolation, the GPU it applies to, and what it does to a prediction.
#include <gtest/gtest.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "input_error_matcher.hpp"
#include "predict/calibration.hpp"
#include "predict/clock.hpp"
#include "predict/prediction.hpp"
#include "predict_test_support.hpp"
#include "workload/presets.hpp"

namespace commscale::predict {
namespace {

using commscale::testing::throws_input_error;

nlohmann::json with_clock() {
  return nlohmann::json::parse(R"({
    "schema_version": 1, "kind": "commscale-calibration",
    "machine": {"gpu": "h200-sxm", "source": "test"},
    "clock": {"gemm": "bf16 2048 x 8192 x 2048", "source": "test probe",
              "points": [{"gemm_share": 1.0, "speedup": 1.0}, {"gemm_share": 0.2, "speedup": 1.3},
                         {"gemm_share": 0.6, "speedup": 1.1}]}
  })");
}

CalibrationProfile parse_clock(const nlohmann::json& doc) {
  return parse_calibration(doc, "cal.json", hw::testing::catalog());
}

TEST(Clock, CurveIsReadSortedAndWrittenBack) {
  const CalibrationProfile p = parse_clock(with_clock());
  ASSERT_EQ(p.clock.points.size(), 3u);
  EXPECT_DOUBLE_EQ(p.clock.points.front().gemm_share, 0.2);
  EXPECT_DOUBLE_EQ(p.clock.points.back().gemm_share, 1.0);
  EXPECT_EQ(p.clock.gemm, "bf16 2048 x 8192 x 2048");
  const CalibrationProfile again =
      parse_calibration(nlohmann::json::parse(calibration_to_json(p).dump()), "again", hw::testing::catalog());
  ASSERT_EQ(again.clock.points.size(), 3u);
  EXPECT_DOUBLE_EQ(again.clock.points[1].speedup, 1.1);
  EXPECT_EQ(again.clock.source, "test probe");
  // A profile without a curve is written back without one.
  nlohmann::json doc = with_clock();
  doc.erase("clock");
  EXPECT_FALSE(calibration_to_json(parse_clock(doc)).contains("clock"));
}

TEST(Clock, ErrorsNameTheFileAndTheKey) {
  nlohmann::json doc = with_clock();
  doc["clock"]["points"][0]["gemm_share"] = 1.5;
  EXPECT_TRUE(throws_input_error([&] { (void)parse_clock(doc); }, {"cal.json", "clock.points[0].gemm_share"}));
  doc = with_clock();
  doc["clock"]["points"][1]["speedup"] = 0;
  EXPECT_TRUE(throws_input_error([&] { (void)parse_clock(doc); }, {"clock.points[1].speedup"}));
  doc = with_clock();
  doc["clock"]["points"][2]["gemm_share"] = 1.0;
  EXPECT_TRUE(throws_input_error([&] { (void)parse_clock(doc); }, {"clock.points", "twice"}));
  doc = with_clock();
  doc["clock"]["points"] = nlohmann::json::array();
  EXPECT_TRUE(throws_input_error([&] { (void)parse_clock(doc); }, {"clock.points", "empty"}));
  doc = with_clock();
  doc["clock"]["watts"] = 700;
  EXPECT_TRUE(throws_input_error([&] { (void)parse_clock(doc); }, {"clock", "watts"}));
  doc = with_clock();
  doc["clock"].erase("source");
  EXPECT_TRUE(throws_input_error([&] { (void)parse_clock(doc); }, {"clock", "source"}));
}

TEST(Clock, SpeedupIsLinearBetweenSharesAndFlatBeyond) {
  const ClockModel m(parse_clock(with_clock()).clock);
  EXPECT_DOUBLE_EQ(m.speedup(1.0), 1.0);
  EXPECT_DOUBLE_EQ(m.speedup(0.6), 1.1);
  EXPECT_NEAR(m.speedup(0.8), 1.05, 1e-12);
  EXPECT_NEAR(m.speedup(0.4), 1.2, 1e-12);
  EXPECT_DOUBLE_EQ(m.speedup(0.05), 1.3);  // below the lowest share: its speedup
  EXPECT_DOUBLE_EQ(ClockModel().speedup(0.3), 1.0);
}

TEST(Clock, AppliesToTheGpuItWasMeasuredOn) {
  const hw::Catalog& catalog = hw::testing::catalog();
  const auto profile = std::make_shared<const CalibrationProfile>(parse_clock(with_clock()));
  const Target h200 = make_target(catalog, catalog.cluster("h200x2", "test"), 1, profile);
  EXPECT_FALSE(h200.clock.empty());
  const Target a100 = make_target(catalog, catalog.cluster("hgx-a100", "test"), 1, profile);
  EXPECT_TRUE(a100.clock.empty());
  bool said = false;
  for (const std::string& note : a100.notes) said = said || note.find("clock curve measured on h200-sxm") != std::string::npos;
  EXPECT_TRUE(said);
}

// A step whose GEMMs take part of its time runs them at the curve's speedup for that share: the
// prediction is faster than without the curve, by no more than the GEMMs' share of it.
TEST(Clock, PredictionRunsGemmsAtTheirShareSpeedup) {
  const hw::Catalog& catalog = hw::testing::catalog();
  const auto profile = std::make_shared<const CalibrationProfile>(parse_clock(with_clock()));
  nlohmann::json no_curve = with_clock();
  no_curve.erase("clock");
  const auto plain = std::make_shared<const CalibrationProfile>(parse_clock(no_curve));
  const Target clocked = make_target(catalog, catalog.cluster("h200x2", "test"), 1, profile);
  const Target rows = make_target(catalog, catalog.cluster("h200x2", "test"), 1, plain);
  TransformerConfig m = find_preset("gpt3-125m", "test");
  m.vocab = 0;
  const CheckedPlan plan(m, testing::plan(1, 1, 1, 4));
  const Prediction a = predict_step(prepare_for(plan, clocked, {}), clocked);
  const Prediction b = predict_step(prepare_for(plan, rows, {}), rows);
  EXPECT_EQ(b.clock_source, "");
  EXPECT_DOUBLE_EQ(b.clock_speedup, 1.0);
  EXPECT_EQ(a.clock_source, "test probe");
  ASSERT_GT(a.clock_gemm_share, 0.2);
  ASSERT_LT(a.clock_gemm_share, 1.0);
  EXPECT_GE(a.clock_iterations, 1);
  EXPECT_NEAR(a.clock_speedup, ClockModel(profile->clock).speedup(a.clock_gemm_share), 2e-3);
  const double faster = b.summary.step_time_s - a.summary.step_time_s;
  EXPECT_GT(faster, 0.0);
  // At most the GEMM time saved: share x step x (1 - 1 / speedup), measured on the faster step.
  const double gemm_s = a.clock_gemm_share * a.summary.step_time_s * a.clock_speedup;
  EXPECT_NEAR(faster, gemm_s * (1.0 - 1.0 / a.clock_speedup), 0.02 * b.summary.step_time_s);
}

}  // namespace
}  // namespace commscale::predict
