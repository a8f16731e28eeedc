// Models from Hugging Face config.json files (tests/data/hf/, written out from the models' published
// figures): the shape each architecture's keys give, and the parameter count against the published size.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "hw/json_reader.hpp"
#include "hw_test_support.hpp"
#include "input_error_matcher.hpp"
#include "workload/hf_config.hpp"
#include "workload/model_spec.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

const std::string kHf = hw::testing::kSourceDir + "/tests/data/hf/";

TransformerConfig load(const std::string& file, std::optional<std::int64_t> seq = std::nullopt) {
  return load_model_file(kHf + file, seq);
}

nlohmann::json doc(const std::string& file) { return hw::read_json_file(kHf + file); }

// |ours - published| / published, for counts that differ by a known, documented amount.
double relative_gap(std::uint64_t ours, std::uint64_t published) {
  return std::abs(static_cast<double>(ours) - static_cast<double>(published)) / static_cast<double>(published);
}

TEST(HfConfig, Llama2ShapeAndExactCount) {
  const TransformerConfig m = load("llama-2-7b.json");
  EXPECT_EQ(m.name, "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.kv_heads, 32);
  EXPECT_EQ(m.ffn, 11008);
  EXPECT_EQ(m.activation, MlpActivation::kSwiGlu);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.positions, PositionEmbedding::kRotary);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.seq, 4096);  // min(max_position_embeddings 4096, 4096)
  // The same model as the preset (whose count is derived by hand in workload_model_test): 6.74 B.
  EXPECT_EQ(parameter_count(m), 6738415616u);
}

TEST(HfConfig, GroupedQueryAttentionModelsMatchTheirPublishedSizes) {
  // Llama-3-8B: QKV 4096 x 128 x (32 + 16) = 25165824, o 16777216, MLP 3 x 4096 x 14336 = 176160768,
  // norms 8192: 218112000 a layer, x32 = 6979584000; embedding and output 2 x 128256 x 4096 =
  // 1050673152; final norm 4096: 8030261248 (8.03 B).
  const TransformerConfig llama3 = load("llama-3-8b.json");
  EXPECT_EQ(llama3.kv_heads, 8);
  EXPECT_EQ(llama3.seq, 4096);  // max_position_embeddings 8192, capped at kDefaultHfSeq
  EXPECT_EQ(parameter_count(llama3), 8030261248u);
  // Mistral-7B: as Llama-3-8B with a 32000 vocabulary: 6979584000 + 262144000 + 4096 = 7241732096 (7.24 B).
  EXPECT_EQ(parameter_count(load("mistral-7b.json")), 7241732096u);
  // Qwen2-7B (7.62 B published, 7615616512): QKV 3584 x 128 x 36 = 16515072, o 12845056, MLP
  // 3 x 3584 x 18944 = 203685888, norms 7168: 233053184 a layer, x28 = 6525489152; embedding and
  // output 2 x 152064 x 3584 = 1089994752; final norm 3584: 7615487488. Qwen2's q, k and v biases
  // (28 x 4608 = 129024) are not counted.
  const TransformerConfig qwen = load("qwen2-7b.json");
  EXPECT_EQ(qwen.kv_heads, 4);
  EXPECT_EQ(parameter_count(qwen), 7615487488u);
  EXPECT_EQ(7615616512u - parameter_count(qwen), 28u * (3584u + 2u * 512u));
  // Gemma-2B: one KV head of 256, GeGLU (gated, counted as SwiGLU), tied: QKV 2048 x 256 x 10 =
  // 5242880, o 4194304, MLP 3 x 2048 x 16384 = 100663296, norms 4096: 110104576 x 18 = 1981882368;
  // embedding 256000 x 2048 = 524288000; final norm 2048: 2506172416 (2.51 B).
  const TransformerConfig gemma = load("gemma-2b.json");
  EXPECT_EQ(gemma.kv_heads, 1);
  EXPECT_EQ(gemma.activation, MlpActivation::kSwiGlu);
  EXPECT_TRUE(gemma.tied_embeddings);
  EXPECT_EQ(parameter_count(gemma), 2506172416u);
}

TEST(HfConfig, Gpt2AndNeoXMatchTheirPublishedSizes) {
  // GPT-2: n_inner null (4 x 768), learned positions over the default seq 1024 = n_positions, tied:
  // 12 x 7087872 + 50257 x 768 + 1024 x 768 + 1536 = 124439808 (124 M).
  const TransformerConfig gpt2 = load("gpt2.json");
  EXPECT_EQ(gpt2.ffn, 3072);
  EXPECT_EQ(gpt2.seq, 1024);
  EXPECT_EQ(gpt2.positions, PositionEmbedding::kLearned);
  EXPECT_TRUE(gpt2.tied_embeddings);
  EXPECT_TRUE(gpt2.linear_bias);
  EXPECT_EQ(parameter_count(gpt2), 124439808u);
  // GPT-NeoX-20B: biases, LayerNorm, rotary, untied: 44 x 453064704 + 2 x 50432 x 6144 + 12288 =
  // 20554567680, the published count exactly.
  const TransformerConfig neox = load("gpt-neox-20b.json");
  EXPECT_EQ(neox.activation, MlpActivation::kGelu);
  EXPECT_FALSE(neox.tied_embeddings);
  EXPECT_EQ(parameter_count(neox), 20554567680u);
}

