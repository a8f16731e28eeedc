// Doctor's reporters against golden patterns (text, JSON, JSON Lines) and `commscale report`'s
// section for a doctor file, from a hand-made run: two nodes of one rank, a GEMM below expectation,
// pair transfers with a slow one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report/doctor_reporters.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

using predict::CheckStatus;
using predict::DoctorCheck;

DoctorCheck check(std::string phase, std::string name, std::string subject, double measured, double expected,
                  std::string link = "") {
  DoctorCheck c;
  c.phase = std::move(phase);
  c.check = std::move(name);
  c.subject = std::move(subject);
  c.place.host = "node-a";
  c.place.link = std::move(link);
  c.measured = measured;
  c.expected = expected;
  c.unit = c.check == "gemm" ? "TFLOP/s" : "GB/s";
  c.basis = "test";
  return predict::judge(c, 0.85);
}

DoctorReport run() {
  DoctorReport r;
  r.setup.context.commscale_version = "0.1.0";
  r.setup.context.git_sha = "abc";
  r.setup.context.backend = "cpu";
  r.setup.backend = "cpu";
  r.setup.hosts = {"node-a", "node-b"};
  r.setup.ranks = 2;
  r.setup.size = Bytes(16 << 20);
  r.setup.pair_size = Bytes(4 << 20);
  r.setup.pair_units = "nodes";
  r.setup.pair_unit_count = 2;
  r.setup.rounds = 1;
  r.setup.expectation_source = "--expect only";
  r.setup.phases = {"gpu", "pairs"};
  r.checks = {check("gpu", "gemm", "node-a rank 0 GPU 0 [0000:19:00.0]", 400.0, 791.6),
              predict::not_run("node", "copies", "node-b", "the CPU backend has no GPU to copy to"),
              check("pairs", "pair", "round 0: node-a -> node-b", 1.0, 1.0, "node-a -> node-b"),
              check("pairs", "pair", "round 0: node-b -> node-a", 0.1, 1.0, "node-b -> node-a")};
  r.suspects = predict::suspects_of(r.checks);
  r.suspects.push_back({"link", "node-b -> node-a", {}, "ran at 0.100 of expected"});
  r.phases = {{"gpu", 1.5, "each rank's GPU"}, {"pairs", 0.5, "1 round"}};
  r.verdict = predict::tally(r.checks);
  r.total_seconds = 2.0;
  return r;
}

void replay(const DoctorReport& r, DoctorReporter& out) {
  out.begin(r.setup);
  for (const DoctorPhaseTime& p : r.phases) {
    out.phase_begin(p.phase, p.what);
    for (const DoctorCheck& c : r.checks) {
      if (c.phase == p.phase) out.check(c);
    }
    out.phase_end(p);
  }
  out.end(r);
}

TEST(DoctorText, StatesEveryNumberTheThresholdAndTheVerdict) {
  std::ostringstream text;
  const auto reporter = make_text_doctor_reporter(text);
  replay(run(), *reporter);
  const std::string s = text.str();
  EXPECT_NE(s.find("# commscale 0.1.0 (abc) doctor: 2 ranks on 2 hosts, backend cpu"), std::string::npos) << s;
  EXPECT_NE(s.find("# expectations: --expect only"), std::string::npos);
  EXPECT_NE(s.find("(--min-ratio 0.85)"), std::string::npos);
  EXPECT_NE(s.find("# pair rounds: 2 nodes, 1 round (ceil(log2 2)), each pair timed both ways"), std::string::npos);
  // The GEMM row: status, check, subject, measured, expected, ratio, threshold, basis.
  EXPECT_NE(s.find("FAIL    gemm   node-a rank 0 GPU 0 [0000:19:00.0]  400 TFLOP/s  791.6 TFLOP/s  0.505  0.85  test"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("gpu   node-a rank 0 GPU 0 [0000:19:00.0]: gemm: 400 TFLOP/s against 791.6 expected (0.505 of it)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("link  node-b -> node-a: ran at 0.100 of expected"), std::string::npos) << s;
  EXPECT_NE(
      s.find("## verdict: FAIL: 2 of 3 judged checks below expectation (exit code 6); 0 shown unjudged, 1 not run"),
      std::string::npos)
      << s;
}

TEST(DoctorJson, ADocumentWithContextChecksSuspectsAndVerdict) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "doctor_json";
  std::filesystem::create_directories(dir);
  const DoctorReport r = run();
  {
    const auto json = make_json_doctor_reporter((dir / "doctor.json").string());
    const auto lines = make_jsonl_doctor_reporter((dir / "doctor.jsonl").string());
    replay(r, *json);
    replay(r, *lines);
  }
  std::ifstream in(dir / "doctor.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc.at("schema_version"), 1);
  EXPECT_EQ(doc.at("kind"), "commscale-doctor");
  EXPECT_EQ(doc.at("complete"), true);
  EXPECT_EQ(doc.at("context").at("git_sha"), "abc");
  EXPECT_EQ(doc.at("config").at("rounds"), 1);
  ASSERT_EQ(doc.at("checks").size(), 3u);  // the not-run check belongs to no phase of the replay
  const nlohmann::json& gemm = doc.at("checks").at(0);
  EXPECT_EQ(gemm.at("status"), "FAIL");
  EXPECT_DOUBLE_EQ(gemm.at("ratio").get<double>(), 400.0 / 791.6);
  EXPECT_DOUBLE_EQ(gemm.at("threshold").get<double>(), 0.85);
  EXPECT_EQ(doc.at("verdict").at("exit_code"), 6);
  EXPECT_EQ(doc.at("suspects").size(), 2u);

  std::ifstream jl(dir / "doctor.jsonl");
  std::vector<std::string> records;
  for (std::string line; std::getline(jl, line);) records.push_back(nlohmann::json::parse(line).at("record"));
  EXPECT_EQ(records, (std::vector<std::string>{"header", "check", "phase", "check", "check", "phase", "suspect",
                                               "suspect", "verdict"}));

  // `commscale report` renders it: the verdict, the suspects and the pair heatmap.
  const LoadedResults loaded = load_results({(dir / "doctor.json").string()});
  ASSERT_EQ(loaded.files.size(), 1u);
  EXPECT_EQ(loaded.files[0].kind, ResultKind::kDoctor);
  const std::vector<HtmlSection> sections = doctor_sections({&loaded.files[0]});
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].paragraphs.at(0).rfind("Verdict: FAIL (exit code 6)", 0), 0u) << sections[0].paragraphs[0];
  EXPECT_EQ(sections[0].charts.size(), 1u);
  EXPECT_EQ(sections[0].tables.at(0).rows.size(), 2u);  // the suspects
  EXPECT_EQ(sections[0].tables.at(1).rows.size(), 3u);  // the checks
}

}  // namespace
}  // namespace commscale
