// Plan resolution (parallel/plan_request.hpp): which of the flags, a plan file, Megatron-LM's flags, a
// framework's defaults and a preset decides each value, and the errors, by calling resolve() directly.
// The preset `tiny` (workload/presets.cpp): 8 layers, hidden 128, 8 heads (4 KV), MLP 512, vocab 1024,
// seq 64, gelu, bf16.

#include <gtest/gtest.h>

#include <stdexcept>

#include "input_error_matcher.hpp"
#include "parallel/plan_request.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

PlanRequest tiny_request() {
  PlanRequest r;
  r.model.preset = "tiny";
  return r;
}

// A plan file as load_plan_file returns it, read from best.json, with the preset `tiny`.
PlanFile plan_file(const PlanFileFields& plan) {
  PlanFile f;
  f.path = "best.json";
  f.model.preset = "tiny";
  f.plan = plan;
  return f;
}

TEST(PlanRequest, FlagsAloneWithTheFlagsDefaults) {
  PlanRequest r = tiny_request();
  r.plan.tp = 2;
  r.plan.pp = 2;
  const CheckedPlan c = resolve(r);
  EXPECT_EQ(c.model().name, "tiny");
  EXPECT_EQ(c.plan().tp, 2);
  EXPECT_EQ(c.plan().pp, 2);
  EXPECT_EQ(c.plan().dp, 1);  // neither --world nor --dp
  EXPECT_EQ(c.world(), 4);
  // --global-batch left out: 4 microbatches per stage of the pipeline, 1 sequence each: 1 x 1 x 4 x 2.
  EXPECT_EQ(c.plan().global_batch, 8);
  EXPECT_EQ(c.plan().recompute, Recompute::kNone);
  EXPECT_EQ(c.plan().schedule, ScheduleKind::k1F1B);
  EXPECT_EQ(c.plan().bucket_bytes, Bytes(25 * kMiB));
  // The default framework, megatron-lm: fused kernels, flash attention, Adam, ZeRO 0, reduction after the
  // backward.
  EXPECT_EQ(c.plan().framework, Framework::kMegatronLm);
  EXPECT_EQ(c.plan().kernels, KernelSet::kFused);
  EXPECT_TRUE(c.plan().flash_attention);
  EXPECT_EQ(c.plan().optimizer, Optimizer::kAdam);
  EXPECT_FALSE(c.plan().overlap_grad_reduce);
}

TEST(PlanRequest, WorldAndDataParallelSizeFollowFromEachOther) {
  PlanRequest r = tiny_request();
  r.plan.tp = 2;
  r.plan.world = 16;
  EXPECT_EQ(resolve(r).plan().dp, 8);  // 16 / (tp 2 x pp 1)
  // Without a pipeline, one microbatch per replica: 8 x 1.
  EXPECT_EQ(resolve(r).plan().global_batch, 8);
  r.plan.world = 3;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"--world: 3 ranks do not split into tp 2 x pp 1"}));
  r.plan.world.reset();
  r.plan.dp = 3;
  EXPECT_EQ(resolve(r).world(), 6);
}

TEST(PlanRequest, AFlagBeatsThePlanFileWhichBeatsTheDefault) {
  PlanRequest r = tiny_request();
  r.model.preset.reset();
  PlanFileFields file;
  file.tp = 2;
  file.pp = 2;
  file.recompute = "selective";
  file.global_batch = 32;
  r.plan_file = plan_file(file);
  r.plan.tp = 4;
  const CheckedPlan c = resolve(r);
  EXPECT_EQ(c.model().name, "tiny");  // the file's model
  EXPECT_EQ(c.plan().tp, 4);          // the flag
  EXPECT_EQ(c.plan().pp, 2);          // the file
  EXPECT_EQ(c.plan().recompute, Recompute::kSelective);
  EXPECT_EQ(c.plan().global_batch, 32);
  EXPECT_EQ(c.plan().micro_batch, 1);  // neither: the flag's default
  EXPECT_EQ(flags_over_plan_file(r), std::vector<std::string>{"--tp"});
  EXPECT_TRUE(plan_value_given(r, "--pp"));  // by the file
  EXPECT_TRUE(plan_value_given(r, "--tp"));  // by both
  EXPECT_FALSE(plan_value_given(r, "--kernels"));
  EXPECT_THROW((void)plan_value_given(r, "--optimizer"), std::invalid_argument);  // not a plan file key
}

