#pragma once

// What a prediction has been checked against: topologies/validation.json lists, per GPU and framework,
// the measured runs the predictor was held against and its error there (written by launch/validate.py
// from the published runs of results/validation/, and from this project's own measured runs). A
// prediction for a GPU and framework the file does not list has never been checked against any
// measurement, and says so.

#include <optional>
#include <string>
#include <vector>

namespace commscale::predict {

struct ValidationEntry {
  std::string gpu;               // a catalog GPU name
  std::string framework;         // a --framework name
  int rows = 0;                  // measured runs predicted
  double signed_mean_pct = 0.0;  // mean of predicted / measured - 1, in percent (negative: optimistic)
  double mape_pct = 0.0;         // mean absolute error, in percent
  std::string against;           // what the runs were, and where their table and results are
};

// Reads a validation file; throws InputError naming the file and key.
[[nodiscard]] std::vector<ValidationEntry> read_validation_file(const std::string& path);
// The catalog's entries (topologies/validation.json; none when the file is absent).
[[nodiscard]] std::vector<ValidationEntry> catalog_validation();

// One line for a prediction: the entry of this GPU and framework, or a warning that there is none.
[[nodiscard]] std::string validation_line(const std::vector<ValidationEntry>& entries, const std::string& gpu,
                                          const std::string& framework);
[[nodiscard]] const ValidationEntry* find_validation(const std::vector<ValidationEntry>& entries,
                                                     const std::string& gpu, const std::string& framework);

}  // namespace commscale::predict
