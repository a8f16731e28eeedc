// Each result type `commscale report` reads: from_json(to_json(x)) gives x back (field by field, for
// what to_json writes), and a missing or wrong-typed key is the InputError the report has always
// given, naming the file and the key.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>
#include "input_error_matcher.hpp"

#include "core/run_context.hpp"
#include "core/stats.hpp"
#include "parallel/plan.hpp"
#include "predict/search.hpp"
#include "program/step_summary.hpp"
#include "report/bench_reporters.hpp"
#include "report/compare_report.hpp"
#include "report/doctor_reporters.hpp"
#include "report/p2p_reporters.hpp"
#include "report/search_report.hpp"

namespace commscale {
namespace {

// The root of a file named f.json, as the report names places in it.
JsonAt at_root(const nlohmann::json& j) { return JsonAt(j, "f.json: "); }

JobSummary sample_summary() {
  JobSummary s;
  s.world_size = 4;
  s.step_time_s = 1.25;
  s.compute_s = 0.75;
  s.exposed_comm_s = 0.3;
  s.bubble_s = 0.2;
  s.groups["dp"] = {Seconds(0.5), Seconds(0.25)};
  s.groups["tp"] = {Seconds(0.125), Seconds(0.05)};
  s.tflops_per_gpu = 123.5;
  s.hardware_tflops_per_gpu = 150.0;
  s.mfu = 0.4;
  s.tokens_per_s = 4096.0;
  s.per_op_overhead = 0.02;
  return s;  // hfu and step_only_time_s left empty: written as null, read back as none
}

void expect_same(const JobSummary& a, const JobSummary& b) {
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.compute_s, b.compute_s);
  EXPECT_EQ(a.exposed_comm_s, b.exposed_comm_s);
  EXPECT_EQ(a.bubble_s, b.bubble_s);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (const auto& [name, t] : a.groups) {
    EXPECT_EQ(t.busy.value(), b.groups.at(name).busy.value()) << name;
    EXPECT_EQ(t.exposed.value(), b.groups.at(name).exposed.value()) << name;
  }
  EXPECT_EQ(a.tflops_per_gpu, b.tflops_per_gpu);
  EXPECT_EQ(a.hardware_tflops_per_gpu, b.hardware_tflops_per_gpu);
  EXPECT_EQ(a.mfu, b.mfu);
  EXPECT_EQ(a.hfu, b.hfu);
  EXPECT_EQ(a.tokens_per_s, b.tokens_per_s);
  EXPECT_EQ(a.step_only_time_s, b.step_only_time_s);
  EXPECT_EQ(a.per_op_overhead, b.per_op_overhead);
}

TEST(ResultFromJson, JobSummaryRoundTrips) {
  const JobSummary s = sample_summary();
  const nlohmann::json j = s;
  JobSummary back;
  from_json(at_root(j), back);
  expect_same(s, back);
}

TEST(ResultFromJson, JobSummaryNamesAMissingOrWrongTypedFigure) {
  nlohmann::json doc = {{"summary", sample_summary()}};
  doc["summary"].erase("compute_s");
  JobSummary s;
  EXPECT_TRUE(testing::throws_input_error([&] { from_json(at_root(doc).at("summary"), s); },
                                          {"f.json: summary.compute_s", "is missing"}));
  doc["summary"]["compute_s"] = "fast";
  EXPECT_TRUE(testing::throws_input_error([&] { from_json(at_root(doc).at("summary"), s); },
                                          {"f.json: summary.compute_s", "is a JSON string", "a number"}));
  // What the report has always tolerated: no tokens_per_s (0), a null mfu (none), no groups.
  doc["summary"]["compute_s"] = 0.5;
  doc["summary"].erase("tokens_per_s");
  doc["summary"]["mfu"] = nullptr;
  doc["summary"].erase("groups");
  from_json(at_root(doc).at("summary"), s);
  EXPECT_EQ(s.tokens_per_s, 0.0);
  EXPECT_FALSE(s.mfu);
  EXPECT_TRUE(s.groups.empty());
}

ParallelPlan sample_plan() {
  ParallelPlan p;
  p.dp = 2;
  p.tp = 4;
  p.pp = 2;
  p.sequence_parallel = true;
  p.zero_stage = 1;
  p.recompute = Recompute::kSelective;
  p.optimizer = Optimizer::kSgd;
  p.flash_attention = true;
  p.kernels = KernelSet::kEager;
  p.micro_batch = 2;
  p.global_batch = 64;
  p.schedule = ScheduleKind::kInterleaved;
  p.chunks = 2;
  p.order = "dp-tp-pp";
  p.bucket_bytes = Bytes(1 << 20);
  return p;
}

TEST(ResultFromJson, PlanRoundTrips) {
  const nlohmann::json j = plan_to_json(sample_plan());
  EXPECT_EQ(plan_to_json(plan_from_json(at_root(j))), j);  // every field plan_to_json writes
  // Every key is optional: an empty object is the default plan.
  EXPECT_EQ(plan_to_json(plan_from_json(at_root(nlohmann::json::object()))), plan_to_json(ParallelPlan{}));
}

TEST(ResultFromJson, PlanNamesAWrongValue) {
  const nlohmann::json doc = {{"plan", {{"dp", "2"}}}};
  EXPECT_TRUE(testing::throws_input_error([&] { (void)plan_from_json(at_root(doc).at("plan")); },
                                          {"f.json: plan.dp", "is a JSON string"}));
  const nlohmann::json zero = {{"plan", {{"tp", 0}}}};
  EXPECT_TRUE(testing::throws_input_error([&] { (void)plan_from_json(at_root(zero).at("plan")); },
                                          {"f.json: plan.tp", "1 or more"}));
  const nlohmann::json schedule = {{"plan", {{"schedule", "zigzag"}}}};
  EXPECT_TRUE(testing::throws_input_error([&] { (void)plan_from_json(at_root(schedule).at("plan")); },
                                          {"f.json: plan.schedule", "zigzag"}));
}

TEST(ResultFromJson, SearchRoundTrips) {
  predict::PlanEstimate e;
  e.plan = sample_plan();
  e.fits = true;
  e.memory = Bytes(123456789);
  e.estimated = true;
  e.step_time = Seconds(2.0);
  e.compute = Seconds(1.5);
  e.exposed_comm = Seconds(0.25);
  e.bubble = Seconds(0.25);
  e.groups["tp"] = {Seconds(0.5), Seconds(0.25)};
  e.tokens_per_s = 1000.0;
  e.mfu = 0.5;
  e.hfu = 0.6;
  predict::SearchResult r;
  r.cluster = "hgx-h100";
  r.gpus = {8, 16};
  r.candidates = 90;
  r.fitting = 30;
  r.seconds = 1.5;
  r.ranked = {{e, "", 2.5, std::nullopt}, {e, "communication-bound", std::nullopt, 0.125}};
  predict::SearchOptions options;
  options.rank_by = predict::RankBy::kCost;
  const nlohmann::json j = predict::search_to_json(r, options);
  predict::SearchResult back;
  predict::SearchOptions back_options;
  predict::search_from_json(at_root(j), back, back_options);
  EXPECT_EQ(back.cluster, r.cluster);
  EXPECT_EQ(back.gpus, r.gpus);
  EXPECT_EQ(back.candidates, r.candidates);
  EXPECT_EQ(back.fitting, r.fitting);
  EXPECT_EQ(back.seconds, r.seconds);
  EXPECT_EQ(back_options.rank_by, predict::RankBy::kCost);
  ASSERT_EQ(back.ranked.size(), 2u);
  EXPECT_EQ(back.ranked[1].reason, "communication-bound");
  EXPECT_EQ(back.ranked[0].usd_per_million_tokens, 2.5);
  EXPECT_EQ(back.ranked[1].joules_per_token, 0.125);
  // Each estimate gives back what plan_estimate_json writes.
  EXPECT_EQ(predict::plan_estimate_json(back.ranked[1].estimate), predict::plan_estimate_json(e));
  // One that was not estimated (it does not fit) comes back without figures.
  predict::PlanEstimate unfit;
  unfit.plan = sample_plan();
  unfit.fit_message = "needs 90 GiB of 80";
  const predict::PlanEstimate unfit_back = predict::plan_estimate_from_json(at_root(predict::plan_estimate_json(unfit)));
  EXPECT_FALSE(unfit_back.estimated);
  EXPECT_EQ(unfit_back.fit_message, unfit.fit_message);
}

TEST(ResultFromJson, SearchNamesAMissingKey) {
  nlohmann::json j = predict::search_to_json({}, {});
  j.erase("candidates");
  predict::SearchResult r;
  predict::SearchOptions o;
  EXPECT_TRUE(testing::throws_input_error([&] { predict::search_from_json(at_root(j), r, o); },
                                          {"f.json: candidates", "is missing"}));
}

TEST(ResultFromJson, RunContextRoundTrips) {
  RunContext c;
  c.commscale_version = "0.1";
  c.git_sha = "abc";
  c.command_line = "commscale bench";
  c.start_time_utc = "2026-12-02T00:00:00Z";
  c.backend = "gpu";
  c.comm_library = "NCCL 2.28.3";
  c.cuda_runtime = "13.0";
  c.hosts = {"node-a", "node-b"};
  RankPlacement gpu_rank{0, 0, 100, "node-a", 1, "H200", "0000:4e:00.0", "GPU-1", 139.8, 90};
  RankPlacement cpu_rank;
  cpu_rank.rank = 1;
  cpu_rank.host = "node-b";
  c.ranks = {gpu_rank, cpu_rank};
  c.environment = {{"NCCL_P2P_DISABLE", "1"}};
  c.mpi_transport = {{"pml", "ucx"}};
  const nlohmann::json j = c;
  RunContext back;
  from_json(at_root(j), back);
  EXPECT_EQ(nlohmann::json(back), j);  // every field to_json writes
  // A context the report reads today tolerates: an environment value that is not a string is none.
  const nlohmann::json odd = {{"environment", {{"NCCL_P2P_DISABLE", 1}}}};
  from_json(at_root(odd), back);
  EXPECT_TRUE(back.environment.empty());
  const nlohmann::json bad = {{"hosts", "node-a"}};
  EXPECT_TRUE(testing::throws_input_error([&] { from_json(at_root(bad), back); }, {"f.json: hosts", "an array"}));
}

TEST(ResultFromJson, BenchRowRoundTrips) {
  BenchRow row;
  row.collective = Collective::kReduce;
  row.type = DataType::kBFloat16;
  row.op = ReduceOp::kMax;
  row.root = 1;
  row.size = Bytes(4096);
  row.count = 2048;
  row.out_of_place.time_us = 12.5;
  row.out_of_place.samples_us = {12.0, 13.0};
  row.out_of_place.sample_stats = summarize(row.out_of_place.samples_us);
  row.out_of_place.algbw = GBps(0.3);
  row.out_of_place.busbw = GBps(0.3);
  row.out_of_place.checked = true;
  row.out_of_place.wrong = 3;
  row.in_place.time_us = 11.0;
  row.in_place.algbw = GBps(0.35);
  row.in_place.busbw = GBps(0.35);  // not checked: wrong is null
  const nlohmann::json j = row;
  BenchRow back;
  from_json(at_root(j), back);
  EXPECT_EQ(nlohmann::json(back), j);  // every field to_json writes, the samples' summary included
  EXPECT_EQ(back.out_of_place.wrong, 3u);
  EXPECT_FALSE(back.in_place.checked);
}

TEST(ResultFromJson, BenchRowNamesAMissingOrWrongTypedKey) {
  nlohmann::json j = BenchRow{};
  j["type"] = 3;
  BenchRow row;
  EXPECT_TRUE(testing::throws_input_error([&] { from_json(at_root(j), row); },
                                          {"f.json: type", "is a JSON number", "a string"}));
  j = BenchRow{};
  j["out_of_place"].erase("busbw_GBps");
  EXPECT_TRUE(testing::throws_input_error([&] { from_json(at_root(j), row); },
                                          {"f.json: out_of_place.busbw_GBps", "is missing"}));
}

TEST(ResultFromJson, DoctorChecksSuspectsAndSetupRoundTrip) {
  predict::DoctorCheck c;
  c.phase = "pairs";
  c.check = "pair";
  c.subject = "node-a -> node-b";
  c.place.host = "node-a";
  c.place.rank = 3;
  c.place.link = "node-a -> node-b";
  c.measured = 40.0;
  c.expected = 50.0;
  c.unit = "GB/s";
  c.basis = "catalog";
  c.threshold = 0.85;
  c.status = predict::CheckStatus::kFail;
  c.detail = "slow";
  predict::DoctorCheck check_back;
  predict::from_json(at_root(nlohmann::json(c)), check_back);
  EXPECT_EQ(check_back, c);
  const predict::Suspect s{"link", "node-a -> node-b", c.place, "40 GB/s against 50 expected"};
  predict::Suspect suspect_back;
  predict::from_json(at_root(nlohmann::json(s)), suspect_back);
  EXPECT_EQ(suspect_back, s);
  DoctorSetup setup;
  setup.backend = "cpu";
  setup.min_ratio = 0.8;
  setup.hosts = {"node-a", "node-b"};
  setup.ranks = 4;
  setup.size = Bytes(1 << 20);
  setup.pair_size = Bytes(1 << 16);
  setup.pair_units = "nodes";
  setup.pair_unit_count = 2;
  setup.rounds = 1;
  setup.expectation_source = "the catalog";
  setup.expectation_notes = {"a note"};
  setup.phases = {"gpu", "pairs"};
  DoctorSetup setup_back;
  from_json(at_root(nlohmann::json(setup)), setup_back);
  EXPECT_EQ(nlohmann::json(setup_back), nlohmann::json(setup));
}

TEST(ResultFromJson, DoctorCheckNamesAMissingStatus) {
  predict::DoctorCheck c;
  c.phase = "gpu";
  c.check = "gemm";
  c.subject = "GPU 0";
  nlohmann::json j = {{"checks", {c}}};
  j["checks"][0].erase("status");
  predict::DoctorCheck back;
  EXPECT_TRUE(testing::throws_input_error([&] { predict::from_json(at_root(j).array("checks").at(0), back); },
                                          {"f.json: checks[0].status", "is missing"}));
}

TEST(ResultFromJson, CompareRoundTrips) {
  predict::CompareEntry fits;
  fits.label = "hgx-a100:1";
  fits.cluster = "hgx-a100";
  fits.gpu = "a100";
  fits.gpus = 8;
  fits.candidates = 40;
  fits.fitting = 12;
  fits.cost.priced = true;
  fits.cost.price_usd = 1e5;
  fits.cost.usd_per_hour = 5.0;
  fits.usd_per_million_tokens = 1.5;
  predict::PlanEstimate best;
  best.plan = sample_plan();
  best.estimated = true;
  best.step_time = Seconds(0.5);
  fits.best = best;
  predict::Prediction p;
  p.plan = sample_plan();
  p.summary = sample_summary();
  fits.prediction = p;
  predict::CompareEntry none;
  none.label = "rtx4090";
  none.gpus = 4;
  none.closest = "dp 4: 30 GiB over";
  predict::CompareResult r;
  r.model = "gpt3-125m";
  r.entries = {fits, none};
  r.scaling_cluster = "hgx-a100";
  r.scaling = {{4, std::nullopt, 0.0, std::nullopt}, {8, best, 1.0, 2.0}};
  predict::CompareInputs in;
  in.search.global_batch = 64;
  const nlohmann::json j = predict::compare_to_json(r, in);
  predict::CompareResult back;
  predict::CompareInputs back_in;
  predict::compare_from_json(at_root(j), back, back_in);
  EXPECT_EQ(back.model, r.model);
  EXPECT_EQ(back_in.search.global_batch, 64);
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(predict::compare_to_json(back, back_in)["clusters"], j["clusters"]);  // every field of each cluster
  ASSERT_TRUE(back.entries[0].prediction);
  expect_same(back.entries[0].prediction->summary, p.summary);
  EXPECT_FALSE(back.entries[1].prediction);
  EXPECT_EQ(back.scaling_cluster, r.scaling_cluster);
  ASSERT_EQ(back.scaling.size(), 2u);
  EXPECT_FALSE(back.scaling[0].best);
  EXPECT_EQ(back.scaling[1].efficiency, 1.0);
  EXPECT_EQ(plan_to_json(back.scaling[1].best->plan), plan_to_json(best.plan));
}

TEST(ResultFromJson, CompareNamesAMissingKey) {
  predict::CompareResult r;
  r.entries.emplace_back().gpus = 8;
  nlohmann::json j = predict::compare_to_json(r, {});
  j["clusters"][0].erase("gpus");
  predict::CompareResult back;
  predict::CompareInputs in;
  EXPECT_TRUE(testing::throws_input_error([&] { predict::compare_from_json(at_root(j), back, in); },
                                          {"f.json: clusters[0].gpus", "is missing"}));
}

BandwidthResult measured_bandwidth(double bw_GBps, std::optional<double> line_rate_GBps) {
  BandwidthResult r;
  r.measured = true;
  r.bytes_per_copy = Bytes(1 << 26);
  r.bw = GBps(bw_GBps);
  if (line_rate_GBps) r.line_rate = GBps(*line_rate_GBps);
  r.wrong_bytes = 0;
  return r;
}

TEST(ResultFromJson, P2pRoundTrips) {
  P2pReport r;
  r.gpus = {{0, "H200", "0000:19:00.0"}, {1, "H200", "0000:3b:00.0"}};
  PairResult pair;
  pair.src = 0;
  pair.dst = 1;
  pair.link = "NV18";
  pair.ce_uni = measured_bandwidth(390.5, 450.0);
  pair.latency.measured = true;
  pair.latency.stats.median = 812.0;
  PairResult staged;
  staged.src = 1;
  staged.dst = 0;
  staged.path = PeerPath::kStaged;
  staged.why_staged = "NCCL_P2P_DISABLE=1";
  staged.link = "staged over PCIe gen5 x16";
  staged.ce_uni = measured_bandwidth(40.0, std::nullopt);
  r.pairs = {pair, staged};
  HostResult host;
  host.gpu = 0;
  host.link = "PCIe gen5 x16";
  host.h2d = measured_bandwidth(50.0, 64.0);
  r.hosts = {host};
  P2pReport back;
  p2p_from_json(at_root(p2p_json(r)), back);
  ASSERT_EQ(back.gpus.size(), 2u);
  EXPECT_EQ(back.gpus[1].pci_bus_id, "0000:3b:00.0");
  ASSERT_EQ(back.pairs.size(), 2u);
  EXPECT_EQ(back.pairs[0].ce_uni.bw.value(), 390.5);
  EXPECT_EQ(back.pairs[0].ce_uni.fraction_of_line_rate(), pair.ce_uni.fraction_of_line_rate());
  EXPECT_FALSE(back.pairs[0].sm_uni.measured);  // written as null
  EXPECT_EQ(back.pairs[0].latency.stats.median, 812.0);
  EXPECT_EQ(back.pairs[1].path, PeerPath::kStaged);
  EXPECT_EQ(back.pairs[1].why_staged, staged.why_staged);
  EXPECT_FALSE(back.pairs[1].ce_uni.line_rate);
  ASSERT_EQ(back.hosts.size(), 1u);
  EXPECT_EQ(back.hosts[0].link, host.link);
  EXPECT_EQ(back.hosts[0].h2d.line_rate->value(), 64.0);
  EXPECT_FALSE(back.hosts[0].d2h.measured);
}

TEST(ResultFromJson, P2pNamesAMissingBandwidth) {
  P2pReport r;
  r.gpus = {{0, "", ""}, {1, "", ""}};
  PairResult pair;
  pair.dst = 1;
  pair.ce_uni = measured_bandwidth(1.0, std::nullopt);
  r.pairs = {pair};
  nlohmann::json j = p2p_json(r);
  j["pairs"][0]["ce_unidirectional"].erase("bw_GBps");
  P2pReport back;
  EXPECT_TRUE(testing::throws_input_error([&] { p2p_from_json(at_root(j), back); },
                                          {"f.json: pairs[0].ce_unidirectional.bw_GBps", "is missing"}));
}

}  // namespace
}  // namespace commscale
