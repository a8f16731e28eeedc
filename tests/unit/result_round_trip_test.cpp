// The rest of what `commscale report` reads, after result_from_json_test.cpp: the model block of a
// train, predict or plan file, the plan summary (`plan --json`), the topo file and the Chrome trace.
// For each, to_json(from_json(doc)) == doc on a realistic file (a committed result where there is
// one, else one the writer makes from a real plan or discovery), and a missing or wrong-typed key is
// an InputError naming the file and the key.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "discovery_fixtures.hpp"
#include "hw/json_reader.hpp"
#include "input_error_matcher.hpp"
#include "parallel/plan_summary.hpp"
#include "parallel/prepared_step.hpp"
#include "parallel/program_builder.hpp"
#include "report/chrome_trace.hpp"
#include "report/topo_reporters.hpp"
#include "workload/model_spec.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;

JsonAt at_file_root(const nlohmann::json& j) { return JsonAt(j, "f.json: "); }

nlohmann::json committed(const std::string& path) {
  return hw::read_json_file(std::string(COMMSCALE_SOURCE_DIR) + "/" + path);
}

TEST(ResultRoundTrip, ModelBlockOfEveryPreset) {
  for (const TransformerConfig& m : model_presets()) {
    const nlohmann::json doc = {{"model", model_to_json(m)}};
    const TransformerConfig back = model_from_json(at_file_root(doc).at("model"));
    EXPECT_EQ(back, m) << m.name;
    EXPECT_EQ(model_to_json(back), doc["model"]) << m.name;
  }
}

TEST(ResultRoundTrip, ModelBlockOfCommittedFiles) {
  // A train file of today, and a prediction written before dropout was a model property: it has no
  // "dropout" key, and every model had dropout then.
  const nlohmann::json train = committed("tests/data/results/h200x1-2026-12-02b/run-2/train/hostfw-q05-s512-mb1-flash.json");
  EXPECT_EQ(model_to_json(model_from_json(at_file_root(train).at("model"))), train["model"]);
  const nlohmann::json old = committed("tests/data/results/h200x1-2026-12-01/accuracy/predictions/pytorch-block8-mb1_cal.json");
  ASSERT_FALSE(old["model"].contains("dropout"));
  const TransformerConfig m = model_from_json(at_file_root(old).at("model"));
  EXPECT_TRUE(m.dropout);
  nlohmann::json with_dropout = old["model"];
  with_dropout["dropout"] = true;
  EXPECT_EQ(model_to_json(m), with_dropout);
}

TEST(ResultRoundTrip, ModelBlockNamesAMissingOrWrongTypedKey) {
  nlohmann::json doc = {{"model", model_to_json(find_preset("tiny", ""))}};
  doc["model"].erase("heads");
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_json(at_file_root(doc).at("model")); },
                                 {"f.json: model: heads", "missing"}));
  doc["model"]["heads"] = "8";
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_json(at_file_root(doc).at("model")); },
                                 {"f.json: model: heads", "not a whole number"}));
  doc.erase("model");
  EXPECT_TRUE(throws_input_error([&] { (void)model_from_json(at_file_root(doc).at("model")); },
                                 {"f.json: model", "is missing"}));
}

// `plan --json` of a 3-D plan of tiny (pp 2: two stages, traffic on tp, dp and pp groups).
nlohmann::json plan_doc(std::optional<Bytes> gpu_memory) {
  ParallelPlan p;
  p.dp = 2;
  p.tp = 2;
  p.pp = 2;
  p.global_batch = 8;
  const PreparedStep step = prepare_step(CheckedPlan(find_preset("tiny", ""), p), {}, gpu_memory);
  return summary_to_json(step.summary);
}

