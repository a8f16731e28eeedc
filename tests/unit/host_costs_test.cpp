// program/host_costs.hpp's attention class (one fused attention call), and how a profile's host row
// gives its figure (predict/calibration_sections.cpp): optional per phase, the GEMM figure without it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "input_error_matcher.hpp"
#include "predict/calibration.hpp"
#include "predict_test_support.hpp"
#include "program/host_costs.hpp"
#include "workload/layer_ops.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using commscale::testing::throws_input_error;

constexpr auto kFwd = static_cast<std::size_t>(HostPhase::kForward);
constexpr auto kBwd = static_cast<std::size_t>(HostPhase::kBackward);
constexpr auto kGemmColumn = static_cast<std::size_t>(HostOpClass::kGemm);
constexpr auto kAttentionColumn = static_cast<std::size_t>(HostOpClass::kAttention);

Gemm flash(bool continued) {
  Gemm g = make_gemm(128, 128, 64, 8, DataType::kBFloat16);
  g.flash = true;
  g.flash_continued = continued;
  return g;
}

// GEMM calls at 10 us in every phase; an attention figure of 30 us where `given`.
HostCosts row(AttentionIssue issue, bool given) {
  HostCosts h;
  h.framework = "test";
  h.attention = issue;
  for (auto& phase : h.issue) {
    phase[kGemmColumn] = microseconds(10);
    phase[kAttentionColumn] = microseconds(30);
  }
  h.attention_given.fill(given);
  return h;
}

double cost_us(const HostCosts& h, const Gemm& g, Phase phase = Phase::kForward) {
  Op op;
  op.payload = g;
  op.phase = phase;
  return to_us(issue_cost(h, op));
}

TEST(HostAttention, TheClassOfAFlashKernelsProducts) {
  EXPECT_EQ(host_op_class(OpPayload{flash(false)}), HostOpClass::kAttention);
  EXPECT_EQ(host_op_class(OpPayload{flash(true)}), HostOpClass::kGemm);
  EXPECT_EQ(host_op_class(OpPayload{make_gemm(8, 8, 8, 1, DataType::kBFloat16)}), HostOpClass::kGemm);
  EXPECT_EQ(host_op_class(OpPayload{MemoryKernel{}}), HostOpClass::kKernel);
  EXPECT_EQ(name(HostOpClass::kAttention), "attention");
  EXPECT_EQ(parse_host_op_class("attention", "x"), HostOpClass::kAttention);
  EXPECT_TRUE(throws_input_error([] { (void)parse_host_op_class("sdpa", "issue_us.sdpa"); },
                                 {"issue_us.sdpa", "\"sdpa\"", "attention"}));
}

TEST(HostAttention, PerKernelTheFirstProductCostsTheCallAndTheOthersNothing) {
  const HostCosts h = row(AttentionIssue::kPerKernel, true);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false)), 30.0);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(true)), 0.0);
  EXPECT_DOUBLE_EQ(cost_us(h, make_gemm(8, 8, 8, 1, DataType::kBFloat16)), 10.0);
  // Recompute is forward; the backward phase has its own figures.
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false), Phase::kRecompute), 30.0);
}

// The backward attention kernel's first product (the scores recomputed) is in the recompute phase, but
// the framework issues it as the backward call: the backward's figure, as the layer's program has it.
TEST(HostAttention, TheBackwardKernelsCallIsTheBackwards) {
  HostCosts h = row(AttentionIssue::kPerKernel, true);
  h.issue[kBwd][kAttentionColumn] = microseconds(70);
  Gemm first = flash(false);
  first.flash_backward = true;
  EXPECT_EQ(host_phase(Phase::kRecompute, OpPayload{first}), HostPhase::kBackward);
  EXPECT_EQ(host_phase(Phase::kRecompute, OpPayload{flash(false)}), HostPhase::kForward);
  EXPECT_DOUBLE_EQ(cost_us(h, first, Phase::kRecompute), 70.0);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false), Phase::kRecompute), 30.0);  // a forward re-run
  // In an eager layer's backward with flash attention: one call, the recomputed scores, at the backward's.
  const TransformerConfig m = find_preset("tiny", "");
  LayerSharding sharding;
  sharding.flash_attention = true;
  sharding.kernels = KernelSet::kEager;
  int calls = 0;
  for (const WorkloadOp& op : layer_backward_ops(m, sharding)) {
    const auto* g = std::get_if<Gemm>(&op.payload);
    if (g == nullptr || !g->flash || g->flash_continued) continue;
    ++calls;
    EXPECT_EQ(op.phase, Phase::kRecompute);
    EXPECT_EQ(host_phase(op.phase, g), HostPhase::kBackward);
  }
  EXPECT_EQ(calls, 1);
}

TEST(HostAttention, WithoutAnAttentionFigureTheCallCostsAGemmCall) {
  HostCosts h = row(AttentionIssue::kPerKernel, false);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false)), 10.0);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(true)), 0.0);
  // Per phase: a figure for backward only.
  h.attention_given[kBwd] = true;
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false), Phase::kForward), 10.0);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false), Phase::kBackward), 30.0);
}

TEST(HostAttention, PerProductEveryProductIsAGemmCall) {
  // commscale's executor: the figure (were there one) is never charged.
  for (const bool given : {false, true}) {
    const HostCosts h = row(AttentionIssue::kPerProduct, given);
    EXPECT_DOUBLE_EQ(cost_us(h, flash(false)), 10.0);
    EXPECT_DOUBLE_EQ(cost_us(h, flash(true)), 10.0);
  }
}