TEST(PlanRequest, AModelFlagReplacesThePlanFilesModelAndShapeFlagsOverrideEither) {
  PlanRequest r;
  r.plan_file = plan_file({});
  r.model.preset = "gpt3-125m";
  r.plan.global_batch = 8;
  EXPECT_EQ(resolve(r).model().name, "gpt3-125m");
  // The model's flag first, then the plan's in the file's key order.
  r.plan_file->plan.global_batch = 16;
  r.plan_file->plan.tp = 2;
  r.plan.tp = 1;
  EXPECT_EQ(flags_over_plan_file(r), (std::vector<std::string>{"--model", "--tp", "--global-batch"}));
  r.model.preset.reset();
  r.model.shape.layers = 4;
  const CheckedPlan c = resolve(r);
  EXPECT_EQ(c.model().name, "tiny");
  EXPECT_EQ(c.model().layers, 4);
  EXPECT_EQ(c.model().hidden, 128);
}

TEST(PlanRequest, APlanFileModelWrittenOutIsNamedByTheFile) {
  PlanRequest r;
  PlanFile f = plan_file({});
  f.model.preset.clear();
  f.model.document = nlohmann::json{{"layers", 2}, {"hidden", 64}, {"heads", 3}, {"seq", 32}, {"vocab", 100}};
  r.plan_file = f;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); }, {"best.json: model: heads"}));
  r.plan_file->model.document->at("heads") = 4;
  r.model.shape.layers = 6;  // a shape flag overrides the written-out model
  const TransformerConfig m = resolve_model(r);
  EXPECT_EQ(m.layers, 6);
  EXPECT_EQ(m.heads, 4);
}

TEST(PlanRequest, AnErrorInAPlanFileValueNamesTheFileAndKey) {
  PlanRequest r = tiny_request();
  PlanFileFields file;
  file.tp = 3;  // does not divide tiny's 8 heads
  r.plan_file = plan_file(file);
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"best.json: plan.tp (as --tp): 3 does not divide"}));
  // The same value given as the flag is the flag's.
  r.plan.tp = 3;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"--tp: 3 does not divide"}));
  r.plan.tp.reset();
  r.plan_file->plan = {};
  r.plan_file->plan.schedule = "zigzag";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"best.json: plan.schedule (as --schedule): "}));
}

// The keys of the plan kinds added later (experts, context parallelism, FP8) take the same precedence and
// are named by the file alike.
TEST(PlanRequest, ExpertContextAndFp8KeysOfAPlanFile) {
  PlanRequest r = tiny_request();
  r.model.preset.reset();  // the file's model
  PlanFileFields file;
  file.dp = 4;
  file.ep = 2;
  file.fp8 = "delayed";
  file.fp8_dispatch = true;
  r.plan_file = plan_file(file);
  r.plan_file->model.preset = "tiny-moe";
  const CheckedPlan c = resolve(r);
  EXPECT_EQ(c.plan().ep, 2);
  EXPECT_EQ(c.plan().fp8, Fp8Recipe::kDelayed);
  EXPECT_TRUE(c.plan().fp8_dispatch);
  EXPECT_TRUE(flags_over_plan_file(r).empty());
  r.plan.fp8 = "current";
  EXPECT_EQ(resolve(r).plan().fp8, Fp8Recipe::kCurrent);
  EXPECT_EQ(flags_over_plan_file(r), std::vector<std::string>{"--fp8"});
  EXPECT_TRUE(plan_value_given(r, "--fp8-dispatch"));
  r.plan.fp8.reset();
  r.plan_file->plan.fp8 = "fast";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"best.json: plan.fp8 (as --fp8): "}));
  r.plan_file->plan.fp8 = "delayed";
  r.plan_file->plan.ep = 3;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"best.json: plan.ep (as --ep): "}));
  r.plan_file->plan.ep.reset();
  r.plan_file->plan.cp = 3;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"best.json: plan."}));
}