TEST(ResultRoundTrip, PlanSummary) {
  for (const std::optional<Bytes> memory : {std::optional<Bytes>(), std::optional(Bytes(80 * kGiB)),
                                            std::optional(Bytes(kGiB))}) {
    const nlohmann::json doc = plan_doc(memory);
    const PlanSummary s = summary_from_json(at_file_root(doc));
    EXPECT_EQ(summary_to_json(s), doc);
    EXPECT_EQ(s.fit.has_value(), memory.has_value());
  }
  const PlanSummary tight = summary_from_json(at_file_root(plan_doc(Bytes(kGiB))));
  ASSERT_TRUE(tight.fit);
  EXPECT_FALSE(tight.fit->fits);  // 2 GiB of workspace alone does not fit in 1 GiB
  EXPECT_EQ(tight.fit->worst_total, largest_total(tight.memory));
  EXPECT_EQ(tight.stages.size(), 2u);
}

TEST(ResultRoundTrip, PlanSummaryNamesAMissingWrongTypedOrDisagreeingKey) {
  const nlohmann::json good = plan_doc(Bytes(80 * kGiB));
  nlohmann::json doc = good;
  doc["memory_per_rank"][1].erase("weights_bytes");
  EXPECT_TRUE(throws_input_error([&] { (void)summary_from_json(at_file_root(doc)); },
                                 {"f.json: memory_per_rank[1].weights_bytes", "is missing"}));
  doc = good;
  doc["fit"]["fits"] = "yes";
  EXPECT_TRUE(throws_input_error([&] { (void)summary_from_json(at_file_root(doc)); },
                                 {"f.json: fit.fits", "is a JSON string", "true or false"}));
  doc = good;
  doc["world_size"] = 16;
  EXPECT_TRUE(throws_input_error([&] { (void)summary_from_json(at_file_root(doc)); },
                                 {"f.json: world_size", "is 16", "expected 8, dp × tp × pp"}));
  doc = good;
  doc["program_deadlock_free"] = false;
  EXPECT_TRUE(throws_input_error([&] { (void)summary_from_json(at_file_root(doc)); },
                                 {"f.json: program_deadlock_free", "as program_problems says"}));
}

TEST(ResultRoundTrip, TopoFile) {
  // The committed discovery of the H200 machine, and what topo writes for machines not at hand.
  const nlohmann::json h200 = committed("tests/data/results/h200x1-2026-12-02/run-1/main/topo.json");
  EXPECT_EQ(nlohmann::json(topo_from_json(at_file_root(h200))), h200);
  RunContext context;
  context.hosts = {"node01"};
  for (const MachineDiscovery& m : {testing::hgx_h100(), testing::rtx4090x2(), testing::h200x2(), MachineDiscovery{}}) {
    const nlohmann::json doc = topo_json(m, context);
    const TopoFile t = topo_from_json(at_file_root(doc));
    EXPECT_EQ(nlohmann::json(t), doc) << m.gpus.size() << " GPUs";
    EXPECT_EQ(t.gpus, m.gpus);
  }
  const TopoFile hgx = topo_from_json(at_file_root(topo_json(testing::hgx_h100(), context)));
  ASSERT_EQ(hgx.pairs.size(), 8u * 7u);
  EXPECT_EQ(hgx.pairs[0].link, "NV18");
  EXPECT_TRUE(hgx.pairs[0].via_nvswitch);
}

TEST(ResultRoundTrip, TopoFileNamesAMissingWrongTypedOrUnknownValue) {
  const nlohmann::json good = topo_json(testing::hgx_h100(), RunContext{});
  nlohmann::json doc = good;
  doc["gpus"][2].erase("pcie_max");
  EXPECT_TRUE(
      throws_input_error([&] { (void)topo_from_json(at_file_root(doc)); }, {"f.json: gpus[2].pcie_max", "is missing"}));
  doc = good;
  doc["pairs"][3]["can_access_peer"] = 1;
  EXPECT_TRUE(throws_input_error([&] { (void)topo_from_json(at_file_root(doc)); },
                                 {"f.json: pairs[3].can_access_peer", "is a JSON number", "true or false"}));
  doc = good;
  doc["gpus"][1]["nvlinks"][0]["remote"] = "switch";
  EXPECT_TRUE(throws_input_error([&] { (void)topo_from_json(at_file_root(doc)); },
                                 {"f.json: gpus[1].nvlinks[0].remote", "\"switch\"", "nvswitch"}));
}

