// `commscale report`'s pieces: escaping, axes (derivations in the comments), the SVG charts and the
// HTML page checked for well-formed structure, the result-file reader's errors, the busbw ceiling's
// rules, a page from the committed H200 results, and the progress line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "input_error_matcher.hpp"

#include "report/charts.hpp"
#include "report/html_report.hpp"
#include "report/progress.hpp"
#include "workload/model_spec.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

// The markup is well formed: every element opened is closed in order (HTML's void elements and
// "<!...>" aside), attribute values are quoted, and no '<' or '&' appears unescaped in text.
::testing::AssertionResult well_formed(const std::string& markup) {
  std::vector<std::string> open;
  std::size_t i = 0;
  const auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure() << why << " at offset " << i << ": ..." << markup.substr(i, 60);
  };
  while (i < markup.size()) {
    const char c = markup[i];
    if (c == '&') {
      const std::size_t semi = markup.find(';', i);
      if (semi == std::string::npos || semi - i > 8) return fail("bare &");
      i = semi + 1;
      continue;
    }
    if (c != '<') {
      ++i;
      continue;
    }
    if (markup.compare(i, 8, "<script>") == 0) {  // script text is not markup
      const std::size_t end = markup.find("</script>", i);
      if (end == std::string::npos) return fail("unclosed script");
      i = end + 9;
      continue;
    }
    if (markup.compare(i, 2, "<!") == 0) {
      i = markup.find('>', i) + 1;
      continue;
    }
    const bool closing = markup[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    const std::size_t name_start = j;
    while (j < markup.size() && (std::isalnum(static_cast<unsigned char>(markup[j])) || markup[j] == '-')) ++j;
    const std::string name = markup.substr(name_start, j - name_start);
    if (name.empty()) return fail("bare <");
    // Attributes: name="value" pairs up to '>' or '/>'.
    bool self_closing = false;
    while (j < markup.size() && markup[j] != '>') {
      if (markup[j] == '"') {
        const std::size_t q = markup.find('"', j + 1);
        const std::string value = markup.substr(j + 1, q - j - 1);
        if (value.find('<') != std::string::npos) return fail("< in an attribute");
        j = q + 1;
        continue;
      }
      if (markup[j] == '/' && markup[j + 1] == '>') self_closing = true;
      ++j;
    }
    i = j + 1;
    static const std::vector<std::string> kVoid = {"meta", "br", "hr", "img", "link", "input"};
    if (self_closing || std::find(kVoid.begin(), kVoid.end(), name) != kVoid.end()) continue;
    if (!closing) {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return fail("</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">"));
    } else {
      open.pop_back();
    }
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> never closed";
  return ::testing::AssertionSuccess();
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(ReportSvg, EscapesMarkupCharacters) {
  EXPECT_EQ(xml_escape(R"(<a href="x">Tom & Jerry's</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  EXPECT_EQ(short_bytes(8), "8 B");
  EXPECT_EQ(short_bytes(1024), "1 KiB");
  EXPECT_EQ(short_bytes(1.5 * 1024 * 1024), "1.5 MiB");
  EXPECT_EQ(short_bytes(4.0 * 1024 * 1024 * 1024), "4 GiB");
  EXPECT_EQ(short_number(343.71), "344");
  EXPECT_EQ(short_number(0.25), "0.25");
  EXPECT_EQ(short_number(123456), "123456");
}

// Issue 36, case 16: a result file named like a script URL must stay a relative file link, and
// figures of 1e308 or NaN must not write "inf" or "nan" into the SVG.
TEST(ReportHtml, FileLinksStayRelativeWhateverTheirName) {
  HtmlPage page;
  page.title = "links";
  HtmlSection s;
  s.id = "trace";
  s.title = "trace";
  s.links.emplace_back("trace", "javascript:alert(document.domain)");
  s.links.emplace_back("perfetto", "https://ui.perfetto.dev/");
  page.sections.push_back(s);
  const std::string html = render_html(page);
  EXPECT_EQ(html.find("href=\"javascript:"), std::string::npos) << html;
  EXPECT_NE(html.find("href=\"javascript%3Aalert%28document.domain%29\""), std::string::npos) << html;
  EXPECT_NE(html.find("href=\"https://ui.perfetto.dev/\""), std::string::npos) << html;
}

TEST(ReportSvg, NonFiniteGeometryIsNeverWritten) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SvgWriter svg(inf, 100, "huge");
  svg.rect(0, 0, inf, nan, "#000");
  svg.line(-inf, 0, 1e308, 1, "#000");
  svg.circle(nan, 1, 2, "#000");
  svg.polyline({{inf, 1}, {2, nan}}, "#000");
  svg.text(inf, 1, "x");
  const std::string out = svg.str();
  EXPECT_EQ(out.find("inf"), std::string::npos) << out;
  EXPECT_EQ(out.find("nan"), std::string::npos) << out;
  EXPECT_NE(out.find(R"(x2="10000000.00")"), std::string::npos) << out;  // 1e308 clamped; inf drawn at 0
}

TEST(ReportSvg, LinearAxisEndsOnANiceNumber) {
  // 343.7 / 5 = 68.7, the next of 1, 2, 2.5, 5 x 10^k is 100: 0 to 400 by 100.
  const Axis a = linear_axis(0, 343.7);
  EXPECT_DOUBLE_EQ(a.lo, 0.0);
  EXPECT_DOUBLE_EQ(a.hi, 400.0);
  EXPECT_EQ(a.ticks, (std::vector<double>{0, 100, 200, 300, 400}));
  // 1.2 / 5 = 0.24 -> 0.25: 0 to 1.25, six ticks.
  const Axis b = linear_axis(0, 1.2);
  EXPECT_DOUBLE_EQ(b.hi, 1.25);
  EXPECT_EQ(b.ticks.size(), 6u);
  EXPECT_DOUBLE_EQ(b.fraction(0.625), 0.5);
  // No data: 0 to 1.
  EXPECT_DOUBLE_EQ(linear_axis(0, 0).hi, 1.0);
}

TEST(ReportSvg, Log2AxisCoversTheDataOnPowersOfTwo) {
  // 8 B = 2^3 to 4 GiB = 2^32: 29 octaves, a tick every ceil(29 / 8) = 4: 2^3, 2^7, ..., 2^31.
  const Axis a = log2_axis(8, 4.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(a.lo, 8.0);
  EXPECT_DOUBLE_EQ(a.hi, 4294967296.0);
  ASSERT_EQ(a.ticks.size(), 8u);
  EXPECT_DOUBLE_EQ(a.ticks[1], 128.0);
  // 64 sits halfway between 8 (2^3) and 512 (2^9).
  const Axis b = log2_axis(8, 512);
  EXPECT_DOUBLE_EQ(b.fraction(64), 0.5);
  // One point still spans an octave; 12 rounds out to 8..16.
  const Axis c = log2_axis(12, 12);
  EXPECT_DOUBLE_EQ(c.lo, 8.0);
  EXPECT_DOUBLE_EQ(c.hi, 16.0);
}

TEST(ReportSvg, LineChartDrawsEverySeriesAndTheCeiling) {
  LineChart chart{"all_reduce <nvlink> & more",
                  "size",
                  "busbw",
                  AxisScale::kLog2,
                  true,
                  {{"a", {{8, 1}, {1024, 100}, {1 << 20, 300}}}, {"b \"quoted\"", {{8, 2}, {1 << 20, 200}}}},
                  {{450, "NV18 line rate 450 GB/s"}}};
  const std::string svg = line_chart_svg(chart);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "<circle"), 5u);
  EXPECT_NE(svg.find("all_reduce &lt;nvlink&gt; &amp; more"), std::string::npos);
  EXPECT_NE(svg.find("b &quot;quoted&quot;"), std::string::npos);
  EXPECT_EQ(count(svg, "stroke-dasharray"), 1u);
  // The y axis reaches the ceiling: 450 / 5 = 90 -> 100, so it ends at 500.
  EXPECT_NE(svg.find(">500</text>"), std::string::npos);
  // x from 2^3 to 2^20: 17 octaves, a tick every ceil(17 / 8) = 3: 8 B, 64 B, ..., 2^18 = 256 KiB.
  EXPECT_NE(svg.find(">256 KiB</text>"), std::string::npos);
}

TEST(ReportSvg, StackedBarsAreProportional) {
  // Totals 4 and 2: the axis is 0..4 (4 / 5 = 0.8 -> 1), the plot 710 units wide (20 to 730), so a
  // 2 s segment is 355 units and a 1 s one 177.5.
  StackedBars bars{"step",
                   "seconds",
                   {{"measured", {{"compute", 2}, {"exposed dp", 1}, {"bubble", 1}}},
                    {"predicted", {{"compute", 1}, {"exposed dp", 1}}}}};
  const std::string svg = stacked_bars_svg(bars);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_NE(svg.find(R"(width="355.00")"), std::string::npos);
  EXPECT_EQ(count(svg, R"(width="177.50")"), 4u);  // exposed dp, bubble, and both segments of the second bar
  EXPECT_EQ(count(svg, "#BBBBBB"), 2u);            // the bubble and its legend entry
}

// A bar's label is a line of its own above the bar, starting at the plot's left edge (x 20), and the
// chart widens to the longest: 150 characters at 12 units, 0.62 em each, is 1116 units, + 20 + 20.
TEST(ReportSvg, StackedBarLabelsAreNeverCut) {
  const std::string label(150, 'x');
  const std::string svg = stacked_bars_svg({"step", "seconds", {{label, {{"compute", 1}}}}});
  EXPECT_NE(svg.find(R"(<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="1156")"), std::string::npos)
      << svg.substr(0, 200);
  EXPECT_NE(svg.find(R"(<text x="20.00" y="46.00" font-size="12" text-anchor="start" fill="#222">)" + label),
            std::string::npos);
}

// One GPU: a single column of 78 units would leave the caption under it cut off at 320 units; the
// chart is as wide as the caption at 11 units (0.62 em a character) from x 90, + 20.
TEST(ReportSvg, HeatmapIsWideEnoughForItsCaption) {
  const std::string svg = heatmap_svg({"p2p: copy-engine bandwidth", "GB/s", {"GPU 0"}, {"GPU 0"}, {{std::nullopt}}});
  const std::string caption = "GB/s (darker: higher; from rows to columns)";  // 43 characters: 293.26 units
  EXPECT_NE(svg.find(R"(width="403")"), std::string::npos) << svg.substr(0, 200);
  EXPECT_NE(svg.find(caption), std::string::npos);
}

// Log-log: tokens/s from 1000 to 64000 on a base-2 axis runs from 2^9 = 512 to 2^16 = 65536; a
// line of slope 1 (throughput doubling with GPUs) is then straight.
TEST(ReportSvg, LineChartOnLogLogAxes) {
  LineChart chart{
      "throughput", "GPUs",          "tokens/s", AxisScale::kLog2, false, {{"a", {{1, 1000}, {64, 64000}, {8, 0}}}},
      {},           AxisScale::kLog2};
  const std::string svg = line_chart_svg(chart);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_NE(svg.find(">512</text>"), std::string::npos);
  EXPECT_NE(svg.find(">65536</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "<circle"), 2u);  // the point at 0 tokens/s has no place on a log axis
}

// Every field in which two plans differ is in the label (`search` ranks plans that differ only in one).
TEST(ReportPlan, LabelNamesEveryFieldThatTellsPlansApart) {
  const nlohmann::json base = {{"dp", 2},
                               {"tp", 2},
                               {"pp", 2},
                               {"sequence_parallel", false},
                               {"zero_stage", 0},
                               {"recompute", "none"},
                               {"flash_attention", false},
                               {"kernels", "fused"},
                               {"micro_batch", 1},
                               {"global_batch", 16},
                               {"schedule", "interleaved"},
                               {"chunks", 1},
                               {"order", "tp-dp-pp"},
                               {"bucket_bytes", 25 * 1024 * 1024}};
  const auto label = [](const nlohmann::json& p) { return plan_label(plan_from_json(JsonAt(p, "plan"))); };
  EXPECT_EQ(label(base), "dp 2 × tp 2 × pp 2, interleaved, micro-batch 1, global 16");
  const std::vector<std::pair<std::string, nlohmann::json>> changes = {
      {"recompute", "selective"}, {"sequence_parallel", true}, {"flash_attention", true}, {"chunks", 2},
      {"kernels", "eager"},       {"zero_stage", 1},           {"order", "dp-tp-pp"},     {"bucket_bytes", 1 << 20}};
  std::vector<std::string> labels{label(base)};
  for (const auto& [key, value] : changes) {
    nlohmann::json p = base;
    p[key] = value;
    labels.push_back(label(p));
  }
  EXPECT_EQ(labels[1], "dp 2 × tp 2 × pp 2, interleaved, micro-batch 1, global 16, recompute selective");
  EXPECT_EQ(labels[4], "dp 2 × tp 2 × pp 2, interleaved × 2 chunks, micro-batch 1, global 16");
  std::sort(labels.begin(), labels.end());
  EXPECT_EQ(std::unique(labels.begin(), labels.end()), labels.end()) << "two different plans read the same";
}

TEST(ReportSvg, HeatmapHasACellPerPairAndGreyForMissing) {
  Heatmap h{"p2p", "GB/s", {"GPU 0", "GPU 1"}, {"GPU 0", "GPU 1"}, {{std::nullopt, 390.0}, {389.0, std::nullopt}}};
  const std::string svg = heatmap_svg(h);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(count(svg, "<rect"), 4u);
  EXPECT_EQ(count(svg, "#eeeeee"), 2u);
  EXPECT_EQ(count(svg, "#0072b2"), 1u);  // the larger value is the darkest
}

TEST(ReportSvg, TimelineLanesAndSpans) {
  TimelineChart t{"step",
                  "ms",
                  {"rank 0 compute", "rank 0 dp"},
                  {{0, 0, 2, "gemm", "compute"}, {1, 1, 3, "all_reduce <dp>", "dp"}}};
  const std::string svg = timeline_svg(t);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_NE(svg.find("all_reduce &lt;dp&gt;"), std::string::npos);
}

TEST(ReportHtml, PageIsSelfContainedAndWellFormed) {
  HtmlPage page;
  page.title = "results <2026>";
  page.inputs = {"a&b.json"};
  HtmlSection s;
  s.id = "x";
  s.title = "section";
  s.paragraphs = {"1 < 2"};
  s.charts = {heatmap_svg({"h", "GB/s", {"a"}, {"b"}, {{1.0}}})};
  s.tables = {{"t", {"col"}, {{"<cell>"}}}};
  s.links = {{"trace", "trace \"x\".json"}};
  page.sections = {s};
  const std::string html = render_html(page);
  EXPECT_TRUE(well_formed(html));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>results &lt;2026&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<td>&lt;cell&gt;</td>"), std::string::npos);
  EXPECT_NE(html.find("a&amp;b.json"), std::string::npos);
  // Nothing is fetched: no external scripts, stylesheets, fonts or images.
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_NE(html.find("data-charts-rendered"), std::string::npos);
}

ResultFile file_of(const std::string& name, nlohmann::json doc) {
  const std::optional<ResultKind> kind = result_kind(doc);
  return ResultFile{name, std::filesystem::path(name).stem().string(), kind.value_or(ResultKind::kBench),
                    std::move(doc)};
}

TEST(ReportFiles, KindsAreRecognizedByTheirKindKey) {
  EXPECT_EQ(result_kind({{"kind", "commscale-bench"}}), ResultKind::kBench);
  EXPECT_EQ(result_kind({{"kind", "commscale-compare"}}), ResultKind::kCompare);
  EXPECT_EQ(result_kind({{"traceEvents", nlohmann::json::array()}}), ResultKind::kChromeTrace);
  EXPECT_FALSE(result_kind({{"kind", "cluster"}}));
  EXPECT_FALSE(result_kind(nlohmann::json::array()));
}

TEST(ReportFiles, AMissingKeyIsNamedWithItsFile) {
  const ResultFile f = file_of("out/bench.json", {{"kind", "commscale-bench"},
                                                  {"context", nlohmann::json::object()},
                                                  {"results", {{{"collective", "all_reduce"}}}}});
  EXPECT_TRUE(testing::throws_input_error([&] { (void)bench_sections({&f}, {}, {}); },
                                          {"out/bench.json: results[0].type", "is missing"}));
}

nlohmann::json bench_doc(const std::string& host, nlohmann::json environment) {
  nlohmann::json row = {{"collective", "all_reduce"},
                        {"type", "fp32"},
                        {"redop", "sum"},
                        {"root", nullptr},
                        {"size_bytes", 1024},
                        {"count", 256},
                        {"out_of_place", {{"time_us", 10.0}, {"algbw_GBps", 0.1}, {"busbw_GBps", 0.1}, {"wrong", 0}}},
                        {"in_place", {{"time_us", 10.0}, {"algbw_GBps", 0.1}, {"busbw_GBps", 0.1}, {"wrong", 0}}}};
  return {{"kind", "commscale-bench"},
          {"context", {{"hosts", {host}}, {"environment", environment}, {"ranks", nlohmann::json::array()}}},
          {"results", nlohmann::json::array({row})}};
}

TEST(ReportCeiling, ComesFromAP2pFileOfTheSameHostOrTheUserElseNone) {
  const ResultFile nvlink = file_of("nvlink.json", bench_doc("vm", nlohmann::json::object()));
  const ResultFile staged = file_of("staged.json", bench_doc("vm", {{"NCCL_P2P_DISABLE", "1"}}));
  const ResultFile sockets =
      file_of("sockets.json", bench_doc("vm", {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}}));
  const nlohmann::json measured = {{"bw_GBps", 390.0}, {"line_rate_GBps", 450.0}};
  const ResultFile p2p = file_of(
      "p2p.json",
      {{"kind", "commscale-p2p"},
       {"context", {{"hosts", {"vm"}}}},
       {"gpus", {{{"index", 0}, {"pci_bus_id", "a"}}, {{"index", 1}, {"pci_bus_id", "b"}}}},
       {"pairs", {{{"src", 0}, {"dst", 1}, {"path", "p2p"}, {"link", "NV18"}, {"ce_unidirectional", measured}}}},
       {"host",
        {{{"gpu", 0}, {"link", "PCIe gen5 x16"}, {"host_to_gpu", {{"bw_GBps", 50.0}, {"line_rate_GBps", 64.0}}}}}}});
  EXPECT_FALSE(bench_ceiling(nvlink, {}, {}).GBps);
  EXPECT_NE(bench_ceiling(nvlink, {}, {}).label.find("no ceiling"), std::string::npos);
  EXPECT_EQ(bench_ceiling(nvlink, {&p2p}, {}).GBps, 450.0);
  EXPECT_EQ(bench_ceiling(staged, {&p2p}, {}).GBps, 64.0);
  EXPECT_FALSE(bench_ceiling(sockets, {&p2p}, {}).GBps);
  ReportOptions stated;
  stated.line_rate_GBps = 450.0;
  stated.line_rate_label = "NV18";
  EXPECT_EQ(bench_ceiling(nvlink, {}, stated).GBps, 450.0);
  EXPECT_FALSE(bench_ceiling(staged, {}, stated).GBps);  // the stated link is not the host-staged path
  // A p2p file of another host says nothing about this one.
  const ResultFile elsewhere = file_of("other.json", bench_doc("other", nlohmann::json::object()));
  EXPECT_FALSE(bench_ceiling(elsewhere, {&p2p}, {}).GBps);
  // The CPU backend has no GPU link, whatever the user states.
  ResultFile cpu = file_of("cpu.json", bench_doc("vm", nlohmann::json::object()));
  cpu.doc["context"]["backend"] = "cpu";
  EXPECT_FALSE(bench_ceiling(cpu, {&p2p}, stated).GBps);
  EXPECT_NE(bench_ceiling(cpu, {}, {}).label.find("CPU backend"), std::string::npos);
}

TEST(ReportPage, RendersTheCommittedH200Results) {
  const LoadedResults results = load_results({COMMSCALE_SOURCE_DIR "/tests/data/results/h200x2-2026-12-01/compare"});
  ASSERT_EQ(results.files.size(), 20u);  // cs-*.json: 5 collectives x (2 nvlink + p2p-off + sockets)
  ReportOptions options;
  options.line_rate_GBps = 450.0;
  options.line_rate_label = "NV18";
  const HtmlPage page = build_report(results, options);
  ASSERT_EQ(page.sections.size(), 5u);
  EXPECT_EQ(page.sections[0].title, "bench: all_gather");  // collectives in the order of the files' names
  const std::string html = render_html(page);
  EXPECT_TRUE(well_formed(html));
  EXPECT_EQ(count(html, "<svg"), 5u);
  EXPECT_EQ(count(html, "<polyline"), 20u);
  EXPECT_EQ(count(html, "stroke-dasharray"), 5u);  // the NVLink runs' ceiling in each chart
  EXPECT_NE(html.find("no ceiling: NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1"), std::string::npos);
}

TEST(ReportSteps, MeasuredAndPredictedBreakdownsSideBySide) {
  const nlohmann::json plan = {{"dp", 2}, {"tp", 1}, {"pp", 1}};
  const nlohmann::json groups = {{"dp", {{"busy_s", 0.3}, {"exposed_s", 0.1}}}};
  const ResultFile train = file_of("train.json", {{"kind", "commscale-train"},
                                                  {"model", model_to_json(find_preset("tiny", ""))},
                                                  {"plan", plan},
                                                  {"summary",
                                                   {{"step_time_s", 1.0},
                                                    {"compute_s", 0.8},
                                                    {"exposed_comm_s", 0.1},
                                                    {"bubble_s", 0.1},
                                                    {"groups", groups},
                                                    {"mfu", nullptr},
                                                    {"tokens_per_s", 100.0}}}});
  const ResultFile predicted = file_of("predict.json", {{"kind", "commscale-prediction"},
                                                        {"model", model_to_json(find_preset("tiny", ""))},
                                                        {"plan", plan},
                                                        {"cluster", {{"name", "a100"}}},
                                                        {"summary",
                                                         {{"step_time_s", 0.9},
                                                          {"compute_s", 0.7},
                                                          {"exposed_comm_s", 0.2},
                                                          {"bubble_s", 0.0},
                                                          {"groups", groups},
                                                          {"mfu", 0.5},
                                                          {"tokens_per_s", 111.0}}}});
  const std::vector<HtmlSection> s = step_sections({&train}, {&predicted});
  ASSERT_EQ(s.size(), 1u);
  const std::string& svg = s[0].charts.at(0);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(s[0].title, "training step: measured against predicted");
  EXPECT_NE(svg.find(">measured on train: tiny, dp "), std::string::npos) << svg;
  EXPECT_NE(svg.find(">predicted on a100: tiny, dp "), std::string::npos) << svg;
  // Measured: dp's exposed 0.1 s is all of it, so the group is drawn; predicted: 0.1 of 0.2, so the total is.
  EXPECT_NE(svg.find("exposed dp"), std::string::npos);
  EXPECT_NE(svg.find("exposed communication"), std::string::npos);
  ASSERT_EQ(s[0].tables.at(0).rows.size(), 2u);
  EXPECT_EQ(s[0].tables[0].rows[1][8], "50.0%");
}

// A prediction of another plan (here: with flash attention) is no counterpart: drawn apart, under a
// title that does not call them the same plan; a third file of the first plan still pairs with it.
TEST(ReportSteps, StepsOfDifferentPlansAreDrawnApart) {
  const nlohmann::json plan = {{"dp", 2}, {"tp", 1}, {"pp", 1}, {"micro_batch", 1}, {"global_batch", 4}};
  nlohmann::json flash = plan;
  flash["flash_attention"] = true;
  const nlohmann::json summary = {
      {"step_time_s", 1.0}, {"compute_s", 0.8}, {"exposed_comm_s", 0.1}, {"bubble_s", 0.1}, {"tokens_per_s", 1.0}};
  const auto step = [&](const char* name, const char* kind, const nlohmann::json& p) {
    return file_of(name, {{"kind", kind}, {"model", model_to_json(find_preset("tiny", ""))}, {"plan", p}, {"summary", summary}});
  };
  const ResultFile train = step("train.json", "commscale-train", plan);
  const ResultFile other = step("predict.json", "commscale-prediction", flash);
  const std::vector<HtmlSection> apart = step_sections({&train}, {&other});
  ASSERT_EQ(apart.size(), 1u);
  EXPECT_EQ(apart[0].title, "training steps: no measured and predicted pair");
  EXPECT_NE(apart[0].charts.at(0).find(">predicted on predict: tiny, dp 2 × tp 1 × pp 1, micro-batch 1, global 4, "
                                       "flash attention<"),
            std::string::npos)
      << apart[0].charts[0];
  const ResultFile same = step("same.json", "commscale-prediction", plan);
  const std::vector<HtmlSection> both = step_sections({&train}, {&other, &same});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].title, "training step: measured against predicted");
  EXPECT_EQ(both[0].tables.at(0).rows.size(), 2u);
  EXPECT_EQ(both[1].tables.at(0).rows.size(), 1u);
}

// Plans are the same by value, not by JSON text: a train file written before the plan had its
// optimizer and kernels keys (Adam and fused kernels were all there was) pairs with a prediction that
// writes the defaults out.
TEST(ReportSteps, APlanWithoutLaterKeysPairsWithItsDefaults) {
  const nlohmann::json old_plan = {{"dp", 2}, {"tp", 1}, {"pp", 1}, {"micro_batch", 1}, {"global_batch", 4}};
  nlohmann::json new_plan = old_plan;
  new_plan["optimizer"] = "adam";
  new_plan["kernels"] = "fused";
  const nlohmann::json summary = {
      {"step_time_s", 1.0}, {"compute_s", 0.8}, {"exposed_comm_s", 0.1}, {"bubble_s", 0.1}, {"tokens_per_s", 1.0}};
  const ResultFile train = file_of("train.json", {{"kind", "commscale-train"},
                                                  {"model", model_to_json(find_preset("tiny", ""))},
                                                  {"plan", old_plan},
                                                  {"summary", summary}});
  const ResultFile predicted = file_of("predict.json", {{"kind", "commscale-prediction"},
                                                        {"model", model_to_json(find_preset("tiny", ""))},
                                                        {"plan", new_plan},
                                                        {"summary", summary}});
  const std::vector<HtmlSection> s = step_sections({&train}, {&predicted});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].title, "training step: measured against predicted");
}

TEST(ReportP2p, HeatmapAndTablesFromAP2pFile) {
  const nlohmann::json bw = {{"bw_GBps", 390.5}, {"line_rate_GBps", 450.0}, {"fraction_of_line_rate", 0.8678}};
  const ResultFile p2p =
      file_of("p2p.json", {{"kind", "commscale-p2p"},
                           {"gpus", {{{"index", 0}}, {{"index", 1}}}},
                           {"pairs",
                            {{{"src", 0},
                              {"dst", 1},
                              {"path", "p2p"},
                              {"link", "NV18"},
                              {"ce_unidirectional", bw},
                              {"sm_unidirectional", nullptr}},
                             {{"src", 1}, {"dst", 0}, {"path", "p2p"}, {"link", "NV18"}, {"ce_unidirectional", bw}}}},
                           {"host", nlohmann::json::array()}});
  const std::vector<HtmlSection> s = p2p_sections({&p2p});
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].charts.size(), 1u);  // no SM copies measured: the copy-engine heatmap alone
  EXPECT_TRUE(well_formed(s[0].charts[0]));
  EXPECT_EQ(count(s[0].charts[0], "#eeeeee"), 2u);  // the diagonal
  ASSERT_EQ(s[0].tables.size(), 1u);                // no host rows: no host table
  EXPECT_EQ(s[0].tables[0].rows.at(0),
            (std::vector<std::string>{"GPU 0", "GPU 1", "p2p", "NV18", "390.5", "87%", "n/a", "n/a", "n/a"}));
}

