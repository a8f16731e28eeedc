// The rows `calibrate --measure host,interference` writes (bench/calibrate_rows.hpp): their arithmetic
// from the measured parts, and that the profile's reader takes them back unchanged. Pure, but in this
// binary because bench/ is part of the runtime library.
#include <gtest/gtest.h>

#include "bench/calibrate_rows.hpp"
#include "hw/catalog.hpp"
#include "hw/topology_dir.hpp"
#include "predict/calibration_sections.hpp"

namespace commscale {
namespace {

HostIssueTimes times() {
  HostIssueTimes t;
  t.gemm_us = 5.0;
  t.kernel_us = 3.0;
  t.collective_us = 12.0;
  t.p2p_us = 7.0;
  t.event_record_us = 1.5;
  t.stream_wait_us = 0.5;
  t.kernel_floor_us = 2.25;
  t.p2p_note = "p2p: half of a group";
  t.calls = 200;
  t.samples = 9;
  return t;
}

predict::CalibrationProfile load(const nlohmann::ordered_json& doc) {
  const hw::Catalog catalog = hw::Catalog::open(hw::find_topologies_dir());
  return predict::parse_calibration(nlohmann::json::parse(doc.dump()), "cal.json", catalog);
}

nlohmann::ordered_json profile() {
  return {{"schema_version", 1},
          {"kind", "commscale-calibration"},
          {"machine", {{"gpu", "h200-sxm"}, {"source", "tests/mpi/calibrate_rows_test.cpp"}}}};
}

TEST(CalibrateRows, HostRowAddsWhatTheExecutorDoesPerOpAndStep) {
  const HostCosts h = commscale_host_costs(times(), 4.0, "test");
  // gemm: call 5 + end event 1.5; kernel: 3 + 1.5; collective: 12 + 1.5 + wait 0.5; p2p: 7 + 1.5 + 0.5.
  for (const auto& phase : h.issue) {
    EXPECT_DOUBLE_EQ(to_us(phase[0]), 6.5);
    EXPECT_DOUBLE_EQ(to_us(phase[1]), 4.5);
    EXPECT_DOUBLE_EQ(to_us(phase[2]), 14.0);
    EXPECT_DOUBLE_EQ(to_us(phase[3]), 9.0);
  }
  // step: barrier 4 + 6 records x 1.5 + 8 waits x 0.5 = 17.
  EXPECT_DOUBLE_EQ(to_us(h.step), 17.0);
  EXPECT_EQ(h.framework, "commscale");
  EXPECT_EQ(h.sync, HostSync::kNone);

  nlohmann::ordered_json doc = profile();
  doc["host"] = nlohmann::ordered_json::array({predict::section_json(h)});
  doc["device"] = predict::section_json(device_figures(times(), "test"));
  const predict::CalibrationProfile p = load(doc);
  const HostCosts* back = predict::find_host_costs(p, "commscale");
  ASSERT_NE(back, nullptr);
  for (std::size_t phase = 0; phase < h.issue.size(); ++phase) {
    for (std::size_t c = 0; c < h.issue[phase].size(); ++c) {
      EXPECT_NEAR(back->issue[phase][c].value(), h.issue[phase][c].value(), 1e-15);  // through microseconds as text
    }
  }
  EXPECT_NEAR(back->step.value(), h.step.value(), 1e-15);
  EXPECT_NE(back->source.find("p2p: half of a group"), std::string::npos);
  ASSERT_TRUE(p.device.kernel_floor.has_value());
  EXPECT_DOUBLE_EQ(to_us(*p.device.kernel_floor), 2.25);
}

TEST(CalibrateRows, InterferenceRowsLoadAndBrokenOnesAreLeftOut) {
  InterferenceResult r;
  r.method = "test";
  // Streaming beside GEMMs: compute 10 -> 12 ms (1.2), probe 100 -> 80 GB/s (1.25).
  r.rows.push_back({8, true, true, 100.0, 80.0, 10.0, 12.0});
  // Holding SMs beside the memory loop: probe slowdown 1 by definition.
  r.rows.push_back({8, false, false, 0.0, 0.0, 10.0, 10.5});
  // Faster together than alone beyond noise (0.5): a broken run, left out.
  r.rows.push_back({16, false, true, 0.0, 0.0, 10.0, 5.0});
  std::vector<std::string> skipped;
  const std::vector<predict::InterferencePoint> points = interference_points(r, "test", &skipped);
  ASSERT_EQ(points.size(), 2u);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("16 SMs held beside gemm"), std::string::npos) << skipped[0];
  EXPECT_DOUBLE_EQ(points[0].compute_slowdown, 1.2);
  EXPECT_DOUBLE_EQ(points[0].probe_slowdown, 1.25);
  EXPECT_DOUBLE_EQ(points[0].probe_GBps, 100.0);
  EXPECT_DOUBLE_EQ(points[1].probe_slowdown, 1.0);
  EXPECT_DOUBLE_EQ(points[1].probe_GBps, 0.0);

  nlohmann::ordered_json doc = profile();
  doc["interference"] = nlohmann::ordered_json::array();
  for (const auto& p : points) doc["interference"].push_back(predict::section_json(p));
  const predict::CalibrationProfile p = load(doc);
  ASSERT_EQ(p.interference.size(), 2u);
  EXPECT_EQ(p.interference[1].beside, predict::Beside::kMemory);
  EXPECT_DOUBLE_EQ(p.interference[0].compute_slowdown, 1.2);
}

}  // namespace
}  // namespace commscale
