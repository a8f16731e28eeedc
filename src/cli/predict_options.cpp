#include "cli/predict_options.hpp"

#include <iostream>

#include "core/atomic_file.hpp"
#include "core/json_text.hpp"

namespace commscale {

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

std::shared_ptr<const predict::CalibrationProfile> load_calibration_option(const std::string& path,
                                                                           const hw::Catalog& catalog) {
  if (path.empty()) return nullptr;
  return std::make_shared<const predict::CalibrationProfile>(predict::load_calibration(path, catalog));
}

}  // namespace commscale
