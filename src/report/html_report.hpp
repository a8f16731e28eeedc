#pragma once

// `commscale report`: result files in, one HTML page out. Each kind of file becomes sections of
// charts and the tables behind them (report_bench.cpp: bench, p2p, topo; report_steps.cpp: train,
// predict, search, plan and the Chrome trace; report_compare.cpp: compare).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "parallel/plan.hpp"
#include "report/html_page.hpp"
#include "report/result_files.hpp"

namespace commscale {

struct ReportOptions {
  std::string title = "commscale report";
  // The line rate (one direction, GB/s) of the link the bench files' GPUs talk over, when the user
  // states it; otherwise it comes from a p2p file of the same host, or there is no ceiling.
  std::optional<double> line_rate_GBps;
  std::string line_rate_label;
  std::filesystem::path output_dir;  // links to trace files are relative to it
};

[[nodiscard]] HtmlPage build_report(const LoadedResults& results, const ReportOptions& options);

using ResultRefs = std::vector<const ResultFile*>;

[[nodiscard]] std::vector<HtmlSection> bench_sections(const ResultRefs& bench, const ResultRefs& p2p,
                                                      const ReportOptions& options);
[[nodiscard]] std::vector<HtmlSection> p2p_sections(const ResultRefs& p2p);
[[nodiscard]] std::vector<HtmlSection> topo_sections(const ResultRefs& topo);
[[nodiscard]] std::vector<HtmlSection> step_sections(const ResultRefs& train, const ResultRefs& predicted);
[[nodiscard]] std::vector<HtmlSection> search_sections(const ResultRefs& search);
[[nodiscard]] std::vector<HtmlSection> plan_sections(const ResultRefs& plans);
[[nodiscard]] std::vector<HtmlSection> trace_sections(const ResultRefs& traces, const ReportOptions& options);
[[nodiscard]] std::vector<HtmlSection> compare_sections(const ResultRefs& compare);
[[nodiscard]] std::vector<HtmlSection> doctor_sections(const ResultRefs& doctor);

// The busbw ceiling of one bench file: the line rate and what it is, or why there is none.
struct CeilingChoice {
  std::optional<double> GBps;
  std::string label;  // "NV18 line rate 450 GB/s" or the reason for none
};
[[nodiscard]] CeilingChoice bench_ceiling(const ResultFile& bench, const ResultRefs& p2p, const ReportOptions& options);

// "dp 2 × tp 2 × pp 1, micro-batch 1, global 8": every field in which two plans differ.
[[nodiscard]] std::string plan_label(const ParallelPlan& plan);

}  // namespace commscale
