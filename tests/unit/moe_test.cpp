// Mixture of experts and expert parallelism (src/workload/MOE.md): the presets' parameter counts against
// their published sizes, Megatron-Core's expert rank layout written out by hand, the step program's
// all-to-alls and expert-data-parallel gradients counted by hand, and the plans refused with their flag.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hw/json_reader.hpp"
#include "hw_test_support.hpp"
#include "input_error_matcher.hpp"
#include "parallel/plan_summary.hpp"
#include "parallel/program_builder.hpp"
#include "parallel/rank_layout.hpp"
#include "program/checker.hpp"
#include "traffic_test_support.hpp"
#include "workload/flops.hpp"
#include "workload/hf_config.hpp"
#include "workload/layer_ops.hpp"
#include "workload/memory.hpp"
#include "workload/model_spec.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

double billions(std::uint64_t n) { return static_cast<double>(n) / 1e9; }

TEST(Moe, PresetParameterCountsMatchTheirPublishedSizes) {
  // Mixtral 8x7B: 46.7 B parameters, 12.9 B active (Jiang et al. 2024).
  const TransformerConfig mixtral = find_preset("mixtral-8x7b", "");
  EXPECT_NEAR(billions(parameter_count(mixtral)), 46.7, 0.05);
  EXPECT_NEAR(billions(active_parameter_count(mixtral)), 12.9, 0.05);
  // Qwen1.5-MoE-A2.7B: 14.3 B, 2.7 B active (its model card).
  const TransformerConfig qwen = find_preset("qwen1.5-moe-a2.7b", "");
  EXPECT_NEAR(billions(parameter_count(qwen)), 14.3, 0.05);
  EXPECT_NEAR(billions(active_parameter_count(qwen)), 2.7, 0.05);
  // DeepSeek-V2-Lite: 15.7 B, 2.4 B active (DeepSeek's active count leaves the 0.21 B embedding out).
  const TransformerConfig lite = find_preset("deepseek-v2-lite", "");
  EXPECT_NEAR(billions(parameter_count(lite)), 15.7, 0.01);
  EXPECT_NEAR(billions(active_parameter_count(lite) - 102400ULL * 2048), 2.4, 0.06);
  // DeepSeek-V3: 671 B, 37 B active; the -like preset has no multi-token prediction module (14 B).
  const TransformerConfig v3 = find_preset("deepseek-v3", "");
  EXPECT_NEAR(billions(parameter_count(v3)), 671.0, 0.05);
  EXPECT_NEAR(billions(active_parameter_count(v3)), 37.0, 0.6);
  // A dense model: every parameter is active.
  const TransformerConfig llama = find_preset("llama2-7b", "");
  EXPECT_EQ(active_parameter_count(llama), parameter_count(llama));
}

TEST(Moe, LayerParametersSplitExpertsOverEp) {
  const TransformerConfig m = find_preset("tiny-moe", "");         // 8 experts of 256, top 2, shared 128, layer 0 dense
  const std::uint64_t expert = 128 * 256 + 256 + 256 * 128 + 128;  // fc1 and fc2 with their biases
  EXPECT_EQ(expert_parameters(m), expert);
  EXPECT_EQ(layer_parameters(m, 2, 0, 4).experts, 0u);  // the dense first layer
  EXPECT_EQ(layer_parameters(m, 2, 0, 4).total(), layer_parameters(m, 2).total());
  const LayerParameters p = layer_parameters(m, 2, 1, 4);
  EXPECT_EQ(p.experts, 2 * expert);
  EXPECT_EQ(p.router, 128u * 8);
  EXPECT_EQ(layer_parameters(m, 2, 1, 1).experts, 8 * expert);
}

