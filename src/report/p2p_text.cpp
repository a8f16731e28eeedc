// The text form of `commscale p2p`: one matrix per measurement, as nvbandwidth prints them, with the
// fraction of the line rate beside each bandwidth, then the host <-> GPU table and the verdict.

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "core/size.hpp"
#include "core/text_table.hpp"
#include "report/p2p_reporters.hpp"

namespace commscale {
namespace {

std::string gpu_label(int i) { return fmt::format("GPU{}", i); }

const PairResult* find_pair(const P2pReport& r, int src, int dst) {
  for (const PairResult& p : r.pairs) {
    if (p.src == src && p.dst == dst) return &p;
  }
  return nullptr;
}

// A GPU x GPU matrix whose cells `cell` fills; "-" on the diagonal.
std::string matrix(const P2pReport& r, const std::function<std::string(const PairResult&)>& cell) {
  const int n = static_cast<int>(r.gpus.size());
  std::vector<std::string> headers = {""};
  for (int b = 0; b < n; ++b) headers.push_back(gpu_label(b) + ">");
  TextTable table(headers);
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> row = {gpu_label(a)};
    for (int b = 0; b < n; ++b) {
      const PairResult* p = a == b ? nullptr : find_pair(r, a, b);
      row.push_back(p == nullptr ? "-" : cell(*p));
    }
    table.add(row);
  }
  return table.render();
}

std::string staged_mark(const PairResult& p) { return p.path == PeerPath::kStaged ? " s" : ""; }

std::string latency_cell(const LatencyResult& l) { return l.measured ? fmt::format("{:.0f}", l.stats.median) : "n/a"; }

std::string pair_sections(const P2pReport& r) {
  std::string out;
  const auto section = [&](const std::string& title, const std::function<std::string(const PairResult&)>& cell) {
    out += fmt::format("\n# {}\n", title) + matrix(r, cell);
  };
  const P2pOptions& o = r.options;
  section("links (row: source, column: destination)", [](const PairResult& p) { return p.link; });
  if (o.copy_engine) {
    section("memcpy CE, unidirectional: GB/s (% of line rate); row: source, column: destination",
            [](const PairResult& p) { return bandwidth_cell(p.ce_uni) + staged_mark(p); });
    section("memcpy CE, bidirectional (both directions together): GB/s (% of line rate)",
            [](const PairResult& p) { return bandwidth_cell(p.ce_bi) + staged_mark(p); });
  }
  if (o.sm) {
    section("SM copy (the destination's kernel reads the source), unidirectional: GB/s (% of line rate)",
            [](const PairResult& p) { return bandwidth_cell(p.sm_uni); });
    section("SM copy, bidirectional (both directions together): GB/s (% of line rate)",
            [](const PairResult& p) { return bandwidth_cell(p.sm_bi); });
  }
  if (o.latency) {
    section("latency: ns per dependent 8-byte load (median); row: memory, column: loading GPU",
            [](const PairResult& p) { return latency_cell(p.latency); });
  }
  return out;
}

std::string host_section(const P2pReport& r) {
  TextTable table({"", "link", "host->GPU>", "GPU->host>", "bidirectional>", "latency ns>"});
  for (const HostResult& h : r.hosts) {
    table.add({gpu_label(h.gpu), h.link, bandwidth_cell(h.h2d), bandwidth_cell(h.d2h), bandwidth_cell(h.bidir),
               latency_cell(h.latency)});
  }
  return "\n# host <-> GPU (pinned host memory), memcpy CE: GB/s (% of line rate); latency: GPU loads from host "
         "memory\n" +
         table.render();
}

}  // namespace

std::string bandwidth_cell(const BandwidthResult& r) {
  if (!r.measured) return "n/a";
  const std::optional<double> f = r.fraction_of_line_rate();
  return f ? fmt::format("{:.2f} ({:.0f}%)", r.bw.value(), *f * 100.0) : fmt::format("{:.2f}", r.bw.value());
}

std::string format_p2p_text(const P2pReport& r) {
  const RunContext& c = r.context;
  const P2pOptions& o = r.options;
  std::string out = fmt::format("# commscale {} ({}) p2p on {}: {} GPU{}, {} per copy, {} copies per sample\n",
                                c.commscale_version, c.git_sha, c.hosts.empty() ? "" : c.hosts.front(), r.gpus.size(),
                                r.gpus.size() == 1 ? "" : "s", format_size(o.size), o.copies);
  out += fmt::format("# timing: {}\n", r.timing);
  for (std::size_t g = 0; g < r.gpus.size(); ++g) {
    out += fmt::format("# GPU{}: CUDA device {}, {} [{}]\n", g, r.gpus[g].device, r.gpus[g].name, r.gpus[g].pci_bus_id);
  }
  if (r.gpus.size() > 1) {
    out += pair_sections(r);
  } else {
    out += "\n# one GPU: no GPU pairs to measure\n";
  }
  if (o.host) out += host_section(r);
  out += "\n";
  if (std::any_of(r.pairs.begin(), r.pairs.end(), [](const PairResult& p) { return p.path == PeerPath::kStaged; })) {
    out += "# s: staged through pinned host memory (no P2P between the two GPUs)\n";
  }
  for (const std::string& note : r.notes) out += fmt::format("# {}\n", note);
  out += fmt::format("# wrong bytes: {} {}\n", r.wrong_bytes(), r.passed() ? "OK" : "FAILED");
  return out;
}

}  // namespace commscale
