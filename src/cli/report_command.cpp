// `commscale report`: renders result files (bench, p2p, topo, train, its Chrome trace, plan, and the
// predictor's predict, compare and search) into one self-contained HTML page with SVG charts. Pure:
// it starts no MPI. Files of other kinds are named on stderr and skipped.

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/number_options.hpp"
#include "cli/option_rules.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "report/html_report.hpp"

namespace commscale {
namespace {

struct ReportArguments {
  std::vector<std::string> inputs;
  std::string output = "report.html";
  std::string title = "commscale report";
  std::string line_rate;
};

ReportOptions finish(const ReportArguments& a) {
  ReportOptions o;
  o.title = a.title;
  if (!a.line_rate.empty()) {
    const std::size_t colon = a.line_rate.find(':');
    const std::string number = a.line_rate.substr(0, colon);
    const std::optional<double> value = real_within(number, {0.0, 1e9, "", "", true});
    if (!value) {
      throw InputError("--line-rate", fmt::format("\"{}\"", a.line_rate),
                       "GBPS or GBPS:WHAT, a positive GB/s per direction, at most 1e9");
    }
    o.line_rate_GBps = *value;
    if (colon != std::string::npos) o.line_rate_label = a.line_rate.substr(colon + 1);
  }
  ensure_writable(a.output, "-o/--output");
  o.output_dir = std::filesystem::absolute(std::filesystem::path(a.output)).parent_path();
  return o;
}

int run_report(const ReportArguments& a) {
  const ReportOptions options = finish(a);
  const LoadedResults results = load_results(a.inputs);
  // The files of a folder are known once it is read (main checked the files named): the page replaces none.
  for (const ResultFile& f : results.files) check_not_input({"-o/--output", a.output}, "RESULTS", f.path.string());
  for (const std::string& s : results.skipped) std::cerr << "commscale report: not rendered: " << s << "\n";
  if (results.files.empty()) {
    throw InputError("RESULTS", "none of the files is a result report renders",
                     "JSON written by commscale bench, p2p, topo, train (-J or --trace), plan --json, predict, compare, "
                     "search or doctor");
  }
  const HtmlPage page = build_report(results, options);
  std::size_t charts = 0;
  for (const HtmlSection& s : page.sections) charts += s.charts.size();
  write_file_atomically(a.output, render_html(page));
  std::cout << fmt::format("commscale report: {} ({} files, {} sections, {} charts)\n", a.output, results.files.size(),
                           page.sections.size(), charts);
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandAction* action, const std::string& /*command_line*/) {
  auto args = std::make_shared<ReportArguments>();
  CLI::App* cmd = app.add_subcommand("report", "Render result files into one self-contained HTML page with SVG charts");
  mark_input_file(
      cmd->add_option("results", args->inputs, "result files (JSON) or folders of them (searched recursively)")
          ->required());
  mark_output_file(cmd->add_option("-o,--output", args->output, "the HTML file to write")->capture_default_str());
  cmd->add_option("--title", args->title, "the page's title")->capture_default_str();
  cmd->add_option("--line-rate", args->line_rate,
                  "GBPS[:WHAT]: the per-direction line rate of the link the bench files' GPUs use, drawn as the busbw "
                  "ceiling where no p2p file of the same host gives it (not applied to NCCL_P2P_DISABLE runs)");
  cmd->callback([args, action] { *action = [args] { return run_report(*args); }; });
}

}  // namespace commscale
