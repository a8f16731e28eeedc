#include "cli/predict_options.hpp"

#include <iostream>

#include "core/atomic_file.hpp"
#include "core/json_text.hpp"
#include "predict/host_catalog.hpp"

namespace commscale {
namespace {

// The framework that runs a kernel set: commscale's executor runs the fused kernels; the eager list is
// eager PyTorch's.
// A step of commscale's fused kernels is issued as commscale's executor issues it (the catalog's row,
// measured by calibrate --measure host); eager PyTorch's measured row holds GPU time (an upper bound:
// topologies/frameworks.json says by how much), so eager steps default to device time alone until a
// profile or --host-framework says otherwise.
std::string default_host_framework(KernelSet kernels) {
  return std::string(kernels == KernelSet::kFused ? "commscale" : predict::kNoHost);
}

}  // namespace

void add_output_options(CLI::App& command, OutputArguments* args) {
  command.add_flag("--json", args->json, "print the result as JSON (instead of text)");
  command.add_option("-J,--output_file", args->json_path, "write the result as JSON to this file");
}

void finish_output_options(const OutputArguments& args, std::vector<NamedOutput> more) {
  more.insert(more.begin(), NamedOutput{"-J", args.json_path});
  check_outputs(more);
}

bool emit_json(const OutputArguments& args, const nlohmann::json& doc) {
  if (!args.json_path.empty()) write_file_atomically(args.json_path, json_text(doc, 2));
  if (args.json) std::cout << json_text(doc, 2);
  return !args.json;
}

CLI::Option* add_host_framework_option(CLI::App& command, std::string* framework) {
  return command.add_option("--host-framework", *framework,
                     "whose host issues the step's ops, at its measured cost per op: a framework of "
                     "topologies/frameworks.json or of --calibration's profile, or none (device time alone); "
                     "default: commscale's executor for fused kernels, none for --kernels eager (PyTorch's measured "
                     "row, pytorch-eager, is an upper bound)");
}

HostCosts resolve_host_framework(const std::string& given, KernelSet kernels, const predict::CalibrationProfile* profile) {
  const std::string framework = !given.empty() ? given : default_host_framework(kernels);
  return predict::host_costs_for(framework, profile, "--host-framework");
}

std::shared_ptr<const predict::CalibrationProfile> load_calibration_option(const std::string& path,
                                                                           const hw::Catalog& catalog) {
  if (path.empty()) return nullptr;
  return std::make_shared<const predict::CalibrationProfile>(predict::load_calibration(path, catalog));
}

}  // namespace commscale