TEST(Moe, ExpertRanksAsMegatronCoreLaysThemOut) {
  // tp 2, dp 4, pp 2, ep 4: a stage's 8 ranks are etp 1 x ep 4 x edp 2, ep innermost.
  const ExpertLayout l(2, 4, 2, 4, "tp-dp-pp");
  EXPECT_EQ(l.group(5, ExpertDim::kEp), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(l.group(5, ExpertDim::kEdp), (std::vector<int>{1, 5}));
  EXPECT_EQ(l.group(13, ExpertDim::kEp), (std::vector<int>{12, 13, 14, 15}));
  EXPECT_EQ(l.group(13, ExpertDim::kEdp), (std::vector<int>{9, 13}));
  EXPECT_EQ(l.coord(6, ExpertDim::kEp), 2);
  // ep 8 takes the whole stage; ep 2 leaves an expert-data-parallel group of 4.
  EXPECT_EQ(ExpertLayout(2, 4, 2, 8, "tp-dp-pp").group(9, ExpertDim::kEp),
            (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(ExpertLayout(2, 4, 2, 2, "tp-dp-pp").group(3, ExpertDim::kEdp), (std::vector<int>{1, 3, 5, 7}));
  // Orders that keep a stage's ranks together lay the experts out alike; one that interleaves stages is refused.
  EXPECT_EQ(ExpertLayout(2, 4, 2, 4, "dp-tp-pp").group(5, ExpertDim::kEp), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_TRUE(throws_input_error([] { (void)ExpertLayout(2, 4, 2, 4, "tp-pp-dp"); }, {"--order"}));
  EXPECT_TRUE(throws_input_error([] { (void)ExpertLayout(2, 4, 2, 3, "tp-dp-pp"); }, {"--ep"}));
}

TEST(Moe, ExpertTensorParallelRanksAsMegatronCoreLaysThemOut) {
  // Written out by hand from Megatron-Core's RankGenerator (parallel_state.py) with its default order
  // tp-cp-ep-dp-pp: the expert generator's tp is etp, its dp edp = tp x dp / (etp x ep), cp 1.
  // tp 2, dp 4, ep 2, etp 2: etp {0,1} {2,3} {4,5} {6,7}; ep {0,2} {1,3} {4,6} {5,7}; edp {0,4} {1,5} ...
  const ExpertLayout a(2, 4, 1, 2, "tp-dp-pp", 2);
  EXPECT_EQ(a.size(ExpertDim::kEdp), 2);
  EXPECT_EQ(a.group(0, ExpertDim::kEtp), (std::vector<int>{0, 1}));
  EXPECT_EQ(a.group(7, ExpertDim::kEtp), (std::vector<int>{6, 7}));
  EXPECT_EQ(a.group(1, ExpertDim::kEp), (std::vector<int>{1, 3}));
  EXPECT_EQ(a.group(6, ExpertDim::kEp), (std::vector<int>{4, 6}));
  EXPECT_EQ(a.group(2, ExpertDim::kEdp), (std::vector<int>{2, 6}));
  EXPECT_EQ(a.group(5, ExpertDim::kEdp), (std::vector<int>{1, 5}));
  // tp 4, dp 2, ep 4, etp 1: etp singletons; ep {0,1,2,3} {4,5,6,7}; edp {0,4} {1,5} {2,6} {3,7}.
  const ExpertLayout b(4, 2, 1, 4, "tp-dp-pp", 1);
  EXPECT_EQ(b.group(2, ExpertDim::kEtp), (std::vector<int>{2}));
  EXPECT_EQ(b.group(6, ExpertDim::kEp), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(b.group(3, ExpertDim::kEdp), (std::vector<int>{3, 7}));
  // tp 2, dp 4, pp 2, ep 4, etp 2: a stage's 8 ranks are etp 2 x ep 4 x edp 1. etp {8,9}; ep {0,2,4,6}
  // {1,3,5,7} {8,10,12,14} {9,11,13,15}; edp singletons; pp {0,8} ... {7,15}, the dense layout's stages.
  const ExpertLayout c(2, 4, 2, 4, "tp-dp-pp", 2);
  EXPECT_EQ(c.group(9, ExpertDim::kEtp), (std::vector<int>{8, 9}));
  EXPECT_EQ(c.group(3, ExpertDim::kEp), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(c.group(12, ExpertDim::kEp), (std::vector<int>{8, 10, 12, 14}));
  EXPECT_EQ(c.group(11, ExpertDim::kEdp), (std::vector<int>{11}));
  EXPECT_EQ(c.coord(14, ExpertDim::kEp), 3);
  // tp 1, dp 4, ep 2, etp 2: expert tensor parallelism without tensor parallelism: etp {0,1} {2,3}, ep {0,2}
  // {1,3}.
  const ExpertLayout d(1, 4, 1, 2, "tp-dp-pp", 2);
  EXPECT_EQ(d.group(1, ExpertDim::kEtp), (std::vector<int>{0, 1}));
  EXPECT_EQ(d.group(3, ExpertDim::kEp), (std::vector<int>{1, 3}));
  EXPECT_EQ(d.group(3, ExpertDim::kEdp), (std::vector<int>{3}));
  // etp x ep must divide tp x dp.
  EXPECT_TRUE(throws_input_error([] { (void)ExpertLayout(2, 4, 1, 4, "tp-dp-pp", 4); }, {"--etp", "4 x ep 4"}));
}

ParallelPlan moe_plan(int dp, int tp, int pp, int ep, int microbatches) {
  ParallelPlan p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.ep = ep;
  p.sequence_parallel = tp > 1;
  p.global_batch = dp * microbatches;
  return p;
}

// The check of a plan's program, the plan varied by `index`: its ZeRO stage, recompute and, with pp > 1, every
// other one interleaved.
ProgramCheck varied_check(const TransformerConfig& m, ParallelPlan p, int index) {
  p.zero_stage = index % 3;
  p.recompute = static_cast<Recompute>(index % 3);
  if (p.pp > 1 && index % 2 == 0) {
    p.schedule = ScheduleKind::kInterleaved;
    p.chunks = 2;
  }
  return check_program(build_program(CheckedPlan(m, p)));
}

using commscale::testing::traffic;

TEST(Moe, AllToAllsAndExpertGradientsCountedByHand) {
  // tiny-moe, dp 2 x tp 2 x pp 2, ep 2, 4 microbatches, one gradient bucket per stage.
  const TransformerConfig m = find_preset("tiny-moe", "");
  ParallelPlan p = moe_plan(2, 2, 2, 2, 4);
  p.bucket_bytes = Bytes(1 << 30);
  const ProgramSet set = build_program(CheckedPlan(m, p));
  const ProgramCheck check = check_program(set);
  ASSERT_TRUE(check.ok()) << check.problems.front();
  // Rank 5 (stage 1, tp 1, dp 0): its ep group is the stage's ranks 4 and 5, its edp group 5 and 7.
  const RankProgram& r5 = set.ranks[5];
  EXPECT_EQ(r5.groups[kExpertGroup].role, GroupRole::kExpert);
  EXPECT_EQ(r5.groups[kExpertGroup].members, (std::vector<int>{4, 5}));
  EXPECT_EQ(r5.groups[kExpertDpGroup].members, (std::vector<int>{5, 7}));
  // Each MoE layer dispatches and combines once in the forward and once in the backward of each microbatch:
  // T / t x top-k rows of h, bf16 = 32 x 2 x 128 x 2 bytes each. Stage 0 has layers 1-3 of MoE (layer 0 is
  // dense), stage 1 layers 4-7.
  const std::uint64_t rows_bytes = 32 * 2 * 128 * 2;
  auto t0 = traffic(set, 0);
  EXPECT_EQ(t0["ep alltoall"].count, 3u * 4 * 4);
  EXPECT_EQ(t0["ep alltoall"].bytes.count(), 3u * 4 * 4 * rows_bytes);
  auto t1 = traffic(set, 5);
  EXPECT_EQ(t1["ep alltoall"].count, 4u * 4 * 4);
  // The routed experts' gradients go over edp (4 local experts of 4 layers), the rest over dp.
  EXPECT_EQ(t1["edp all_reduce"].count, 1u);
  EXPECT_EQ(t1["edp all_reduce"].bytes.count(), 2u * 4 * 4 * expert_parameters(m));
  EXPECT_EQ(t1["dp all_reduce"].count, 1u);
  // Experts do not add model FLOPs beyond top-k of them: the step's hardware FLOPs are those of the active model.
  const PlanSummary summary = summarize_plan(m, p, set, {}, std::nullopt);
  EXPECT_GT(summary.hardware_flops_per_step.value(), 0.0);
  EXPECT_NEAR(summary.hardware_flops_per_step.value() / summary.model_flops_per_step.value(), 1.0, 0.15);
}

TEST(Moe, ALoadImbalanceSizesTheBusiestRank) {
  // Dropless routing with the busiest rank at 1.5x the mean: it receives, computes and sends back 1.5x the rows.
  TransformerConfig m = find_preset("tiny-moe", "");
  const ParallelPlan p = moe_plan(2, 2, 1, 4, 2);
  const auto alltoall_bytes = [&](const TransformerConfig& model) {
    return traffic(build_program(CheckedPlan(model, p)), 0)["ep alltoall"].bytes.count();
  };
  const std::uint64_t balanced = alltoall_bytes(m);
  m.moe.load_imbalance = 1.5;
  EXPECT_EQ(alltoall_bytes(m), balanced * 3 / 2);
  const OpList forward = layer_forward_ops(m, layer_sharding(p), true);
  const auto fc1 =
      std::find_if(forward.begin(), forward.end(), [](const WorkloadOp& op) { return op.name == "experts.fc1"; });
  ASSERT_NE(fc1, forward.end());
  EXPECT_EQ(std::get<Gemm>(fc1->payload).m, 3 * 32 * 2 / 2 / 2);  // 1.5 x 64 rows over 2 local experts
  // Refused: below 1, or with a capacity factor (which pads every rank alike).
  m.moe.load_imbalance = 0.5;
  EXPECT_TRUE(throws_input_error([&] { validate_model(m, ""); }, {"--load-imbalance", "0.5"}));
  m.moe.load_imbalance = 2;
  m.moe.capacity_factor = 1.25;
  EXPECT_TRUE(throws_input_error([&] { validate_model(m, "m.json"); }, {"m.json: moe.load_imbalance", "capacity"}));
  // Priced at most ep: the busiest of ep 4 ranks receives at most all their rows, 4 x the mean, so 4.5 prices as 4;
  // with ep 1 every expert is local and a skew prices as balanced (a search over ep with one --load-imbalance).
  m.moe.capacity_factor = 0;
  m.moe.load_imbalance = 4.5;
  EXPECT_EQ(alltoall_bytes(m), balanced * 4);
  const ParallelPlan one = moe_plan(4, 1, 1, 1, 2);
  const auto fc1_rows = [&](const TransformerConfig& model) {
    const OpList ops = layer_forward_ops(model, layer_sharding(one), true);
    const auto it = std::find_if(ops.begin(), ops.end(), [](const WorkloadOp& op) { return op.name == "experts.fc1"; });
    return it == ops.end() ? -1 : std::get<Gemm>(it->payload).m;
  };
  TransformerConfig even = m;
  even.moe.load_imbalance = 1.0;
  m.moe.load_imbalance = 1.5;
  EXPECT_GT(fc1_rows(even), 0);
  EXPECT_EQ(fc1_rows(m), fc1_rows(even));
  EXPECT_EQ(layer_activation_bytes(m, layer_sharding(one), true), layer_activation_bytes(even, layer_sharding(one), true));
}

TEST(Moe, ExpertTensorParallelismCountedByHand) {
  // tiny-moe without biases (Megatron-Core has none in MoE layers with etp > 1), dp 4 x tp 2, ep 2, etp 2:
  // edp = 8 / (2 x 2) = 2; 2 microbatches, one gradient bucket.
  TransformerConfig m = find_preset("tiny-moe", "");
  m.linear_bias = false;
  ParallelPlan p = moe_plan(4, 2, 1, 2, 2);
  p.etp = 2;
  p.bucket_bytes = Bytes(1 << 30);
  const ProgramSet set = build_program(CheckedPlan(m, p));
  const ProgramCheck check = check_program(set);
  ASSERT_TRUE(check.ok()) << check.problems.front();
  // Rank 5: etp {4, 5}, ep {5, 7}, edp {1, 5} (Megatron-Core's expert RankGenerator, tp-cp-ep-dp-pp).
  const RankProgram& r5 = set.ranks[5];
  EXPECT_EQ(r5.groups[kExpertTpGroup].role, GroupRole::kExpertTp);
  EXPECT_EQ(r5.groups[kExpertTpGroup].members, (std::vector<int>{4, 5}));
  EXPECT_EQ(r5.groups[kExpertGroup].members, (std::vector<int>{5, 7}));
  EXPECT_EQ(r5.groups[kExpertDpGroup].members, (std::vector<int>{1, 5}));
  EXPECT_EQ(r5.groups[kContextGroup].members, (std::vector<int>{5}));  // the slot before it: the rank alone
  // Per MoE layer and microbatch: the dispatch and combine all-to-alls of T / t x top-k = 32 x 2 rows of h,
  // forward and backward; around the experts an all-gather (forward dispatch, backward combine) and a
  // reduce-scatter (forward combine, backward dispatch) over etp of the rows gathered from both members:
  // 2 x 64 rows x 128 x 2 bytes. 7 MoE layers, 2 microbatches.
  const std::uint64_t rows_bytes = 64 * 128 * 2;
  auto t = traffic(set, 5);
  EXPECT_EQ(t["ep alltoall"].count, 7u * 2 * 4);
  EXPECT_EQ(t["ep alltoall"].bytes.count(), 7u * 2 * 4 * rows_bytes);
  EXPECT_EQ(t["etp all_gather"].count, 7u * 2 * 2);
  EXPECT_EQ(t["etp all_gather"].bytes.count(), 7u * 2 * 2 * 2 * rows_bytes);
  EXPECT_EQ(t["etp reduce_scatter"].count, 7u * 2 * 2);
  EXPECT_EQ(t["etp reduce_scatter"].bytes.count(), 7u * 2 * 2 * 2 * rows_bytes);
  // The routed experts' gradients over edp: 4 local experts of 7 layers, each half of an expert (no biases:
  // fc1 128 x 256 and fc2 256 x 128, split 2 ways), bf16.
  const std::uint64_t expert = 2 * 128 * 256;
  EXPECT_EQ(expert_parameters(m), expert);
  EXPECT_EQ(layer_parameters(m, 2, 1, 2, 2).experts, 4 * expert / 2);
  EXPECT_EQ(t["edp all_reduce"].count, 1u);
  EXPECT_EQ(t["edp all_reduce"].bytes.count(), 2u * 7 * 4 * expert / 2);
  // The local experts' grouped GEMMs: 4 experts of 2 x 64 / 4 = 32 gathered rows, F / etp = 128 wide.
  const OpList forward = layer_forward_ops(m, layer_sharding(p), true);
  const auto op = [&](const std::string& name) {
    const auto it = std::find_if(forward.begin(), forward.end(), [&](const WorkloadOp& o) { return o.name == name; });
    EXPECT_NE(it, forward.end()) << name;
    return it;
  };
  const Gemm fc1 = std::get<Gemm>(op("experts.fc1")->payload);
  EXPECT_EQ(fc1.m, 32);
  EXPECT_EQ(fc1.n, 128);
  EXPECT_EQ(fc1.k, 128);
  EXPECT_EQ(fc1.batch, 4);
  const Gemm fc2 = std::get<Gemm>(op("experts.fc2")->payload);
  EXPECT_EQ(fc2.k, 128);
  EXPECT_EQ(fc2.n, 128);
  // In order: all-to-all, all-gather, the experts, reduce-scatter, all-to-all.
  EXPECT_LT(op("dispatch.all_to_all"), op("dispatch.all_gather"));
  EXPECT_LT(op("dispatch.all_gather"), op("experts.fc1"));
  EXPECT_LT(op("experts.fc2"), op("combine.reduce_scatter"));
  EXPECT_LT(op("combine.reduce_scatter"), op("combine.all_to_all"));
  // Without an exchange (ep 1) the unpermute waits for the reduce-scatter, the backward's permute for its own.
  ParallelPlan local = p;
  local.ep = 1;
  const OpList alone = layer_forward_ops(m, layer_sharding(local), true);
  const auto index_of = [](const OpList& list, const std::string& name) {
    const auto it = std::find_if(list.begin(), list.end(), [&](const WorkloadOp& o) { return o.name == name; });
    EXPECT_NE(it, list.end()) << name;
    return static_cast<int>(it - list.begin());
  };
  const auto deps_of = [&](const OpList& list, const std::string& name) {
    return list[static_cast<std::size_t>(index_of(list, name))].deps;
  };
  const std::vector<int> unpermute = deps_of(alone, "combine.unpermute");
  EXPECT_NE(std::find(unpermute.begin(), unpermute.end(), index_of(alone, "combine.reduce_scatter")), unpermute.end());
  const OpList back = layer_backward_ops(m, layer_sharding(local), false, true);
  const std::vector<int> permute = deps_of(back, "dispatch.permute");
  EXPECT_NE(std::find(permute.begin(), permute.end(), index_of(back, "dispatch.reduce_scatter")), permute.end());
  // Activations: the experts' input is the gathered rows, etp x the received ones; their inner activations
  // are as many values (2 x the rows at F / 2): 64 more rows of h, bf16.
  ParallelPlan one = p;
  one.etp = 1;
  EXPECT_EQ(layer_activation_bytes(m, layer_sharding(p), true).count() -
                layer_activation_bytes(m, layer_sharding(one), true).count(),
            64u * 128 * 2);
}

TEST(Moe, ExpertTensorParallelPlansAreDeadlockFree) {
  TransformerConfig m = find_preset("tiny-moe", "");
  m.linear_bias = false;
  int built = 0;
  for (int tp : {1, 2}) {
    for (int pp : {1, 2}) {
      for (int ep : {1, 2, 4}) {
        for (int etp : {2, 4}) {
          if ((tp * 4) % (ep * etp) != 0) continue;
          ParallelPlan p = moe_plan(4, tp, pp, ep, 2 * pp);
          p.etp = etp;
          const ProgramCheck check = varied_check(m, p, built);
          EXPECT_TRUE(check.ok()) << "tp " << tp << " pp " << pp << " ep " << ep << " etp " << etp << ": "
                                  << (check.ok() ? "" : check.problems.front());
          ++built;
        }
      }
    }
  }
  EXPECT_EQ(built, 16);
}

TEST(Moe, ExpertTensorParallelPlansThatCannotRunNameTheirFlag) {
  TransformerConfig m = find_preset("tiny-moe", "");
  ParallelPlan p = moe_plan(2, 2, 1, 2, 2);
  p.etp = 2;
  // Biases: Megatron-Core supports them in MoE layers only with etp 1.
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, p); }, {"--etp", "biases"}));
  m.linear_bias = false;
  EXPECT_NO_THROW((void)CheckedPlan(m, p));
  ParallelPlan wide = p;
  wide.ep = 4;
  EXPECT_TRUE(
      throws_input_error([&] { (void)CheckedPlan(m, wide); }, {"--etp", "2 x ep 4 does not divide tp 2 x dp 2"}));
  ParallelPlan three = moe_plan(3, 1, 1, 1, 2);
  three.etp = 3;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, three); }, {"--etp", "experts' F 256"}));
  ParallelPlan fp8 = p;
  fp8.fp8 = Fp8Recipe::kDelayed;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, fp8); }, {"--etp", "--fp8"}));
  ParallelPlan zero = p;
  zero.etp = 0;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, zero); }, {"--etp", "0"}));
  TransformerConfig dense = find_preset("tiny", "");
  dense.linear_bias = false;
  ParallelPlan on_dense = moe_plan(2, 1, 1, 1, 2);
  on_dense.etp = 2;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(dense, on_dense); }, {"--etp", "no experts"}));
  // The plan's JSON carries etp only where it is not 1, and reads it back.
  EXPECT_FALSE(plan_to_json(moe_plan(2, 2, 1, 2, 2)).contains("etp"));
  const nlohmann::json j = plan_to_json(p);
  EXPECT_EQ(j.at("etp"), 2);
  EXPECT_EQ(plan_from_json(JsonAt(j, "plan.json")).etp, 2);
}

