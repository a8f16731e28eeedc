// What-if overrides of clusters (hw/overrides.hpp), plan files (parallel/plan_file.hpp) and the Pareto
// front of the cost chart (report/charts.hpp).

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "hw_test_support.hpp"
#include "input_error_matcher.hpp"
#include "parallel/plan_file.hpp"
#include "report/charts.hpp"
#include "workload/model_spec.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

hw::ClusterSpec with(const std::string& cluster, const std::vector<std::string>& set) {
  return hw::testing::catalog().cluster(cluster, "--cluster", hw::parse_overrides(set, "--set"));
}

TEST(Overrides, FiguresKeepTheirFormAndTheLoaderChecksThem) {
  const hw::ClusterSpec c =
      with("hgx-a100", {"network.nic_rate_Gbps=400", "gpu.memory_GiB=48", "node.links[0].lanes=6"});
  EXPECT_DOUBLE_EQ(*c.network->nic_rate_Gbps.value, 400.0);
  EXPECT_EQ(c.network->nic_rate_Gbps.provenance.tag, hw::SourceTag::kUnverified);
  EXPECT_EQ(c.network->nic_rate_Gbps.provenance.source, "what-if: --set network.nic_rate_Gbps=400");
  EXPECT_DOUBLE_EQ(c.gpu.memory.value->gib(), 48.0);
  EXPECT_EQ(c.node.links[0].lanes, 6);
  // A figure the file lacks is added as one; a GPU swapped by name.
  EXPECT_DOUBLE_EQ(*with("rtx4090-8x-pcie", {"host_price_USD=5000"}).host_price_USD->value, 5000.0);
  EXPECT_EQ(with("hgx-a100", {"gpu=a100-sxm4-40gb"}).gpu.name, "a100-sxm4-40gb");
  // node.gpus is node.devices.gpu: 4 GPUs leave the links to gpu4..7 pointing nowhere, as in a file.
  EXPECT_TRUE(
      throws_input_error([] { (void)with("hgx-a100", {"node.gpus=4"}); }, {"--set node.gpus=4", "gpu4"}));
  EXPECT_EQ(with("rtx3090-6x-pcie", {"transports.pcie_p2p=true"}).transports.pcie_p2p, true);
  // Bad values get the loader's message with the --set named.
  EXPECT_TRUE(throws_input_error([] { (void)with("hgx-a100", {"network.nic_rate_Gbps=fast"}); },
                                 {"--set network.nic_rate_Gbps=fast", "hgx-a100.json: network.nic_rate_Gbps.value"}));
  EXPECT_TRUE(throws_input_error([] { (void)with("hgx-a100", {"network.speed=4"}); },
                                 {"--set network.speed=4", "network.speed", "is not a known key"}));
  EXPECT_TRUE(throws_input_error([] { (void)with("hgx-a100", {"node.links[99].lanes=2"}); },
                                 {"--set node.links[99].lanes=2", "node.links has 7 entries"}));
  EXPECT_TRUE(throws_input_error([] { (void)hw::parse_override("nic=", "--set"); }, {"--set", "KEY=VALUE"}));
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(PlanFile, RoundTripAndStrictKeys) {
  const TransformerConfig m = find_preset("llama2-7b", "test");
  ParallelPlan p;
  p.tp = 2;
  p.dp = 4;
  p.sequence_parallel = true;
  p.zero_stage = 1;
  p.global_batch = 64;
  const std::string path = write(
      "plan.json", nlohmann::json(plan_file_json(m, p, 8, "hgx-a100", 1, {"network.nic_rate_Gbps=400"}, "n")).dump());
  const PlanFile f = load_plan_file(path);
  ASSERT_TRUE(f.model.document);
  EXPECT_EQ(model_from_json(*f.model.document, "x").ffn, 11008);
  EXPECT_EQ(f.plan.tp, 2);
  EXPECT_EQ(f.plan.dp, 4);
  EXPECT_EQ(f.plan.world, 8);
  EXPECT_EQ(f.plan.sp, true);
  EXPECT_EQ(f.plan.zero, 1);
  EXPECT_EQ(f.plan.recompute, "none");
  EXPECT_DOUBLE_EQ(*f.plan.bucket_mib, 25.0);
  EXPECT_EQ(f.cluster, "hgx-a100");
  EXPECT_EQ(f.set, std::vector<std::string>{"network.nic_rate_Gbps=400"});
  // Paths in the file are relative to it.
  const std::string rel = write("rel.json", R"({"schema_version": 1, "kind": "commscale-plan",
      "model": {"hf_config": "hf/gpt2.json"}, "cluster": "clusters/mine.json"})");
  const PlanFile r = load_plan_file(rel);
  EXPECT_EQ(r.model.hf_config, ::testing::TempDir() + "hf/gpt2.json");
  EXPECT_EQ(r.cluster, ::testing::TempDir() + "clusters/mine.json");
  const std::string bad = write("bad.json", R"({"schema_version": 1, "kind": "commscale-plan", "model": "tiny",
      "plan": {"tp": 2, "pipeline": 2}})");
  EXPECT_TRUE(throws_input_error([&] { (void)load_plan_file(bad); }, {"bad.json: plan.pipeline", "unknown key"}));
  EXPECT_EQ(plan_file_key("--micro-batch"), "micro_batch");
}

TEST(CostChart, ParetoFrontByHand) {
  // b has more throughput for less cost than a (a is dominated); c is cheaper than b but slower; d
  // equals c on both (neither dominates the other); e is slower and dearer than b.
  const std::vector<ScatterPoint> points = {
      {"a", 100, 2.0}, {"b", 200, 1.0}, {"c", 150, 0.5}, {"d", 150, 0.5}, {"e", 120, 1.5}};
  EXPECT_EQ(pareto_front(points), (std::vector<bool>{false, true, true, true, false}));
  const std::string svg = scatter_chart_svg({"cost", "tokens/s", "USD per Mtoken", points});
  EXPECT_NE(svg.find("b: 200 tokens/s, 1 USD per Mtoken (on the Pareto front)"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
}

}  // namespace
}  // namespace commscale