TEST(ReportSearch, BestPlansAsPredictedBreakdowns) {
  const nlohmann::json plan = {{"dp", 4}, {"tp", 2}, {"pp", 1}};
  const auto estimate = [&](double step) {
    return nlohmann::json{{"plan", plan},
                          {"step_time_s", step},
                          {"compute_s", step / 2},
                          {"exposed_comm_s", step / 4},
                          {"bubble_s", step / 4},
                          {"tokens_per_s", 1e5},
                          {"mfu", 0.4}};
  };
  const ResultFile search =
      file_of("search.json", {{"kind", "commscale-search"},
                              {"cluster", "hgx-h100"},
                              {"candidates", 90},
                              {"fitting", 30},
                              {"top", {estimate(1.0), estimate(1.5), {{"plan", plan}, {"fits", false}}}}});
  const std::vector<HtmlSection> s = search_sections({&search});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].title, "search: best plans on hgx-h100");
  EXPECT_EQ(s[0].tables.at(0).rows.size(), 2u);  // the plan without an estimate is left out
  EXPECT_NE(s[0].charts.at(0).find("#2 dp 4 × tp 2 × pp 1"), std::string::npos);
}

TEST(Progress, LineCountsEstimatesAndClears) {
  double now = 100.0;
  std::ostringstream out;
  {
    Progress p(&out, "bench", 40, [&] { return now; });
    // 10 of 40 in 3 s: 30 more at the same rate take 9 s.
    EXPECT_EQ(p.line(10, "all_reduce 1 MiB", 3.0), "bench  10/40  25%  all_reduce 1 MiB  3 s, about 9 s left");
    EXPECT_EQ(p.line(40, "", 90.0), "bench  40/40  100%  1m30s");
    now = 103.0;
    p.update(10, "all_reduce 1 MiB");
    now = 103.05;
    p.update(11, "too soon");  // within 0.1 s of the last draw: skipped
    now = 104.0;
    p.update(40, "done");
  }
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("\rbench  10/40", 0), 0u);
  EXPECT_EQ(s.find("too soon"), std::string::npos);
  EXPECT_NE(s.find("\rbench  40/40  100%  done  4 s"), std::string::npos);
  EXPECT_EQ(s.back(), '\r');  // cleared at the end
  std::ostringstream none;
  Progress off(nullptr, "x", 1);
  off.update(1);
  EXPECT_TRUE(none.str().empty());
}

}  // namespace
}  // namespace commscale
