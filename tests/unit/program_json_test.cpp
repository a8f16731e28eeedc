// The step program's JSON form: a round trip keeps everything; bad documents are named precisely.

#include <gtest/gtest.h>

#include "input_error_matcher.hpp"
#include "parallel/program_builder.hpp"
#include "program/checker.hpp"
#include "program/program_json.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using nlohmann::json;
using testing::throws_input_error;

ProgramSet sample() {
  ParallelPlan p;
  p.dp = 2;
  p.tp = 2;
  p.pp = 2;
  p.global_batch = 4;
  p.zero_stage = 3;
  p.sequence_parallel = true;
  return build_program(CheckedPlan(find_preset("tiny", ""), p));
}

TEST(ProgramJson, RoundTripKeepsEverything) {
  const ProgramSet set = sample();
  const json doc = set;
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["programs"].size(), 2u);  // shared lists stay shared
  const ProgramSet back = doc.get<ProgramSet>();
  EXPECT_EQ(json(back), doc);
  EXPECT_TRUE(check_program(back).ok());
}

TEST(ProgramJson, HostCopiesRoundTrip) {
  ParallelPlan p;
  p.dp = 2;
  p.global_batch = 2;
  p.zero_stage = 3;
  p.offload_optimizer = OffloadDevice::kCpu;
  p.offload_params = OffloadDevice::kCpu;
  p.offload_activations = true;
  const ProgramSet set = build_program(CheckedPlan(find_preset("tiny", ""), p));
  const json doc = set;
  int to_host = 0;
  int to_device = 0;
  for (const json op : ops_of(set, 0)) {
    if (op["type"] != "host_copy") continue;
    (op["direction"] == "to_host" ? to_host : to_device) += 1;
    EXPECT_EQ(op["stream"], op["direction"] == "to_host" ? "d2h" : "h2d") << op["name"];
    EXPECT_GT(op["bytes"].get<std::uint64_t>(), 0u) << op["name"];
  }
  EXPECT_EQ(to_host, 8);             // each layer's activations, one microbatch
  EXPECT_EQ(to_device, 2 * 10 + 8);  // ten units' shards each way, the activations back
  EXPECT_EQ(json(doc.get<ProgramSet>()), doc);
  json bad = doc;
  for (json& op : bad["programs"][0]) {
    if (op["type"] == "host_copy") {
      op["direction"] = "sideways";
      break;
    }
  }
  EXPECT_TRUE(throws_input_error([&] { (void)bad.get<ProgramSet>(); }, {"direction", "\"sideways\"", "to_host"}));
}

TEST(ProgramJson, EagerKernelsAreMarked) {
  ParallelPlan p;
  p.global_batch = 2;
  p.kernels = KernelSet::kEager;
  const ProgramSet set = build_program(CheckedPlan(find_preset("tiny", ""), p));
  const json doc = set;
  int eager = 0;
  for (const json op : ops_of(set, 0)) {
    if (op.contains("kernels")) {
      EXPECT_EQ(op["kernels"], "eager") << op["name"];
      ++eager;
    }
  }
  EXPECT_GT(eager, 0);
  EXPECT_EQ(json(doc.get<ProgramSet>()), doc);
  // Fused kernels, the default, are not written.
  const ProgramSet fused = sample();
  for (const json op : ops_of(fused, 0)) EXPECT_FALSE(op.contains("kernels")) << op["name"];
}

TEST(ProgramJson, FlashProductsAfterTheFirstOfTheirKernelAreMarked) {
  ParallelPlan p;
  p.global_batch = 1;
  p.flash_attention = true;
  const ProgramSet set = build_program(CheckedPlan(find_preset("tiny", ""), p));
  // Per layer: forward QK^T (first) and PV; backward the recomputed QK^T (first) and four gradients.
  int first = 0;
  int continued = 0;
  int backward = 0;  // the backward kernel's five products, its first in the recompute phase
  for (const json op : ops_of(set, 0)) {
    if (!op.contains("flash")) continue;
    (op.contains("flash_continued") ? continued : first) += 1;
    if (op.contains("flash_backward")) {
      ++backward;
      EXPECT_EQ(op["phase"], op.contains("flash_continued") ? "bwd" : "recompute") << op["name"];
    }
  }
  EXPECT_GT(first, 0);
  EXPECT_EQ(continued, 5 * first / 2) << first;
  EXPECT_EQ(backward, 5 * first / 2) << first;
  const json doc = set;
  EXPECT_EQ(json(doc.get<ProgramSet>()), doc);
}

