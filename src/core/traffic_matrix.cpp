#include "core/traffic_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace commscale {
namespace {

constexpr const char* kExpected =
    "a square matrix of non-negative numbers, one row per rank (row i: what rank i sends to each rank), as "
    "whitespace-separated text or JSON [[...], ...]";

std::vector<std::vector<double>> text_rows(const std::string& text, const std::string& where) {
  std::vector<std::vector<double>> rows;
  std::istringstream lines(text);
  std::string line;
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    std::istringstream cells(line);
    std::vector<double> row;
    std::string cell;
    while (cells >> cell) {
      std::size_t used = 0;
      double value = 0.0;
      try {
        value = std::stod(cell, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != cell.size()) {
        throw InputError(where, fmt::format("line {}: \"{}\" is not a number", line_number, cell), kExpected);
      }
      row.push_back(value);
    }
    if (!row.empty()) rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::vector<double>> json_rows(const std::string& text, const std::string& where) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where, fmt::format("not valid JSON: {}", e.what()), kExpected);
  }
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) {
      if (key != "matrix") throw InputError(where, fmt::format("unknown key \"{}\"", key), "only \"matrix\"");
    }
    if (!doc.contains("matrix")) throw InputError(where, "no \"matrix\" key", kExpected);
    doc = doc["matrix"];
  }
  if (!doc.is_array()) throw InputError(where, "the matrix is not an array of rows", kExpected);
  std::vector<std::vector<double>> rows;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    if (!doc[i].is_array()) throw InputError(where, fmt::format("row {} is not an array", i), kExpected);
    std::vector<double> row;
    for (std::size_t j = 0; j < doc[i].size(); ++j) {
      if (!doc[i][j].is_number())
        throw InputError(where, fmt::format("row {} column {} is not a number", i, j), kExpected);
      row.push_back(doc[i][j].get<double>());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

double TrafficMatrix::sent_by(int rank) const {
  double sum = 0.0;
  for (int j = 0; j < ranks; ++j) sum += at(rank, j);
  return sum;
}

double TrafficMatrix::received_by(int rank) const {
  double sum = 0.0;
  for (int i = 0; i < ranks; ++i) sum += at(i, rank);
  return sum;
}

double TrafficMatrix::total() const { return std::accumulate(cells.begin(), cells.end(), 0.0); }

TrafficMatrix uniform_traffic(int ranks) {
  return {ranks, std::vector<double>(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks), 1.0),
          "uniform"};
}

TrafficMatrix read_traffic_matrix(const std::filesystem::path& file, const std::string& flag) {
  const std::string where = fmt::format("{} {}", flag, file.string());
  const std::string text = read_input_file(file);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string::npos && (text[first] == '[' || text[first] == '{');
  const std::vector<std::vector<double>> rows = json ? json_rows(text, where) : text_rows(text, where);
  if (rows.empty()) throw InputError(where, "the file holds no matrix", kExpected);
  TrafficMatrix m;
  m.ranks = static_cast<int>(rows.size());
  m.source = "file " + file.string();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size() != rows.size()) {
      throw InputError(
          where, fmt::format("row {} has {} values in a matrix of {} rows: not square", i, rows[i].size(), rows.size()),
          kExpected);
    }
    for (std::size_t j = 0; j < rows[i].size(); ++j) {
      const double v = rows[i][j];
      if (!std::isfinite(v) || v < 0) {
        throw InputError(where, fmt::format("row {} column {} is {}", i, j, v), "non-negative finite values");
      }
      m.cells.push_back(v);
    }
  }
  if (m.total() <= 0) throw InputError(where, "every value is 0: nothing is sent", "some positive values");
  // Finite values can still sum past the largest double: the scale to bytes was then 0, and every size was
  // dropped from the results (exit 0, an empty table).
  if (!std::isfinite(m.total())) {
    throw InputError(where, fmt::format("the values sum to {}", m.total()),
                     "values with a finite sum (only their ratios count: scale them down)");
  }
  return m;
}

void check_matrix_ranks(const TrafficMatrix& m, int ranks, const std::string& where) {
  if (m.ranks == ranks) return;
  throw InputError(where, fmt::format("{} is {} x {}, and the group has {} ranks", m.source, m.ranks, m.ranks, ranks),
                   fmt::format("a {} x {} matrix, a row per rank", ranks, ranks));
}

std::vector<std::uint64_t> peer_bytes(const TrafficMatrix& m, Bytes mean_bytes) {
  const double scale = static_cast<double>(mean_bytes.count()) * m.ranks / m.total();
  std::vector<std::uint64_t> out(m.cells.size());
  for (std::size_t k = 0; k < m.cells.size(); ++k) {
    // A hair above the product, so that a share of exactly 16 x N bytes computed a unit of rounding low is kept.
    const auto bytes = static_cast<std::uint64_t>(std::floor(m.cells[k] * scale * (1 + 1e-12)));
    out[k] = bytes & ~std::uint64_t{15};
  }
  return out;
}

TrafficLoad traffic_load(const std::vector<std::uint64_t>& peer_bytes, int ranks) {
  TrafficLoad load;
  const auto n = static_cast<std::size_t>(ranks);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t send = 0;
    std::uint64_t recv = 0;
    for (std::size_t j = 0; j < n; ++j) {
      send += peer_bytes[i * n + j];
      recv += peer_bytes[j * n + i];
    }
    total += send;
    load.max_send_bytes = std::max(load.max_send_bytes, send);
    load.max_recv_bytes = std::max(load.max_recv_bytes, recv);
  }
  load.mean_recv_bytes = static_cast<double>(total) / static_cast<double>(ranks);
  return load;
}

AlltoallvLayout alltoallv_layout(const TrafficMatrix& m, Bytes size, DataType type, int rank) {
  const std::vector<std::uint64_t> bytes = peer_bytes(m, size);
  const auto n = static_cast<std::size_t>(m.ranks);
  const auto r = static_cast<std::size_t>(rank);
  const std::uint64_t element = size_of(type);
  AlltoallvLayout out;
  out.load = traffic_load(bytes, m.ranks);
  for (std::size_t peer = 0; peer < n; ++peer) {
    out.send_counts.push_back(bytes[r * n + peer] / element);
    out.recv_counts.push_back(bytes[peer * n + r] / element);
  }
  CollectiveLayout& l = out.layout;
  l.send_count = std::accumulate(out.send_counts.begin(), out.send_counts.end(), std::uint64_t{0});
  l.recv_count = std::accumulate(out.recv_counts.begin(), out.recv_counts.end(), std::uint64_t{0});
  const std::uint64_t total = std::accumulate(bytes.begin(), bytes.end(), std::uint64_t{0});
  out.mean_bytes = Bytes(total / n);
  l.count = total / (n * n * element);
  l.size = Bytes(std::max(out.load.max_send_bytes, out.load.max_recv_bytes));
  l.algbw_bytes = l.size;
  l.busbw_factor = busbw_factor(Collective::kAllToAllV, m.ranks);
  return out;
}

}  // namespace commscale
