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

TEST(Overrides, FewerDevicesDropTheirLinks) {
  // hgx-a100 node.links: [0] gpu* - nvswitch0 (NVLink), [1..4] two GPUs and two NICs each under
  // pcie_switch0..3, [5] the switches to the cpus (zip), [6] cpu0 - cpu1. Four GPUs: gpu4..7 leave [3]
  // and [4], which keep their NICs; gpu* now names four; nothing else changes.
  const hw::ClusterSpec four = with("hgx-a100", {"node.gpus=4"});
  EXPECT_EQ(four.gpus_per_node(), 4);
  EXPECT_EQ(four.node.count(hw::DeviceKind::kNic), 8);
  // 4 NVLink bundles, 2 x 4 + 2 x 2 PCIe links under the switches, 4 switch uplinks, 1 between sockets.
  EXPECT_EQ(four.node.links.size(), 4u + 12u + 4u + 1u);
  ASSERT_EQ(four.what_if_notes.size(), 1u);
  EXPECT_EQ(four.what_if_notes[0],
            "--set node.gpus=4 removes gpu4 to gpu7 and their links (the file's entries: node.links[3], "
            "node.links[4] without them)");
  // rtx4090-8x-pcie: [1] joins gpu4..7 to cpu1; with 4 GPUs it names none and goes. cpu1 keeps [2].
  const hw::ClusterSpec consumer = with("rtx4090-8x-pcie", {"node.gpus=4"});
  EXPECT_EQ(consumer.node.links.size(), 4u + 1u);
  EXPECT_NE(consumer.what_if_notes.at(0).find("node.links[1] dropped"), std::string::npos);
  // a100-pcie-8x-bridged: [0] zips the NVLink pairs (0,1) (2,3) (4,5) (6,7); with 3 GPUs only (0,1) stays,
  // and gpu2 keeps its PCIe link under pcie_switch1.
  const hw::ClusterSpec three = with("a100-pcie-8x-bridged", {"node.gpus=3"});
  int nvlinks = 0;
  for (const hw::LinkSpec& l : three.node.links) nvlinks += l.type == hw::LinkType::kNvlink ? 1 : 0;
  EXPECT_EQ(nvlinks, 1);
  EXPECT_EQ(hw::LinkGraph::build(three, 1).path(0, 2).path_class, hw::PathClass::kHostStaged);
  // Fewer NICs drop theirs the same way; an unchanged count changes nothing and says nothing.
  EXPECT_EQ(with("hgx-a100", {"node.nics=4"}).node.count(hw::DeviceKind::kNic), 4);
  EXPECT_TRUE(with("hgx-a100", {"node.gpus=8"}).what_if_notes.empty());
  // More GPUs than the file's links reach: refused, saying what to do; where the links name them by
  // kind (rtx3090-6x-pcie: gpu* - cpu0), more join.
  EXPECT_TRUE(throws_input_error([] { (void)with("hgx-a100", {"node.gpus=16"}); },
                                 {"--set node.gpus=16", "gpu8 has no PCIe path to a cpu",
                                  "use at most 8 gpus", "commscale hw show hgx-a100 --json"}));
  EXPECT_EQ(with("rtx3090-6x-pcie", {"node.gpus=8"}).gpus_per_node(), 8);
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