// Experts given by flags alone (--experts, Megatron-LM's --num-experts) take the dense MLP's size unless theirs
// is given, as Megatron-LM's --moe-ffn-hidden-size defaults to --ffn-hidden-size.
TEST(PlanRequest, AnExpertsMlpIsTheDenseOnesUnlessGiven) {
  PlanRequest r = tiny_request();
  r.model.shape.experts = 4;
  r.model.shape.top_k = 2;
  const CheckedPlan c = resolve(r);
  EXPECT_EQ(c.model().moe.expert_ffn, c.model().ffn);
  r.model.shape.expert_ffn = 64;
  EXPECT_EQ(resolve(r).model().moe.expert_ffn, 64);
}

TEST(PlanRequest, TheFrameworkSetsWhatNeitherAFlagNorThePlanFileGave) {
  PlanRequest r = tiny_request();
  r.plan.framework = "pytorch-fsdp";  // eager kernels, flash attention, AdamW, ZeRO 3, overlapped reduction
  CheckedPlan c = resolve(r);
  EXPECT_EQ(c.plan().kernels, KernelSet::kEager);
  EXPECT_EQ(c.plan().optimizer, Optimizer::kAdamW);
  EXPECT_EQ(c.plan().zero_stage, 3);
  EXPECT_TRUE(c.plan().overlap_grad_reduce);
  PlanFileFields file;
  file.kernels = "fused";
  file.zero = 1;
  r.plan_file = plan_file(file);
  r.plan.optimizer = "adam";
  c = resolve(r);
  EXPECT_EQ(c.plan().kernels, KernelSet::kFused);  // the file over the framework
  EXPECT_EQ(c.plan().zero_stage, 1);
  EXPECT_EQ(c.plan().optimizer, Optimizer::kAdam);  // the flag over the framework
  r.plan.zero = 2;
  EXPECT_EQ(resolve(r).plan().zero_stage, 2);  // the flag over the file
  // Without --framework, the request's default (train: commscale's own executor).
  r = tiny_request();
  r.default_framework = Framework::kCommscale;
  EXPECT_EQ(resolve(r).plan().framework, Framework::kCommscale);
  r.plan.framework = "deepspeed";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"--framework", "deepspeed"}));
}

TEST(PlanRequest, MegatronPlanFlagsConvertAndReplaceThePlanFilesValues) {
  PlanRequest r = tiny_request();
  r.plan.pp = 2;
  r.megatron.layers_per_virtual_stage = 2;  // 8 layers / (pp 2 x 2) = 2 chunks
  r.megatron.recompute_activations = true;
  r.megatron.distributed_optimizer = true;
  PlanFileFields file;
  file.recompute = "full";
  file.zero = 2;
  r.plan_file = plan_file(file);
  const CheckedPlan c = resolve(r);
  EXPECT_EQ(c.plan().chunks, 2);
  EXPECT_EQ(c.plan().schedule, ScheduleKind::kInterleaved);  // a virtual pipeline is the interleaved schedule
  EXPECT_EQ(c.plan().recompute, Recompute::kSelective);
  EXPECT_EQ(c.plan().zero_stage, 1);
  // Full recompute: every layer, uniform.
  r = tiny_request();
  r.megatron.recompute_granularity = "full";
  r.megatron.recompute_method = "uniform";
  r.megatron.recompute_num_layers = 1;
  EXPECT_EQ(resolve(r).plan().recompute, Recompute::kFull);
  r.megatron.recompute_num_layers = 2;
  EXPECT_TRUE(
      throws_input_error([&] { (void)resolve(r); }, {"--recompute-method: uniform with --recompute-num-layers 2"}));
}