TEST(Moe, ManyExpertPlansAreDeadlockFree) {
  const TransformerConfig m = find_preset("tiny-moe", "");
  int built = 0;
  for (int tp : {1, 2}) {
    for (int pp : {1, 2}) {
      for (int dp : {1, 2, 4}) {
        for (int ep : {1, 2, 4, 8}) {
          if ((tp * dp) % ep != 0) continue;
          const ProgramCheck check = varied_check(m, moe_plan(dp, tp, pp, ep, 2 * pp), built);
          EXPECT_TRUE(check.ok()) << "dp " << dp << " tp " << tp << " pp " << pp << " ep " << ep << ": "
                                  << (check.ok() ? "" : check.problems.front());
          ++built;
        }
      }
    }
  }
  EXPECT_EQ(built, 30);
}

TEST(Moe, PlansThatCannotRunNameTheirFlag) {
  const TransformerConfig m = find_preset("tiny-moe", "");
  const TransformerConfig dense = find_preset("tiny", "");
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, moe_plan(2, 2, 1, 3, 2)); }, {"--ep", "3"}));
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, moe_plan(1, 2, 1, 4, 2)); }, {"--ep", "tp 2 x dp 1"}));
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(dense, moe_plan(2, 1, 1, 2, 2)); }, {"--ep", "no experts"}));
  ParallelPlan no_sp = moe_plan(2, 2, 1, 2, 2);
  no_sp.sequence_parallel = false;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, no_sp); }, {"--sp"}));
  ParallelPlan zero3 = moe_plan(2, 2, 1, 2, 2);
  zero3.zero_stage = 3;
  EXPECT_TRUE(throws_input_error([&] { (void)CheckedPlan(m, zero3); }, {"--zero", "not modelled for MoE"}));
}

