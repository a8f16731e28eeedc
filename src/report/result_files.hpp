#pragma once

// The result files `commscale report` reads, recognized by their "kind" (or, for a Chrome trace, by
// its "traceEvents"), and checked accessors that name the file and key when a value is missing or
// of the wrong type. Section builders (html_report.hpp) read the documents through these.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_at.hpp"

namespace commscale {

enum class ResultKind { kBench, kP2p, kTopo, kTrain, kPrediction, kCompare, kSearch, kPlan, kDoctor, kChromeTrace };

// The kind of a parsed document, or nullopt when it is not one `report` renders.
[[nodiscard]] std::optional<ResultKind> result_kind(const nlohmann::json& doc);
// "commscale-bench", ..., "chrome-trace".
[[nodiscard]] std::string_view kind_name(ResultKind kind);

struct ResultFile {
  std::filesystem::path path;
  std::string label;  // short and unique among the inputs: the file's stem, with its folder when needed
  ResultKind kind = ResultKind::kBench;
  nlohmann::json doc;
};

struct LoadedResults {
  std::vector<ResultFile> files;
  std::vector<std::string> skipped;  // "path: why", for files that are not results report renders
};

// Reads every file named, and every *.json under every folder named (recursively, in name order).
// A named file that cannot be read or parsed is an InputError; a JSON file of another kind is
// listed in `skipped`. Labels are made unique.
[[nodiscard]] LoadedResults load_results(const std::vector<std::string>& paths);

[[nodiscard]] JsonAt root_of(const ResultFile& file);

}  // namespace commscale