// A profile with one host row whose issue_us is `issue` (and attention_issue, where given).
nlohmann::json profile(const nlohmann::json& issue, const char* attention_issue = nullptr) {
  nlohmann::json host = {{"framework", "pytorch-eager"}, {"source", "test"}, {"issue_us", issue}};
  if (attention_issue != nullptr) host["attention_issue"] = attention_issue;
  return {{"schema_version", 1},
          {"kind", "commscale-calibration"},
          {"machine", {{"gpu", "h200-sxm"}, {"source", "test"}}},
          {"host", nlohmann::json::array({host})}};
}

predict::CalibrationProfile parse(const nlohmann::json& doc) {
  return predict::parse_calibration(doc, "cal.json", hw::testing::catalog());
}

// The profile written (calibration_to_json) and read back: the same costs, to the rounding of writing
// seconds as microseconds, and the same phases with an attention figure.
void expect_round_trip(const predict::CalibrationProfile& p) {
  const predict::CalibrationProfile again = parse(nlohmann::json::parse(predict::calibration_to_json(p).dump()));
  ASSERT_EQ(again.host.size(), p.host.size());
  for (std::size_t phase = 0; phase < kHostPhaseCount; ++phase) {
    for (std::size_t c = 0; c < kHostOpClassCount; ++c) {
      EXPECT_NEAR(again.host[0].issue[phase][c].value(), p.host[0].issue[phase][c].value(), 1e-15);
    }
  }
  EXPECT_EQ(again.host[0].attention_given, p.host[0].attention_given);
}

const nlohmann::json kClasses = {{"gemm", 100}, {"kernel", 5}, {"collective", 14}, {"p2p", 14}};

TEST(HostAttention, ARowWithoutTheKeyRoundTripsWithoutIt) {
  const predict::CalibrationProfile p = parse(profile(kClasses));
  ASSERT_EQ(p.host.size(), 1u);
  const HostCosts& h = p.host[0];
  EXPECT_FALSE(h.attention_given[kFwd] || h.attention_given[kBwd]);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false)), 100.0);
  const nlohmann::ordered_json written = predict::calibration_to_json(p);
  const auto& issue = written["host"][0]["issue_us"];
  EXPECT_FALSE(issue.contains("fwd.attention"));
  EXPECT_FALSE(issue.contains("bwd.attention"));
  EXPECT_EQ(issue.size(), 12u);  // 3 phases x gemm, kernel, collective, p2p: as before the class
  expect_round_trip(p);
}

TEST(HostAttention, ARowWithTheKeyRoundTripsWithIt) {
  nlohmann::json issue = kClasses;
  issue["attention"] = 60;        // every phase ...
  issue["bwd.attention"] = 45.5;  // ... but backward, whatever the order of the keys
  const predict::CalibrationProfile p = parse(profile(issue));
  const HostCosts& h = p.host[0];
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false), Phase::kForward), 60.0);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false), Phase::kBackward), 45.5);
  EXPECT_DOUBLE_EQ(cost_us(h, flash(false), Phase::kStep), 60.0);
  const nlohmann::ordered_json written = predict::calibration_to_json(p);
  EXPECT_NEAR(written["host"][0]["issue_us"]["fwd.attention"].get<double>(), 60.0, 1e-9);
  EXPECT_NEAR(written["host"][0]["issue_us"]["bwd.attention"].get<double>(), 45.5, 1e-9);
  EXPECT_EQ(written["host"][0]["issue_us"].size(), 15u);
  expect_round_trip(p);
  // One phase only: the others keep the GEMM figure, and are written without the key.
  nlohmann::json one = kClasses;
  one["fwd.attention"] = 70;
  const predict::CalibrationProfile q = parse(profile(one));
  EXPECT_DOUBLE_EQ(cost_us(q.host[0], flash(false), Phase::kForward), 70.0);
  EXPECT_DOUBLE_EQ(cost_us(q.host[0], flash(false), Phase::kBackward), 100.0);
  const nlohmann::ordered_json written_one = predict::calibration_to_json(q);
  EXPECT_TRUE(written_one["host"][0]["issue_us"].contains("fwd.attention"));
  EXPECT_FALSE(written_one["host"][0]["issue_us"].contains("bwd.attention"));
  expect_round_trip(q);
}

TEST(HostAttention, ABadFigureIsRefusedNamingTheKey) {
  nlohmann::json issue = kClasses;
  issue["attention"] = "fast";
  EXPECT_TRUE(throws_input_error([&] { (void)parse(profile(issue)); }, {"cal.json", "host[0].issue_us.attention"}));
  issue["attention"] = -1;
  EXPECT_TRUE(throws_input_error([&] { (void)parse(profile(issue)); }, {"host[0].issue_us.attention", "is -1"}));
  issue.erase("attention");
  issue["fwd.attention"] = nullptr;
  EXPECT_TRUE(throws_input_error([&] { (void)parse(profile(issue)); }, {"host[0].issue_us.fwd.attention"}));
  // A figure that would never be charged: the framework issues each product as a GEMM call.
  issue["fwd.attention"] = 50;
  EXPECT_TRUE(throws_input_error([&] { (void)parse(profile(issue, "product")); },
                                 {"host[0].issue_us", "attention_issue is product"}));
  // Attention is optional; the other classes are not.
  nlohmann::json no_gemm = kClasses;
  no_gemm.erase("gemm");
  no_gemm["attention"] = 50;
  EXPECT_TRUE(throws_input_error([&] { (void)parse(profile(no_gemm)); }, {"host[0].issue_us", "\"gemm\""}));
}

}  // namespace
}  // namespace commscale
