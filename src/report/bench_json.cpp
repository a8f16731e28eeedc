#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

#include "core/rewritten_json_file.hpp"
#include "report/bench_reporters.hpp"

namespace commscale {
namespace {

nlohmann::json placement_json(const PlacementResult& p) {
  return {{"time_us", p.time_us},
          {"samples", summary_us_json(p.sample_stats)},
          {"algbw_GBps", p.algbw.value()},
          {"busbw_GBps", p.busbw.value()},
          {"wrong", p.checked ? nlohmann::json(p.wrong) : nlohmann::json(nullptr)},
          {"samples_us", p.samples_us}};
}

std::string_view split_name(SplitKind kind) {
  switch (kind) {
    case SplitKind::kNone: return "none";
    case SplitKind::kConsecutive: return "consecutive";
    case SplitKind::kStrided: return "strided";
  }
  return "";
}

// Rewrites the whole file after every row (core/rewritten_json_file.hpp).
class JsonBenchReporter final : public BenchReporter {
 public:
  explicit JsonBenchReporter(std::string path) : file_(std::move(path)) {}

  void begin(const BenchSetup& setup) override {
    file_.doc() = {{"schema_version", kBenchSchemaVersion},
                   {"kind", "commscale-bench"},
                   {"complete", false},
                   {"context", setup.context},
                   {"config", setup},
                   {"results", nlohmann::json::array()}};
    file_.step();
  }

  void row(const BenchRow& row) override {
    file_.doc()["results"].push_back(row);
    file_.step();
  }

  void end(const BenchSummary& s) override {
    nlohmann::json& doc = file_.doc();
    doc["complete"] = true;
    nlohmann::json by_collective = nlohmann::json::array();
    for (const CollectiveSummary& c : s.collectives) {
      by_collective.push_back({{"collective", name(c.collective)},
                               {"avg_busbw_GBps", c.avg_busbw_GBps},
                               {"wrong", c.wrong},
                               {"busbw_ok", c.busbw_ok}});
    }
    doc["summary"] = {{"avg_busbw_GBps", s.avg_busbw_GBps},
                      {"collectives", by_collective},
                      {"wrong", s.wrong},
                      {"busbw_ok", s.busbw_ok},
                      {"passed", s.passed()}};
    file_.finish();
  }

 private:
  RewrittenJsonFile file_;
};

}  // namespace

void to_json(nlohmann::json& out, const BenchRow& row) {
  out = {{"collective", name(row.collective)},
         {"type", name(row.type)},
         {"redop", row.op ? nlohmann::json(name(*row.op)) : nlohmann::json(nullptr)},
         {"root", row.root ? nlohmann::json(*row.root) : nlohmann::json(nullptr)},
         {"size_bytes", row.size.count()},
         {"count", row.count},
         {"out_of_place", placement_json(row.out_of_place)},
         {"in_place", placement_json(row.in_place)}};
  if (row.traffic) {
    out["traffic"] = {{"max_send_bytes", row.traffic->max_send_bytes},
                      {"max_recv_bytes", row.traffic->max_recv_bytes},
                      {"recv_max_over_mean", row.traffic->recv_max_over_mean}};
  }
}

void to_json(nlohmann::json& out, const BenchSetup& setup) {
  const BenchOptions& o = setup.options;
  out = {{"iters", o.iters},
         {"warmup_iters", o.warmup},
         {"check_iters", o.check_iters},
         {"blocking", static_cast<int>(o.blocking)},
         {"graph_launches", o.graph_launches},
         {"average", static_cast<int>(o.combine)},
         {"split", {{"kind", split_name(o.split.kind)}, {"group_size", o.split.group_size}}},
         {"group_size", setup.group_size},
         {"groups", setup.groups},
         {"group_ranks", setup.group_ranks},
         {"timeout_s", o.timeout.value()},
         {"min_busbw_GBps", o.min_busbw_GBps ? nlohmann::json(*o.min_busbw_GBps) : nlohmann::json(nullptr)},
         {"timing", setup.timing}};
  if (setup.traffic) {
    std::vector<std::vector<double>> rows;
    for (int i = 0; i < setup.traffic->ranks; ++i) {
      const auto begin = setup.traffic->cells.begin() + static_cast<std::ptrdiff_t>(i) * setup.traffic->ranks;
      rows.emplace_back(begin, begin + setup.traffic->ranks);
    }
    out["alltoallv"] = {{"source", setup.traffic->source}, {"matrix", rows}};
    if (o.routing) out["alltoallv"]["routing"] = routing_text(*o.routing);
  }
}

namespace {

PlacementResult placement_from_json(const JsonAt& in) {
  PlacementResult p;
  p.time_us = in.number("time_us");
  p.algbw = GBps(in.number("algbw_GBps"));
  p.busbw = GBps(in.number("busbw_GBps"));
  const std::optional<double> wrong = in.optional_number("wrong");
  p.checked = wrong.has_value();
  p.wrong = static_cast<std::uint64_t>(wrong.value_or(0.0));
  if (in.has("samples_us")) {
    for (const JsonAt& v : in.array("samples_us")) {
      if (!v.value().is_number()) throw InputError(v.where(), fmt::format("is a JSON {}", v.value().type_name()), "a number");
      p.samples_us.push_back(v.value().get<double>());
    }
    if (!p.samples_us.empty()) p.sample_stats = summarize(p.samples_us);
  }
  return p;
}

}  // namespace

void from_json(const JsonAt& in, BenchRow& row) {
  row = BenchRow{};
  const JsonAt collective = in.at("collective");
  row.collective = parse_collective(in.string("collective"), collective.where());
  row.type = parse_data_type(in.string("type"), in.at("type").where());
  if (in.has("redop")) row.op = parse_reduce_op(in.string("redop"), in.at("redop").where());
  if (const std::optional<double> root = in.optional_number("root")) row.root = static_cast<int>(*root);
  row.size = Bytes(static_cast<std::uint64_t>(in.number("size_bytes")));
  row.count = static_cast<std::uint64_t>(in.number_or("count", 0.0));
  row.out_of_place = placement_from_json(in.at("out_of_place"));
  row.in_place = placement_from_json(in.at("in_place"));
}

void from_json(const JsonAt& in, BenchSetup& setup) {
  setup = BenchSetup{};
  setup.group_size = static_cast<int>(in.number_or("group_size", 0));  // absent: unknown, not one rank
  setup.groups = static_cast<int>(in.number_or("groups", setup.groups));
  setup.timing = in.string_or("timing", "");
}

std::unique_ptr<BenchReporter> make_json_bench_reporter(std::string path) {
  return std::make_unique<JsonBenchReporter>(std::move(path));
}

}  // namespace commscale