// A model that trains with dropout (tiny, GPT-style) marks its flash products so; without dropout
// (Llama-style) they carry no mark. Both come back from the JSON as they went in.
TEST(ProgramJson, FlashProductsSayWhetherTheirKernelHasDropout) {
  ParallelPlan p;
  p.global_batch = 1;
  p.flash_attention = true;
  for (const bool dropout : {true, false}) {
    TransformerConfig m = find_preset("tiny", "");
    m.dropout = dropout;
    const ProgramSet set = build_program(CheckedPlan(m, p));
    int flash = 0;
    for (const json op : ops_of(set, 0)) {
      if (!op.contains("flash")) continue;
      ++flash;
      EXPECT_EQ(op.contains("flash_dropout"), dropout) << op["name"];
    }
    EXPECT_GT(flash, 0);
    const json doc = set;
    EXPECT_EQ(json(doc.get<ProgramSet>()), doc);
  }
}

// Eager PyTorch's attention is its SDPA call: its flash products say so (the predictor's catalog figure
// for them is SDPA's), fused kernels' do not; the mark comes back from the JSON.
TEST(ProgramJson, FlashProductsOfEagerProgramsAreSdpas) {
  ParallelPlan p;
  p.global_batch = 1;
  p.flash_attention = true;
  for (const KernelSet kernels : {KernelSet::kEager, KernelSet::kFused}) {
    p.kernels = kernels;
    const ProgramSet set = build_program(CheckedPlan(find_preset("tiny", ""), p));
    int flash = 0;
    for (const json op : ops_of(set, 0)) {
      if (!op.contains("flash")) continue;
      ++flash;
      EXPECT_EQ(op.contains("flash_sdpa"), kernels == KernelSet::kEager) << op["name"];
    }
    EXPECT_GT(flash, 0);
    const json doc = set;
    EXPECT_EQ(json(doc.get<ProgramSet>()), doc);
  }
}

TEST(ProgramJson, OpFields) {
  const ProgramSet set = sample();
  const json op = ops_of(set, 0)[1];  // mb0.fwd.embedding waits for its ZeRO-3 parameter gather
  EXPECT_EQ(op["name"], "mb0.fwd.embedding");
  EXPECT_EQ(op["type"], "memory");
  EXPECT_EQ(op["kernel"], "embedding");
  EXPECT_EQ(op["stream"], "compute");
  EXPECT_EQ(op["deps"], json::array({0}));
  const json gather = ops_of(set, 0)[0];
  EXPECT_EQ(gather["type"], "collective");
  EXPECT_EQ(gather["collective"], "all_gather");
  EXPECT_EQ(gather["stream"], "dp");
  EXPECT_EQ(gather["group"], 1);
}

TEST(ProgramJson, RejectsBadDocuments) {
  json op = ops_of(sample(), 0)[1];
  op["strem"] = "compute";
  EXPECT_TRUE(throws_input_error([&] { (void)op.get<Op>(); }, {"op 'mb0.fwd.embedding'", "unknown key \"strem\""}));
  op.erase("strem");
  op["stream"] = "gpu";
  EXPECT_TRUE(throws_input_error([&] { (void)op.get<Op>(); }, {"stream", "\"gpu\"", "pp-send"}));
  op["stream"] = "compute";
  op["type"] = "fft";
  EXPECT_TRUE(
      throws_input_error([&] { (void)op.get<Op>(); }, {"type", "fft", "gemm, memory, collective, p2p or host_copy"}));
  op["type"] = "memory";
  op.erase("elements");
  EXPECT_TRUE(throws_input_error([&] { (void)op.get<Op>(); }, {"missing key \"elements\""}));
  json renamed = sample();
  renamed["ranks"][0]["groups"][0]["name"] = "x";  // groups are known by their role's name
  EXPECT_TRUE(throws_input_error(
      [&] { (void)renamed.get<ProgramSet>(); },
      {"a group's name", "unknown group \"x\"", "tp, dp, pp-fwd, pp-bwd, embedding, ep, edp, cp or etp"}));
  json doc = sample();
  doc["schema_version"] = 7;
  EXPECT_TRUE(throws_input_error([&] { (void)doc.get<ProgramSet>(); }, {"schema_version", "7"}));
}

}  // namespace
}  // namespace commscale