TEST(PlanRequest, MegatronPlanFlagsAreRefusedBesideAFlagThatSaysOtherwise) {
  PlanRequest r = tiny_request();
  r.megatron.recompute_activations = true;
  r.plan.recompute = "full";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"--recompute: full given with Megatron-LM's selective"}));
  r.plan.recompute = "selective";  // the same, said twice
  EXPECT_EQ(resolve(r).plan().recompute, Recompute::kSelective);
  r = tiny_request();
  r.megatron.distributed_optimizer = true;
  r.plan.zero = 2;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"--use-distributed-optimizer: given with --zero 2"}));
  r = tiny_request();
  r.plan.pp = 2;
  r.megatron.layers_per_virtual_stage = 2;
  r.plan.chunks = 2;
  EXPECT_TRUE(
      throws_input_error([&] { (void)resolve(r); }, {"--num-layers-per-virtual-pipeline-stage: given with --chunks"}));
  r.plan.chunks.reset();
  r.megatron.layers_per_virtual_stage = 0;  // given as 0: refused, not read as left out
  EXPECT_TRUE(
      throws_input_error([&] { (void)resolve(r); }, {"--num-layers-per-virtual-pipeline-stage: 0 layers per chunk"}));
  r.megatron.layers_per_virtual_stage = 3;
  EXPECT_TRUE(throws_input_error(
      [&] { (void)resolve(r); },
      {"--num-layers-per-virtual-pipeline-stage: 3 layers per chunk do not split 8 layers over pp 2"}));
  r = tiny_request();
  r.megatron.recompute_method = "uniform";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); },
                                 {"--recompute-method: given without --recompute-granularity full"}));
  r.megatron.recompute_method.reset();
  r.megatron.recompute_num_layers = 0;  // 0 reads as left out
  EXPECT_EQ(resolve(r).plan().recompute, Recompute::kNone);
  r.megatron.recompute_granularity = "some";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); },
                                 {"--recompute-granularity: \"some\" (expected full or selective)"}));
}

TEST(PlanRequest, MegatronModelFlagsDescribeAModelAndAgreeWithCommscalesFlags) {
  PlanRequest r;
  r.model.shape.layers = 4;
  r.model.shape.hidden = 256;
  r.model.shape.heads = 8;
  r.model.shape.ffn = 688;
  r.model.shape.seq = 128;
  r.model.shape.vocab = 1000;
  r.megatron.swiglu = true;
  r.megatron.normalization = "RMSNorm";
  r.megatron.position_embedding = "rope";
  r.megatron.disable_bias_linear = true;
  r.megatron.untie_embeddings = true;
  r.megatron.fp16 = true;
  r.megatron.max_position_embeddings = 128;
  const TransformerConfig m = resolve_model(r);
  EXPECT_EQ(m.activation, MlpActivation::kSwiGlu);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.positions, PositionEmbedding::kRotary);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.dtype, DataType::kFloat16);
  r.megatron.max_position_embeddings = 64;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); },
                                 {"--max-position-embeddings: 64 is less than the sequence length 128"}));
  r.megatron.max_position_embeddings.reset();
  r.model.dtype = "bf16";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); }, {"--fp16: given with --dtype"}));
  r.megatron.bf16 = true;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); }, {"--bf16: given with --fp16"}));
  r = tiny_request();
  r.megatron.swiglu = true;
  r.model.activation = "gelu";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); }, {"--swiglu: given with --activation gelu"}));
  r = tiny_request();
  r.megatron.group_query_attention = true;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); },
                                 {"--group-query-attention: given without --num-query-groups"}));
  r.model.shape.kv_heads = 2;
  EXPECT_EQ(resolve_model(r).kv_heads, 2);
  r.megatron.normalization = "BatchNorm";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); }, {"--normalization: \"BatchNorm\""}));
}

TEST(PlanRequest, ModelErrorsNameTheFlag) {
  PlanRequest r;
  r.model.shape.layers = 4;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); }, {"--hidden"}));
  r = tiny_request();
  r.model.model_file = "model.json";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); }, {"--model: given together with another of"}));
  r = tiny_request();
  r.model.dtype = "int4";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(r); }, {"--dtype"}));
}