TEST(Moe, ModelJsonRoundTripsTheExperts) {
  const TransformerConfig m = find_preset("deepseek-v2-lite", "");
  const TransformerConfig back = model_from_json(model_to_json(m), "model.json");
  EXPECT_EQ(back.moe.experts, 64);
  EXPECT_EQ(back.moe.top_k, 6);
  EXPECT_EQ(back.moe.expert_ffn, 1408);
  EXPECT_EQ(back.moe.shared_ffn, 2816);
  EXPECT_EQ(back.moe.first_dense_layers, 1);
  EXPECT_EQ(parameter_count(back), parameter_count(m));
  // A dense model's JSON has no "moe" key (its files are as they were).
  EXPECT_FALSE(model_to_json(find_preset("llama2-7b", "")).contains("moe"));
}

TEST(Moe, HuggingFaceConfigsGiveThePresets) {
  const std::string hf = hw::testing::kSourceDir + "/tests/data/hf/";
  for (const char* name : {"mixtral-8x7b", "qwen1.5-moe-a2.7b", "deepseek-v2-lite"}) {
    const TransformerConfig read = load_model_file(hf + name + ".json", 4096);
    const TransformerConfig preset = find_preset(name, "");
    EXPECT_EQ(read.moe.experts, preset.moe.experts) << name;
    EXPECT_EQ(read.moe.top_k, preset.moe.top_k) << name;
    EXPECT_EQ(read.moe.expert_ffn, preset.moe.expert_ffn) << name;
    EXPECT_EQ(read.moe.shared_ffn, preset.moe.shared_ffn) << name;
    EXPECT_EQ(read.moe.first_dense_layers, preset.moe.first_dense_layers) << name;
    EXPECT_EQ(parameter_count(read), parameter_count(preset)) << name;
  }
  // An MoE layer every other layer is not modelled, and says so.
  nlohmann::json qwen = hw::read_json_file(hf + "qwen1.5-moe-a2.7b.json");
  qwen["decoder_sparse_step"] = 2;
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_hf_config(qwen, "q.json", 4096); },
                                 {"q.json: decoder_sparse_step", "2"}));
}

}  // namespace
}  // namespace commscale