TEST(HfConfig, FalconAndPhiWithinTheirOneNormPerLayer) {
  // Falcon-7B: multi-query (one KV head), no biases, tied, MLP 4 x 4544. Its parallel block has one
  // LayerNorm a layer where commscale counts two: 32 x 9088 = 290816 over the published 6921720704.
  const TransformerConfig falcon = load("falcon-7b.json");
  EXPECT_EQ(falcon.kv_heads, 1);
  EXPECT_EQ(falcon.ffn, 4 * 4544);
  EXPECT_EQ(falcon.seq, 2048);  // FalconConfig's max_position_embeddings default
  EXPECT_EQ(parameter_count(falcon), 6921720704u + 32u * 9088u);
  // Phi-2: one LayerNorm a layer (+32 x 5120) and a bias on the output layer (-51200) against 2779683840.
  const TransformerConfig phi = load("phi-2.json");
  EXPECT_EQ(parameter_count(phi), 2779683840u + 32u * 5120u - 51200u);
  EXPECT_LT(relative_gap(parameter_count(phi), 2779683840u), 1e-4);
}

TEST(HfConfig, SequenceLengthIsTheTrainingChoice) {
  EXPECT_EQ(load("mistral-7b.json", 2048).seq, 2048);
  EXPECT_EQ(load("llama-3-8b.json", 8192).seq, 8192);
  // Rotary positions can run past max_position_embeddings (context extension); learned ones cannot.
  EXPECT_EQ(load("llama-2-7b.json", 8192).seq, 8192);
  EXPECT_TRUE(throws_input_error([] { (void)load("gpt2.json", 2048); }, {"--seq", "2048", "1024 positions"}));
  // Mistral's window of 4096 tokens: longer sequences would need windowed attention.
  EXPECT_TRUE(
      throws_input_error([] { (void)load("mistral-7b.json", 8192); }, {"sliding_window", "--seq 4096 or less"}));
}

TEST(HfConfig, UnsupportedArchitecturesAndKeysNameThemselves) {
  nlohmann::json jamba = doc("mistral-7b.json");
  jamba["model_type"] = "jamba";
  jamba["architectures"] = {"JambaForCausalLM"};
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_hf_config(jamba, "m.json", std::nullopt); },
                                 {"m.json: model_type", "jamba", "llama (LlamaForCausalLM)", "mixtral"}));
  nlohmann::json experts = doc("mistral-7b.json");
  experts["num_local_experts"] = 8;
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_hf_config(experts, "m.json", std::nullopt); },
                                 {"m.json: num_local_experts", "mistral config", "torch_dtype"}));
  nlohmann::json classifier = doc("llama-2-7b.json");
  classifier["architectures"] = {"LlamaForSequenceClassification"};
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_hf_config(classifier, "m.json", std::nullopt); },
                                 {"m.json: architectures", "LlamaForSequenceClassification"}));
  // Gemma-7B's attention is 16 x 256 = 4096 wide on a hidden size of 3072.
  nlohmann::json gemma7b = doc("gemma-2b.json");
  gemma7b["hidden_size"] = 3072;
  gemma7b["num_attention_heads"] = 16;
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_hf_config(gemma7b, "g.json", std::nullopt); },
                                 {"g.json: head_dim", "256 x 16 heads"}));
  nlohmann::json alibi = doc("falcon-7b.json");
  alibi["alibi"] = true;
  EXPECT_TRUE(
      throws_input_error([&] { (void)model_from_hf_config(alibi, "f.json", std::nullopt); }, {"f.json: alibi"}));
  nlohmann::json mixed = doc("llama-3-8b.json");
  mixed["mlp_bias"] = true;
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_hf_config(mixed, "l.json", std::nullopt); },
                                 {"l.json: attention_bias", "mlp_bias"}));
  nlohmann::json act = doc("gpt2.json");
  act["activation_function"] = "tanh";
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_hf_config(act, "g.json", std::nullopt); },
                                 {"g.json: activation_function", "tanh"}));
  nlohmann::json missing = doc("llama-2-7b.json");
  missing.erase("intermediate_size");
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_hf_config(missing, "l.json", std::nullopt); },
                                 {"l.json: intermediate_size", "missing"}));
}

TEST(HfConfig, ModelFileTellsTheKindsApartAndHfConfigInsistsOnOne) {
  EXPECT_TRUE(is_hf_config(doc("gpt2.json")));
  EXPECT_FALSE(is_hf_config(nlohmann::json{{"layers", 2}}));
  const std::string native = hw::testing::kSourceDir + "/tests/bad_inputs/files/model_array.json";
  EXPECT_TRUE(throws_input_error([&] { (void)load_model_file(native, std::nullopt, "--hf-config"); },
                                 {"model_type", "Hugging Face config.json"}));
}

}  // namespace
}  // namespace commscale
