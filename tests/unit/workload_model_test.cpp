// Transformer configs, presets, parameter counts and how a model is chosen (preset, file, flags).

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "input_error_matcher.hpp"
#include "workload/model_spec.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

ModelSource source(const std::string& preset, const std::string& file) {
  ModelSource s;
  s.preset = preset;
  s.file_path = file;
  return s;
}

TEST(Presets, AllPresetsAreValidAndFindable) {
  EXPECT_EQ(model_presets().size(), 18u);
  for (const TransformerConfig& m : model_presets()) {
    EXPECT_NO_THROW(validate_model(m, "preset")) << m.name;
    EXPECT_EQ(find_preset(m.name, "--model").name, m.name);
  }
  EXPECT_TRUE(throws_input_error([] { (void)find_preset("gpt5", "--model"); }, {"--model", "gpt5", "gpt3-175b"}));
}

TEST(Presets, Gpt3_175bParametersByHand) {
  // h = 12288: a layer has QKV 3h^2 + 3h, projection h^2 + h, MLP 4h^2 + 4h and 4h^2 + h, two
  // LayerNorms 2h each: 12h^2 + 13h = 12 * 150994944 + 13 * 12288 = 1811939328 + 159744 = 1812099072.
  // 96 layers: 173961510912. Embedding 51200 * 12288 = 629145600, positions 2048 * 12288 = 25165824,
  // final LayerNorm 24576, output tied: 174615846912 in all.
  const TransformerConfig m = find_preset("gpt3-175b", "");
  EXPECT_EQ(layer_parameters(m, 1).total(), 1812099072u);
  EXPECT_EQ(parameter_count(m), 174615846912u);
}

TEST(Presets, LlamaParametersMatchTheirModelCards) {
  // LLaMA-2 7B: layer 3h^2 + h^2 + 3hF + 2h = 50331648 + 16777216 + 135266304 + 8192 = 202383360;
  // x32 = 6476267520; embedding and untied output 2 * 32000 * 4096 = 262144000; final norm 4096.
  EXPECT_EQ(parameter_count(find_preset("llama2-7b", "")), 6738415616u);
  // LLaMA-2 70B (GQA, 8 KV heads of 128): QKV h (h + 2 * 8 * 128) = 83886080, o 67108864,
  // MLP 3 * 8192 * 28672 = 704643072, norms 16384: 855654400 x 80 + 2 * 32000 * 8192 + 8192.
  EXPECT_EQ(parameter_count(find_preset("llama2-70b", "")), 68976648192u);
  // LLaMA-3 8B: (25165824 + 16777216 + 176160768 + 8192) x 32 + 2 * 128256 * 4096 + 4096.
  EXPECT_EQ(parameter_count(find_preset("llama3-8b", "")), 8030261248u);
}

TEST(Parameters, TensorParallelShards) {
  // GPT-3 175B at t = 8: QKV (3h^2 + 3h)/8 = 56627712; projection h^2/8 + h (replicated bias) =
  // 18886656; fc1 (4h^2 + 4h)/8 = 75503616; fc2 4h^2/8 + h = 75509760; norms 2 * 2h = 49152.
  const LayerParameters p = layer_parameters(find_preset("gpt3-175b", ""), 8);
  EXPECT_EQ(p.qkv, 56627712u);
  EXPECT_EQ(p.proj, 18886656u);
  EXPECT_EQ(p.fc1, 75503616u);
  EXPECT_EQ(p.fc2, 75509760u);
  EXPECT_EQ(p.ln1 + p.ln2, 49152u);
  EXPECT_EQ(p.total(), 226576896u);
}

TEST(Parameters, BareStackHasNoEmbeddingOrHead) {
  TransformerConfig m = find_preset("gpt3-125m", "");
  m.vocab = 0;
  EXPECT_EQ(parameter_count(m), 12u * layer_parameters(m, 1).total());
  EXPECT_EQ(embedding_parameters(m, 1), 0u);
  EXPECT_EQ(output_parameters(m, 1, 4), 0u);
}

TEST(Parameters, TiedOutputIsACopyOnlyAcrossStages) {
  const TransformerConfig m = find_preset("gpt3-125m", "");
  EXPECT_EQ(output_parameters(m, 2, 1), 0u);                       // shared with the embedding
  EXPECT_EQ(output_parameters(m, 2, 4), 25600u * 768u);            // ceil(51200 / 2) rows of 768
  EXPECT_EQ(vocab_shard(find_preset("llama2-7b", ""), 3), 10667);  // 32000 padded to 32001
}