TEST(PlanRequest, LoraFlagsShapeOnlyARankGiven) {
  PlanFlags f;
  EXPECT_EQ(resolve_lora(f).rank, 0);
  f.lora_targets = "all";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_lora(f); }, {"--lora-targets: given without --lora-rank"}));
  f.lora_rank = 8;
  const LoraSpec l = resolve_lora(f);
  EXPECT_EQ(l.rank, 8);
  EXPECT_EQ(l.base_bits, 16);
  EXPECT_EQ(l.targets, LoraTargets::kAll);
  f.lora_rank = 0;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_lora(f); }, {"--lora-rank: 0"}));
}

TEST(PlanRequest, MegatronFlagsRefusedByNameAreListed) {
  const RejectedMegatronFlags rejected = rejected_megatron_flags();
  const auto has = [](std::span<const std::string_view> list, std::string_view flag) {
    return std::find(list.begin(), list.end(), flag) != list.end();
  };
  EXPECT_TRUE(has(rejected.unmodelled_with_value, "--pipeline-model-parallel-layout"));
  EXPECT_FALSE(has(rejected.unmodelled_with_value, "--expert-tensor-parallel-size"));  // --etp
  EXPECT_FALSE(has(rejected.unmodelled_with_value, "--context-parallel-size"));  // --cp
  EXPECT_TRUE(has(rejected.unmodelled_switches, "--tp-comm-overlap"));
  EXPECT_FALSE(has(rejected.unmodelled_switches, "--moe-grouped-gemm"));  // what commscale's experts run
  EXPECT_TRUE(has(rejected.training_with_value, "--lr"));
  // Converted flags are not refused: --fp8 is commscale's own (RECIPE), --fp8-format converts.
  EXPECT_FALSE(has(rejected.unmodelled_switches, "--overlap-grad-reduce"));
  EXPECT_FALSE(has(rejected.unmodelled_switches, "--fp8"));
  EXPECT_FALSE(has(rejected.unmodelled_with_value, "--fp8-format"));
}

TEST(PlanRequest, Fp8FlagAndMegatronsFp8FormatAndRecipe) {
  EXPECT_EQ(resolve(tiny_request()).plan().fp8, Fp8Recipe::kNone);
  PlanRequest r = tiny_request();
  r.plan.fp8 = "current";
  EXPECT_EQ(resolve(r).plan().fp8, Fp8Recipe::kCurrent);
  r.plan.fp8 = "fast";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(r); }, {"--fp8: unknown FP8 recipe \"fast\""}));

  PlanRequest m = tiny_request();
  m.megatron.fp8_format = "hybrid";  // --fp8-recipe defaults to delayed, as Megatron-LM's
  EXPECT_EQ(resolve(m).plan().fp8, Fp8Recipe::kDelayed);
  m.megatron.fp8_format = "e4m3";
  for (const auto& [recipe, want] : {std::pair{"delayed", Fp8Recipe::kDelayed},
                                     {"tensorwise", Fp8Recipe::kCurrent},
                                     {"blockwise", Fp8Recipe::kBlock},
                                     {"mxfp8", Fp8Recipe::kBlock}}) {
    m.megatron.fp8_recipe = recipe;
    EXPECT_EQ(resolve(m).plan().fp8, want) << recipe;
  }
  m.megatron.fp8_recipe = "rowwise";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(m); }, {"--fp8-recipe: \"rowwise\""}));
  m.megatron.fp8_recipe.reset();
  m.megatron.fp8_format = "e5m2";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(m); }, {"--fp8-format: \"e5m2\"", "hybrid or e4m3"}));
  // --fp8 that says the same is accepted; one that says otherwise is refused.
  m.megatron.fp8_format = "hybrid";
  m.plan.fp8 = "delayed";
  EXPECT_EQ(resolve(m).plan().fp8, Fp8Recipe::kDelayed);
  m.plan.fp8 = "block";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(m); }, {"--fp8: block given with Megatron-LM's --fp8-format"}));
  // --fp8-recipe alone: Megatron-LM trains without FP8 then, a line that is likely a mistake.
  PlanRequest alone = tiny_request();
  alone.megatron.fp8_recipe = "delayed";
  EXPECT_TRUE(throws_input_error([&] { (void)resolve(alone); }, {"--fp8-recipe: given without --fp8-format"}));
}

}  // namespace
}  // namespace commscale