// Two timed steps of tiny under pp 2 (every stream that has ops), each op 1 µs after the last.
nlohmann::json trace_doc() {
  ParallelPlan p;
  p.pp = 2;
  p.global_batch = 4;
  const ProgramSet set = build_program(CheckedPlan(find_preset("tiny", ""), p));
  Timeline t{"executor", set.world_size, 2, {}};
  for (int step = 0; step < 2; ++step) {
    for (int rank = 0; rank < set.world_size; ++rank) {
      for (OpId op = 0; op < ops_of(set, rank).size(); ++op) {
        const double start = 1e-6 * static_cast<double>(op);
        t.events.push_back({rank, step, op, Seconds(start), Seconds(start + 0.5e-6)});
      }
    }
  }
  return chrome_trace(set, t);
}

TEST(ResultRoundTrip, ChromeTrace) {
  const nlohmann::json doc = trace_doc();
  const ChromeTrace trace = chrome_trace_from_json(at_file_root(doc));
  EXPECT_EQ(nlohmann::json(trace), doc);
  EXPECT_EQ(trace.engine, "executor");
  ASSERT_FALSE(trace.ops.empty());
  EXPECT_EQ(trace.ops.back().step, 1);
  EXPECT_FALSE(trace.ops.front().annotations.contains("step"));  // step is a field, not an annotation
  const nlohmann::json measured = committed("tests/data/results/h200x1-2026-12-02b/run-2/train/trace-q05-s512-mb1-flash.json");
  EXPECT_EQ(nlohmann::json(chrome_trace_from_json(at_file_root(measured))), measured);
}

TEST(ResultRoundTrip, ChromeTraceOfAnotherToolReadsAsTheReportDrawsIt) {
  const nlohmann::json doc = {{"traceEvents",
                               {{{"ph", "M"}, {"name", "process_sort_index"}, {"pid", 7}, {"args", {{"sort_index", 1}}}},
                                {{"ph", "M"}, {"name", "thread_name"}, {"pid", 7}, {"tid", 3}, {"args", {{"name", "s7"}}}},
                                {{"ph", "i"}, {"name", "marker"}, {"pid", "host"}},
                                {{"ph", "X"}, {"pid", 7}, {"tid", 3}, {"ts", 10}, {"args", {{"grid", 3}}}}}}};
  const ChromeTrace t = chrome_trace_from_json(at_file_root(doc));
  ASSERT_EQ(t.names.size(), 1u);  // the sort index is no name
  EXPECT_EQ(t.names[0], (TraceName{7, 3, "s7"}));
  ASSERT_EQ(t.ops.size(), 1u);  // the instant event is passed over
  EXPECT_EQ(t.ops[0].name, "op");
  EXPECT_EQ(t.ops[0].category, "op");
  EXPECT_EQ(t.ops[0].step, 0);
  EXPECT_EQ(t.ops[0].duration_us, 0.0);
  EXPECT_EQ(t.ops[0].annotations, nlohmann::json({{"grid", 3}}));
  EXPECT_FALSE(t.engine);
}

TEST(ResultRoundTrip, ChromeTraceNamesAMissingOrWrongTypedKey) {
  const nlohmann::json good = trace_doc();
  const std::size_t op = good["traceEvents"].size() - 1;
  nlohmann::json doc = good;
  doc["traceEvents"][op].erase("ts");
  EXPECT_TRUE(throws_input_error([&] { (void)chrome_trace_from_json(at_file_root(doc)); },
                                 {"f.json: traceEvents[" + std::to_string(op) + "].ts", "is missing"}));
  doc = good;
  doc["traceEvents"][op]["pid"] = "0";
  EXPECT_TRUE(throws_input_error([&] { (void)chrome_trace_from_json(at_file_root(doc)); },
                                 {"f.json: traceEvents[" + std::to_string(op) + "].pid", "is a JSON string"}));
}

}  // namespace
}  // namespace commscale