TEST(ModelValidation, NamesTheFieldAndTheExpectation) {
  TransformerConfig m = find_preset("tiny", "");
  m.kv_heads = 3;
  EXPECT_TRUE(throws_input_error([&] { validate_model(m, ""); }, {"--kv-heads", "3 KV heads", "8 attention heads"}));
  EXPECT_TRUE(throws_input_error([&] { validate_model(m, "m.json"); }, {"m.json: kv_heads"}));
  m = find_preset("tiny", "");
  m.heads = 5;
  EXPECT_TRUE(throws_input_error([&] { validate_model(m, ""); }, {"--heads", "hidden size 128"}));
  m = find_preset("tiny", "");
  m.vocab = -1;
  EXPECT_TRUE(throws_input_error([&] { validate_model(m, ""); }, {"--vocab", "-1 is negative", "no embedding"}));
  m = find_preset("tiny", "");
  m.dtype = DataType::kInt8;
  EXPECT_TRUE(throws_input_error([&] { validate_model(m, ""); }, {"--dtype", "int8"}));
}

TEST(ModelSpec, FlagsOverrideAPreset) {
  ModelOverrides o;
  o.seq = 4096;
  o.heads = 64;  // multi-head attention stays multi-head: KV heads follow
  const TransformerConfig m = resolve_model(source("gpt3-175b", ""), o);
  EXPECT_EQ(m.seq, 4096);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kv_heads, 64);
  EXPECT_EQ(m.hidden, 12288);
}

TEST(ModelSpec, CustomModelFromFlags) {
  ModelOverrides o;
  o.layers = 4;
  o.hidden = 256;
  o.heads = 4;
  o.seq = 128;
  o.vocab = 0;
  const TransformerConfig m = resolve_model(source("", ""), o);
  EXPECT_EQ(m.ffn, 1024);  // 4h by default
  EXPECT_EQ(m.kv_heads, 4);
  o.vocab.reset();
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(source("", ""), o); }, {"--vocab", "custom model"}));
  o.vocab = 0;
  o.activation = MlpActivation::kSwiGlu;
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(source("", ""), o); }, {"--ffn", "swiglu"}));
  EXPECT_TRUE(throws_input_error([&] { (void)resolve_model(source("tiny", "x.json"), {}); }, {"--model", "--model-file"}));
}

TEST(ModelSpec, JsonRoundTripAndStrictKeys) {
  const TransformerConfig llama = find_preset("llama2-70b", "");
  const TransformerConfig back = model_from_json(model_to_json(llama), "model JSON");
  EXPECT_EQ(model_to_json(back), model_to_json(llama));

  nlohmann::json doc = {{"layers", 2}, {"hidden", 64}, {"heads", 4}, {"seq", 32}, {"vocab", 100}};
  EXPECT_EQ(model_from_json(doc, "m.json").ffn, 256);
  doc["hiden"] = 3;
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_json(doc, "m.json"); }, {"m.json: hiden", "unknown key"}));
  doc.erase("hiden");
  doc["heads"] = "four";
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_json(doc, "m.json"); }, {"m.json: heads", "whole number"}));
  doc["heads"] = 4;
  doc.erase("seq");
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_json(doc, "m.json"); }, {"m.json: seq", "missing"}));
}

TEST(ModelSpec, LoadsAFile) {
  const std::string path = ::testing::TempDir() + "commscale_model_test.json";
  {
    std::ofstream out(path);
    out << R"({"name": "mine", "layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 96,
               "activation": "swiglu", "seq": 32, "vocab": 0, "norm": "rmsnorm", "tied_embeddings": false})";
  }
  ModelOverrides o;
  o.layers = 6;
  const TransformerConfig m = resolve_model(source("", path), o);
  EXPECT_EQ(m.name, "mine");
  EXPECT_EQ(m.layers, 6);
  EXPECT_EQ(m.kv_heads, 2);
  EXPECT_EQ(m.activation, MlpActivation::kSwiGlu);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  std::remove(path.c_str());
  EXPECT_TRUE(throws_input_error([&] { (void)load_model_file(path); }, {"--model-file", "cannot read"}));
}

}  // namespace
}  // namespace commscale
