// The bench reporters against golden patterns: the nccl-tests-style table, the JSON document and
// the CSV lines, from hand-made rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "report/bench_reporters.hpp"

namespace commscale {
namespace {

BenchSetup two_rank_setup() {
  BenchSetup s;
  s.context.commscale_version = "0.1.0";
  s.context.git_sha = "abc123";
  s.context.backend = "gpu";
  s.context.comm_library = "NCCL 2.28.3";
  s.context.hosts = {"node01"};
  for (int r = 0; r < 2; ++r) {
    RankPlacement p;
    p.rank = r;
    p.local_rank = r;
    p.pid = 100 + r;
    p.host = "node01";
    p.device = r;
    p.gpu_name = "NVIDIA H200";
    p.pci_bus_id = r == 0 ? "0000:19:00.0" : "0000:3B:00.0";
    s.context.ranks.push_back(p);
  }
  s.options.collectives = {Collective::kAllReduce};
  s.group_size = 2;
  s.group_ranks = {{0, 1}};
  s.timing = "CUDA events";
  return s;
}

PlacementResult placement(double time_us, double busbw, std::uint64_t wrong) {
  PlacementResult p;
  p.time_us = time_us;
  p.samples_us = {time_us - 1, time_us, time_us + 1};
  p.sample_stats = summarize(p.samples_us);
  p.algbw = GBps(busbw);
  p.busbw = GBps(busbw);
  p.wrong = wrong;
  p.checked = true;
  return p;
}

BenchRow all_reduce_row() {
  BenchRow row;
  row.collective = Collective::kAllReduce;
  row.type = DataType::kBFloat16;
  row.op = ReduceOp::kSum;
  row.size = Bytes(4 * kGiB);
  row.count = 2 * kGiB;
  row.out_of_place = placement(12417.5, 345.87, 0);
  row.in_place = placement(12400.25, 346.36, 0);
  row.in_place.checked = false;
  return row;
}

TEST(TextReporter, NcclTestsColumnsHeaderRowsAndFooter) {
  std::ostringstream out;
  auto text = make_text_bench_reporter(out);
  text->begin(two_rank_setup());
  text->row(all_reduce_row());
  text->end(BenchSummary{172.5, 0, true, {}});
  const std::string s = out.str();
  EXPECT_NE(s.find("# commscale 0.1.0 (abc123) bench: 2 ranks on 1 host, backend gpu (NCCL 2.28.3)"), std::string::npos);
  EXPECT_NE(s.find("#  Rank  1 Group  0 Pid    101 on     node01 device  1 [0000:3B:00.0] NVIDIA H200"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("# Collective: all_reduce\n"), std::string::npos);
  // nccl-tests' first 13 columns, right-aligned as it prints them (an unchecked placement says N/A),
  // then median, p99 and CV of each placement's samples.
  EXPECT_NE(s.find("\n  4294967296    2147483648      bf16     sum      -1  12417.5  345.87  345.87       0  12400.2  "
                   "346.36  346.36     N/A  12417.5  12418.5    0.0  12400.2  12401.2    0.0\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("# Out of bounds values : 0 OK\n"), std::string::npos);
  EXPECT_NE(s.find("# Avg bus bandwidth    : 172.5 OK\n"), std::string::npos);
}

TEST(TextReporter, FooterSaysFailed) {
  std::ostringstream out;
  auto text = make_text_bench_reporter(out);
  text->begin(two_rank_setup());
  text->end(BenchSummary{1.5, 7, false, {}});
  EXPECT_NE(out.str().find("# Out of bounds values : 7 FAILED"), std::string::npos);
  EXPECT_NE(out.str().find("# Avg bus bandwidth    : 1.5 FAILED"), std::string::npos);
}

// `bench all`: each collective's table ends with its own footer, as one nccl-tests binary per
// collective prints it, and no average over all collectives is printed.
TEST(TextReporter, OneFooterPerCollective) {
  std::ostringstream out;
  auto text = make_text_bench_reporter(out);
  text->begin(two_rank_setup());
  text->row(all_reduce_row());
  text->collective_end({Collective::kAllReduce, 345.0, 0, true});
  BenchRow gather = all_reduce_row();
  gather.collective = Collective::kAllGather;
  gather.op.reset();
  text->row(gather);
  text->collective_end({Collective::kAllGather, 20.5, 0, true});
  text->end(BenchSummary{182.75, 0, true, {}});
  const std::string s = out.str();
  const std::size_t gather_table = s.find("# Collective: all_gather\n");
  const std::size_t first = s.find("# Avg bus bandwidth    : 345 OK\n");
  const std::size_t second = s.find("# Avg bus bandwidth    : 20.5 OK\n");
  ASSERT_NE(gather_table, std::string::npos) << s;
  ASSERT_NE(first, std::string::npos) << s;
  ASSERT_NE(second, std::string::npos) << s;
  EXPECT_LT(first, gather_table);
  EXPECT_GT(second, gather_table);
  EXPECT_EQ(s.find("182.75"), std::string::npos) << s;
  EXPECT_EQ(s.find("local copies"), std::string::npos) << s;
}

// One rank: the header and the footer say that the numbers are local copies.
TEST(TextReporter, OneRankSaysLocalCopies) {
  std::ostringstream out;
  auto text = make_text_bench_reporter(out);
  BenchSetup setup = two_rank_setup();
  setup.context.ranks.resize(1);
  setup.group_size = 1;
  setup.group_ranks = {{0}};
  text->begin(setup);
  text->row(all_reduce_row());
  text->collective_end({Collective::kAllReduce, 0.0, 0, true});
  text->end(BenchSummary{0.0, 0, true, {}});
  const std::string s = out.str();
  EXPECT_NE(s.find("# One rank per group: every collective here is a local copy on one GPU (no communication"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("# Avg bus bandwidth    : 0 OK (one rank: local copies only)\n"), std::string::npos) << s;
}

TEST(JsonReporter, SchemaContextRowsAndCompletion) {
  const std::string path = (std::filesystem::temp_directory_path() / "commscale_report_test.json").string();
  std::filesystem::remove(path);
  auto json = make_json_bench_reporter(path);
  json->begin(two_rank_setup());
  json->row(all_reduce_row());
  // Written after every row (by a writer thread, core/file_rewriter.hpp: waited for here, 10 s at most):
  // an interrupted run leaves a valid file that says it is incomplete.
  nlohmann::json partial = nlohmann::json::object();
  for (int wait = 0; wait < 1000 && partial.value("results", nlohmann::json::array()).size() != 1; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    partial = nlohmann::json::parse(std::ifstream(path), nullptr, false);  // discarded while not there yet
    if (partial.is_discarded()) partial = nlohmann::json::object();
  }
  EXPECT_EQ(partial["complete"], false);
  EXPECT_EQ(partial["results"].size(), 1u);
  json->end(BenchSummary{172.5, 0, true, {}});
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(doc["schema_version"], kBenchSchemaVersion);
  EXPECT_EQ(doc["kind"], "commscale-bench");
  EXPECT_EQ(doc["complete"], true);
  EXPECT_EQ(doc["context"]["ranks"][1]["gpu"]["pci_bus_id"], "0000:3B:00.0");
  EXPECT_EQ(doc["config"]["iters"], 20);
  const nlohmann::json& row = doc["results"][0];
  EXPECT_EQ(row["collective"], "all_reduce");
  EXPECT_EQ(row["type"], "bf16");
  EXPECT_EQ(row["redop"], "sum");
  EXPECT_TRUE(row["root"].is_null());
  EXPECT_EQ(row["size_bytes"], 4 * kGiB);
  EXPECT_DOUBLE_EQ(row["out_of_place"]["busbw_GBps"], 345.87);
  EXPECT_DOUBLE_EQ(row["out_of_place"]["time_us"], 12417.5);
  EXPECT_DOUBLE_EQ(row["out_of_place"]["samples"]["median_us"], 12417.5);
  EXPECT_EQ(row["out_of_place"]["samples_us"].size(), 3u);
  EXPECT_EQ(row["out_of_place"]["wrong"], 0);
  EXPECT_TRUE(row["in_place"]["wrong"].is_null());  // not checked
  EXPECT_EQ(doc["summary"]["passed"], true);
  EXPECT_TRUE(doc["summary"]["collectives"].is_array());
  std::filesystem::remove(path);
}

TEST(CsvReporter, OneLinePerPlacement) {
  const std::vector<std::string> lines = bench_csv_lines(all_reduce_row(), 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "all_reduce,bf16,sum,,4294967296,2147483648,2,out_of_place,12417.500,12417.500,12416.500,12418.500,"
            "12418.500,0.00007,345.8700,345.8700,0");
  EXPECT_EQ(lines[1].substr(0, 48), "all_reduce,bf16,sum,,4294967296,2147483648,2,in_");
  EXPECT_EQ(lines[1].back(), ',');  // not checked: empty
  const std::string header = bench_csv_header();
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(lines[0].begin(), lines[0].end(), ','));
}

}  // namespace
}  // namespace commscale
