// What a GPU can train with (predict/gpu_support.hpp): the training type by the GPU file's rates,
// FlashAttention by compute capability (8.0 and later); defaults bend, flags are refused.
#include <gtest/gtest.h>

#include "hw_test_support.hpp"
#include "input_error_matcher.hpp"
#include "predict/gpu_support.hpp"

namespace commscale::predict {
namespace {

using commscale::testing::throws_input_error;

hw::GpuSpec catalog_gpu(const std::string& name) { return hw::testing::catalog().gpu(name, "test"); }

TEST(GpuSupport, TypesAndFlashAttentionByTheCatalog) {
  // V100 (Volta, 7.0): fp16 125 TFLOPS [AIB], bf16 null (BF16 starts with Ampere), no FlashAttention.
  EXPECT_TRUE(gpu_trains_in(catalog_gpu("v100-sxm2-32gb"), DataType::kFloat16));
  EXPECT_FALSE(gpu_trains_in(catalog_gpu("v100-sxm2-32gb"), DataType::kBFloat16));
  EXPECT_TRUE(gpu_trains_in(catalog_gpu("v100-sxm2-32gb"), DataType::kFloat32));
  EXPECT_FALSE(gpu_runs_flash_attention(catalog_gpu("v100-sxm2-32gb")));
  // Ampere and later have both: A100 8.0, RTX 3090 8.6, H200 9.0, RTX 5090 12.0.
  for (const char* name : {"a100-sxm4-80gb", "rtx3090", "h200-sxm", "rtx5090"}) {
    EXPECT_TRUE(gpu_trains_in(catalog_gpu(name), DataType::kBFloat16)) << name;
    EXPECT_TRUE(gpu_runs_flash_attention(catalog_gpu(name))) << name;
  }
}

TEST(GpuSupport, DefaultsBendWithANoteAndFlagsAreRefused) {
  TrainingChoices defaults;  // a preset's bf16, a framework's flash attention
  const std::vector<std::string> notes = fit_to_gpu(catalog_gpu("v100-sxm2-32gb"), defaults);
  EXPECT_EQ(defaults.dtype, DataType::kFloat16);
  EXPECT_FALSE(defaults.flash_attention);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0],
            "v100-sxm2-32gb has no bf16 rate (Volta, compute capability 7.0): trained in fp16 instead of the default "
            "bf16 (--dtype fp16 to say so)");
  EXPECT_NE(notes[1].find("cannot run FlashAttention"), std::string::npos) << notes[1];
  // What the GPU runs changes nothing and says nothing.
  TrainingChoices a100;
  EXPECT_TRUE(fit_to_gpu(catalog_gpu("a100-sxm4-80gb"), a100).empty());
  EXPECT_EQ(a100.dtype, DataType::kBFloat16);
  EXPECT_TRUE(a100.flash_attention);
  TrainingChoices asked{DataType::kBFloat16, "--dtype", false, ""};
  EXPECT_TRUE(throws_input_error(
      [&] { (void)fit_to_gpu(catalog_gpu("v100-sxm2-32gb"), asked); },
      {"--dtype: bf16 on v100-sxm2-32gb", "bf16_tensor_fp32acc_TFLOPS is null", "fp16 on this GPU (--dtype fp16)"}));
  TrainingChoices flash{DataType::kFloat16, "--dtype", true, "--flash-attn"};
  EXPECT_TRUE(throws_input_error(
      [&] { (void)fit_to_gpu(catalog_gpu("v100-sxm2-32gb"), flash); },
      {"--flash-attn: fused (flash) attention on v100-sxm2-32gb", "8.0 or later", "--no-flash-attn"}));
}

// --fp8 is refused on a GPU without FP8 tensor cores, but where GPUs are compared (compare) it applies where the
// GPU has them: bf16 on the A100, with a note; FP8 kept on the H200.
TEST(GpuSupport, Fp8IsRefusedWithoutTensorCoresButWhereGpusAreCompared) {
  TrainingChoices asked{DataType::kBFloat16, "", true, "", Fp8Recipe::kDelayed};
  EXPECT_TRUE(throws_input_error([&] { (void)fit_to_gpu(catalog_gpu("a100-sxm4-80gb"), asked); },
                                 {"--fp8: delayed on a100-sxm4-80gb", "no FP8 tensor cores"}));
  TrainingChoices compared = asked;
  compared.fp8_where_supported = true;
  const std::vector<std::string> notes = fit_to_gpu(catalog_gpu("a100-sxm4-80gb"), compared);
  EXPECT_EQ(compared.fp8, Fp8Recipe::kNone);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "a100-sxm4-80gb (Ampere GA100, compute capability 8.0) has no FP8 tensor cores: trained in "
            "bf16, not FP8 (--fp8 delayed applies where the GPU has them)");
  TrainingChoices h200 = asked;
  h200.fp8_where_supported = true;
  EXPECT_TRUE(fit_to_gpu(catalog_gpu("h200-sxm"), h200).empty());
  EXPECT_EQ(h200.fp8, Fp8Recipe::kDelayed);
}

}  // namespace
}  // namespace commscale::predict
