// `commscale p2p` without a GPU: the line rate of each path from the catalog (derivations in the
// comments), the fractions of it, and the text, JSON and CSV reporters against golden patterns, from
// hand-made results.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "discovery_fixtures.hpp"
#include "hw_test_support.hpp"
#include "report/p2p_line_rate.hpp"
#include "report/p2p_reporters.hpp"

namespace commscale {
namespace {

using hw::testing::catalog;

const hw::GpuSpec& h200() {
  static const hw::GpuSpec gpu = catalog().gpu("h200-sxm", "test");
  return gpu;
}

TEST(P2pLineRate, NvlinkIsLanesTimesTheCatalogLinkRate) {
  const MachineDiscovery m = testing::h200x2();
  // NV18 x 25 GB/s per link per direction (h200-sxm.json) = 450 GB/s.
  const PathRate nv = pair_rate(m, 0, 1, PeerPath::kP2p, &h200(), &catalog().reference());
  EXPECT_EQ(nv.link, "NV18");
  ASSERT_TRUE(nv.per_direction);
  EXPECT_DOUBLE_EQ(nv.per_direction->value(), 450.0);
  // The staged path crosses both GPUs' PCIe gen5 x16 links: 64 GB/s (links.json).
  const PathRate staged = pair_rate(m, 0, 1, PeerPath::kStaged, &h200(), &catalog().reference());
  EXPECT_EQ(staged.link, "staged over PCIe gen5 x16");
  EXPECT_DOUBLE_EQ(staged.per_direction->value(), 64.0);
  const PathRate host = host_rate(m, 1, &catalog().reference());
  EXPECT_EQ(host.link, "PCIe gen5 x16");
  EXPECT_DOUBLE_EQ(host.per_direction->value(), 64.0);
  // Without the catalog GPU there is no NVLink rate; PCIe still has one.
  EXPECT_FALSE(pair_rate(m, 0, 1, PeerPath::kP2p, nullptr, &catalog().reference()).per_direction);
  EXPECT_FALSE(host_rate(m, 0, nullptr).per_direction);
}

TEST(P2pLineRate, PcieP2pTakesTheNarrowerLink) {
  MachineDiscovery m = testing::rtx4090x2();
  m.gpus[1].pcie_max = {4, 8};  // gen4 x8: 31.5 x 8/16 = 15.75 GB/s, narrower than gen4 x16's 31.5
  const PathRate p = pair_rate(m, 0, 1, PeerPath::kP2p, nullptr, &catalog().reference());
  EXPECT_EQ(p.link, "PCIe gen4 x8 P2P");
  EXPECT_DOUBLE_EQ(p.per_direction->value(), 15.75);
  // Without NVML nobody knows whether a P2P pair talks over NVLink: no rate.
  m.nvml_status = "libnvidia-ml.so.1 cannot be loaded";
  EXPECT_FALSE(pair_rate(m, 0, 1, PeerPath::kP2p, nullptr, &catalog().reference()).per_direction);
}

BandwidthResult bandwidth_result(double us_per_copy, Bytes bytes) {
  BandwidthResult r;
  r.measured = true;
  r.bytes_per_copy = bytes;
  r.samples_us = {us_per_copy - 10, us_per_copy, us_per_copy + 10};
  r.stats = summarize(r.samples_us);
  r.bw = bandwidth(bytes, microseconds(r.stats.median));
  return r;
}

LatencyResult latency_result(double ns) {
  LatencyResult r;
  r.measured = true;
  r.samples_ns = {ns, ns, ns};
  r.stats = summarize(r.samples_ns);
  return r;
}

// Two H200s: 512 MiB copies; one way at 1491.3 us per copy is 536870912 B / 1491.3 us = 360.0 GB/s,
// 80% of NV18's 450; both ways at the same time per copy is 720.0 GB/s, 80% of 900.
P2pReport h200x2_report() {
  P2pReport r;
  r.context.commscale_version = "0.1.0";
  r.context.git_sha = "abc123";
  r.context.hosts = {"node01"};
  r.gpus = {{0, "NVIDIA H200", "0000:18:00.0"}, {1, "NVIDIA H200", "0000:2a:00.0"}};
  r.timing = "spin kernel";
  const Bytes size(512 * kMiB);
  for (int a = 0; a < 2; ++a) {
    PairResult p;
    p.src = a;
    p.dst = 1 - a;
    p.ce_uni = bandwidth_result(1491.3080888, size);
    p.ce_bi = bandwidth_result(1491.3080888, size * 2);
    p.sm_uni = bandwidth_result(1491.3080888, size);
    p.latency = latency_result(812.4);
    r.pairs.push_back(p);
  }
  HostResult h;
  h.gpu = 0;
  h.h2d = bandwidth_result(536870912.0 / 55.0 / 1e3, size);  // 55 GB/s: 86% of 64
  h.latency = latency_result(1650.0);
  r.hosts.push_back(h);
  return r;
}

TEST(P2pLineRate, FractionsOfEveryResult) {
  P2pReport r = h200x2_report();
  apply_line_rates(r, testing::h200x2(), &h200(), &catalog().reference());
  EXPECT_EQ(r.pairs[0].link, "NV18");
  EXPECT_NEAR(r.pairs[0].ce_uni.bw.value(), 360.0, 1e-6);
  EXPECT_NEAR(*r.pairs[0].ce_uni.fraction_of_line_rate(), 0.8, 1e-9);
  EXPECT_DOUBLE_EQ(r.pairs[0].ce_bi.line_rate->value(), 900.0);
  EXPECT_NEAR(*r.pairs[0].ce_bi.fraction_of_line_rate(), 0.8, 1e-9);
  EXPECT_FALSE(r.pairs[0].sm_bi.line_rate);  // not measured
  EXPECT_NEAR(*r.hosts[0].h2d.fraction_of_line_rate(), 55.0 / 64.0, 1e-9);
  EXPECT_FALSE(r.hosts[0].d2h.fraction_of_line_rate());
  EXPECT_EQ(r.notes.size(), 2u);  // the NVLink and the PCIe basis
}

TEST(P2pReporters, TextMatrices) {
  P2pReport r = h200x2_report();
  apply_line_rates(r, testing::h200x2(), &h200(), &catalog().reference());
  const std::string text = format_p2p_text(r);
  EXPECT_NE(text.find("# commscale 0.1.0 (abc123) p2p on node01: 2 GPUs, 512 MiB per copy, 8 copies per sample"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# memcpy CE, unidirectional: GB/s (% of line rate); row: source, column: destination\n"
                      "              GPU0          GPU1\n"
                      "GPU0             -  360.00 (80%)\n"
                      "GPU1  360.00 (80%)             -\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("720.00 (80%)"), std::string::npos);
  EXPECT_NE(text.find("column: loading GPU\n      GPU0  GPU1\nGPU0     -   812\n"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU0  PCIe gen5 x16  55.00 (86%)        n/a            n/a        1650\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("# s: staged"), std::string::npos);  // no staged pair
  EXPECT_NE(text.find("# wrong bytes: 0 OK\n"), std::string::npos);
  r.pairs[1].ce_uni.wrong_bytes = 3;
  EXPECT_NE(format_p2p_text(r).find("# wrong bytes: 3 FAILED\n"), std::string::npos);
}

TEST(P2pReporters, StagedCellsAreMarked) {
  P2pReport r = h200x2_report();
  for (PairResult& p : r.pairs) {
    p.path = PeerPath::kStaged;
    p.why_staged = "--no-p2p";
    p.sm_uni = {};
    p.latency = {};
  }
  apply_line_rates(r, testing::h200x2(), &h200(), &catalog().reference());
  const std::string text = format_p2p_text(r);
  EXPECT_NE(text.find("360.00 (563%) s"), std::string::npos) << text;  // 360 of the staged path's 64 GB/s
  EXPECT_NE(text.find("# s: staged through pinned host memory"), std::string::npos);
  EXPECT_EQ(p2p_json(r)["pairs"][0]["why_staged"], "--no-p2p");
  EXPECT_TRUE(p2p_json(r)["pairs"][0]["sm_unidirectional"].is_null());
}

TEST(P2pReporters, JsonHasSchemaContextSamplesAndSummary) {
  P2pReport r = h200x2_report();
  apply_line_rates(r, testing::h200x2(), &h200(), &catalog().reference());
  const nlohmann::json j = p2p_json(r);
  EXPECT_EQ(j["schema_version"], kP2pSchemaVersion);
  EXPECT_EQ(j["kind"], "commscale-p2p");
  EXPECT_EQ(j["context"]["git_sha"], "abc123");
  EXPECT_EQ(j["config"]["size_bytes"], 512 * kMiB);
  const nlohmann::json& ce = j["pairs"][0]["ce_unidirectional"];
  EXPECT_NEAR(ce["bw_GBps"].get<double>(), 360.0, 1e-6);
  EXPECT_NEAR(ce["fraction_of_line_rate"].get<double>(), 0.8, 1e-9);
  EXPECT_EQ(ce["line_rate_GBps"], 450.0);
  EXPECT_EQ(ce["samples_us"].size(), 3u);
  EXPECT_LT(ce["bw_min_GBps"].get<double>(), ce["bw_GBps"].get<double>());
  EXPECT_GT(ce["bw_max_GBps"].get<double>(), ce["bw_GBps"].get<double>());
  EXPECT_TRUE(ce["samples"].contains("p99_us"));
  EXPECT_EQ(j["pairs"][0]["latency"]["latency_ns"], 812.4);
  EXPECT_TRUE(j["host"][0]["gpu_to_host"].is_null());
  EXPECT_EQ(j["summary"]["wrong_bytes"], 0);
  EXPECT_EQ(j["summary"]["passed"], true);
}

TEST(P2pReporters, CsvOneLinePerMeasurement) {
  P2pReport r = h200x2_report();
  apply_line_rates(r, testing::h200x2(), &h200(), &catalog().reference());
  const std::string csv = p2p_csv(r);
  std::vector<std::string> lines;
  for (std::size_t at = 0, next = 0; at < csv.size(); at = next + 1) {
    next = csv.find('\n', at);
    lines.push_back(csv.substr(at, next - at));
  }
  // Header; per ordered pair ce, sm, latency; ce both ways once; host to GPU and host latency.
  ASSERT_EQ(lines.size(), 1u + 2 * 3 + 1 + 2);
  EXPECT_EQ(lines[0],
            "measurement,src,dst,path,link,samples,bytes_per_copy,bw_GBps,bw_min_GBps,bw_max_GBps,time_median_us,"
            "time_p99_us,line_rate_GBps,fraction_of_line_rate,latency_median_ns,latency_p99_ns,wrong_bytes");
  EXPECT_EQ(lines[1].substr(0, 57), "ce_unidirectional,gpu0,gpu1,p2p,NV18,3,536870912,360.0000");
  EXPECT_NE(lines[1].find(",450.0000,0.8000,,,0"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[3].substr(0, 48), "ce_bidirectional,gpu0,gpu1,p2p,NV18,3,1073741824");
  EXPECT_EQ(lines[4], "latency,gpu0,gpu1,p2p,NV18,3,,,,,,,,,812.40,812.40,0");
  for (const std::string& line : lines) EXPECT_EQ(std::count(line.begin(), line.end(), ','), 16) << line;
}

}  // namespace
}  // namespace commscale
