// Reading, checking and writing calibration profiles (the format is in CALIBRATION.md).

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/json_numbers.hpp"
#include "hw/json_reader.hpp"
#include "predict/calibration.hpp"
#include "predict/calibration_sections.hpp"
#include "predict/compute_model.hpp"

namespace commscale::predict {
namespace {

using hw::JsonObject;

constexpr int kMaxDim = 1 << 30;

hw::PathClass parse_path_class(const std::string& text, const std::string& where) {
  for (std::size_t i = 0; i < hw::kPathClassCount; ++i) {
    const auto c = static_cast<hw::PathClass>(i);
    if (hw::name(c) == text) return c;
  }
  throw InputError(where, fmt::format("unknown path class \"{}\"", text),
                   "nvlink, pcie, host_staged, socket or network");
}

// Bounds of a profile's figures: a timed call of more than an hour, or more than a petabyte, is
// not a measurement (and 1e300 s would overflow the rates computed from it).
constexpr double kMaxSeconds = 3600.0;
constexpr double kMaxMicroseconds = kMaxSeconds * 1e6;
constexpr double kMaxBytes = 1e15;

void read_machine(JsonObject& top, const hw::Catalog& catalog, CalibrationProfile& p) {
  JsonObject m = top.object("machine");
  p.gpu = catalog.gpu(m.string("gpu"), m.where("gpu"));
  p.source = m.string("source");
  if (m.has("cluster")) p.cluster = m.string("cluster");
  if (m.has("gpus")) p.gpus = m.integer("gpus", 1, 1 << 20);
  if (m.has("description")) p.description = m.string("description");
  if (m.has("date")) p.date = m.string("date");
  m.finish();
}

GemmPoint read_gemm(JsonObject& o, const hw::GpuSpec& gpu) {
  GemmPoint g;
  g.m = o.integer("m", 1, kMaxDim);
  g.n = o.integer("n", 1, kMaxDim);
  g.k = o.integer("k", 1, kMaxDim);
  if (o.has("batch")) g.batch = o.integer("batch", 1, kMaxDim);
  g.dtype = parse_element_type(o.string("dtype"), o.where("dtype"));
  if (g.dtype != DataType::kBFloat16 && g.dtype != DataType::kFloat16 && g.dtype != DataType::kFloat32 &&
      g.dtype != DataType::kFp8E4M3) {
    throw InputError(o.where("dtype"), fmt::format("{}", name(g.dtype)), "bf16, fp16, fp32 or fp8_e4m3");
  }
  g.time = Seconds(hw::positive_number(o, "seconds", kMaxSeconds));
  o.finish();
  const auto rate = dense_rate(gpu, g.dtype, DataType::kFloat32);
  if (!rate)
    throw InputError(o.where("dtype"), fmt::format("{} has no {} rate in the catalog", gpu.name, name(g.dtype)));
  const Gemm shape = make_gemm(g.m, g.n, g.k, g.batch, g.dtype);
  g.efficiency = shape.flops.value() / g.time.value() / rate->value();
  if (g.efficiency > 1.05) {
    throw InputError(
        o.where("seconds"),
        fmt::format("{:.4g} s is {:.0f}% of {}'s dense peak", g.time.value(), 100 * g.efficiency, gpu.name),
        "a time no faster than the catalog's peak rate allows");
  }
  return g;
}

// Two times for one shape: which one the predictor used would depend on the order of the rows.
void reject_duplicate_gemms(const std::vector<GemmPoint>& gemms, const std::string& where) {
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, DataType>> shapes;
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const GemmPoint& g = gemms[i];
    if (!shapes.emplace(g.m, g.n, g.k, g.batch, g.dtype).second) {
      throw InputError(fmt::format("{}[{}]", where, i),
                       fmt::format("{} x {} x {} (batch {}, {}) appears twice", g.m, g.n, g.k, g.batch, name(g.dtype)),
                       "one time per GEMM shape and type (the median of the repetitions)");
    }
  }
}

MemoryPoint read_memory(JsonObject& o, const hw::GpuSpec& gpu) {
  MemoryPoint m;
  const double bytes = hw::positive_number(o, "bytes", kMaxBytes);
  m.bytes = Bytes(static_cast<std::uint64_t>(bytes));
  m.time = Seconds(hw::positive_number(o, "seconds", kMaxSeconds));
  if (o.has("kernel")) m.kernel = o.string("kernel");
  if (o.has("kind")) {
    MemoryRowKey key;
    key.kind = parse_memory_kernel_kind(o.string("kind"), o.where("kind"));
    if (o.has("kernels")) key.kernels = parse_kernel_set(o.string("kernels"), o.where("kernels"));
    if (o.has("phase")) {
      const std::string phase = o.string("phase");
      if (phase != "fwd" && phase != "bwd") throw InputError(o.where("phase"), fmt::format("\"{}\"", phase), "fwd or bwd");
      key.backward = phase == "bwd";
    }
    m.key = key;
  } else {
    for (const char* keyed : {"kernels", "phase"}) {
      if (o.has(keyed)) throw InputError(o.where(keyed), "given without \"kind\"", "a kind for the row, or neither");
    }
  }
  o.finish();
  m.efficiency = bandwidth(m.bytes, m.time) / *gpu.memory_bw.value;
  if (m.efficiency > 1.05) {
    throw InputError(o.where("seconds"), fmt::format("{:.0f}% of {}'s memory bandwidth", 100 * m.efficiency, gpu.name),
                     "a time no faster than the catalog's memory bandwidth allows");
  }
  return m;
}

CollectiveCurve read_curve(JsonObject& o) {
  CollectiveCurve c;
  c.collective = parse_collective(o.string("collective"), o.where("collective"));
  c.ranks = o.integer("ranks", 2, 1 << 20);
  c.nodes = o.has("nodes") ? o.integer("nodes", 1, 1 << 16) : 1;
  c.path_class = parse_path_class(o.string("path_class"), o.where("path_class"));
  if (o.has("env")) c.env = o.string("env");
  if (o.has("source")) c.source = o.string("source");
  for (JsonObject& p : o.objects("points")) {
    const double size = hw::positive_number(p, "size_bytes", kMaxBytes);
    c.points.push_back(
        {Bytes(static_cast<std::uint64_t>(size)), microseconds(hw::positive_number(p, "time_us", kMaxMicroseconds))});
    p.finish();
  }
  if (c.points.empty()) throw InputError(o.where("points"), "no points", "at least one {size_bytes, time_us}");
  std::sort(c.points.begin(), c.points.end(), [](const auto& a, const auto& b) { return a.size < b.size; });
  for (std::size_t i = 1; i < c.points.size(); ++i) {
    if (c.points[i].size == c.points[i - 1].size) {
      throw InputError(o.where("points"), fmt::format("size {} appears twice", c.points[i].size.count()),
                       "one time per size (the median of the repetitions)");
    }
  }
  o.finish();
  return c;
}

}  // namespace

CalibrationProfile parse_calibration(const nlohmann::json& doc, const std::string& file, const hw::Catalog& catalog) {
  JsonObject top(doc, file, "");
  if (top.integer("schema_version", 0, 1000) != kCalibrationSchemaVersion) {
    throw InputError(top.where("schema_version"), "unsupported version", fmt::format("{}", kCalibrationSchemaVersion));
  }
  if (top.string("kind") != "commscale-calibration") {
    throw InputError(top.where("kind"), "not a calibration profile", "\"commscale-calibration\"");
  }
  CalibrationProfile p;
  p.file = file;
  read_machine(top, catalog, p);
  if (top.has("gemm")) {
    for (JsonObject& o : top.objects("gemm")) p.gemm.push_back(read_gemm(o, p.gpu));
    reject_duplicate_gemms(p.gemm, top.where("gemm"));
  }
  if (top.has("memory")) {
    for (JsonObject& o : top.objects("memory")) p.memory.push_back(read_memory(o, p.gpu));
    std::sort(p.memory.begin(), p.memory.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
    for (std::size_t i = 0; i < p.memory.size(); ++i) {
      for (std::size_t j = i + 1; j < p.memory.size() && p.memory[j].bytes == p.memory[i].bytes; ++j) {
        if (p.memory[j].key == p.memory[i].key) {
          throw InputError(top.where("memory"),
                           fmt::format("{} bytes appear twice for the same kernels", p.memory[i].bytes.count()),
                           "one time per size and kind (the median of the repetitions)");
        }
      }
    }
  }
  if (top.has("collectives")) {
    for (JsonObject& o : top.objects("collectives")) p.collectives.push_back(read_curve(o));
  }
  if (top.has("attention")) {
    for (JsonObject& o : top.objects("attention")) p.attention.push_back(read_attention(o, p.gpu));
    reject_duplicate_attention(p.attention, top.where("attention"));
  }
  if (top.has("host")) {
    for (JsonObject& o : top.objects("host")) p.host.push_back(read_host_costs(o));
    reject_duplicate_host(p.host, top.where("host"));
  }
  if (top.has("device")) {
    JsonObject device = top.object("device");
    p.device = read_device(device);
  }
  if (top.has("interference")) {
    for (JsonObject& o : top.objects("interference")) p.interference.push_back(read_interference(o));
    reject_duplicate_interference(p.interference, top.where("interference"));
  }
  if (top.has("clock")) {
    JsonObject clock = top.object("clock");
    p.clock = read_clock(clock);
  }
  top.finish();
  return p;
}

CalibrationProfile load_calibration(const std::string& path, const hw::Catalog& catalog) {
  return parse_calibration(hw::read_json_file(path), path, catalog);
}

nlohmann::ordered_json calibration_to_json(const CalibrationProfile& p) {
  nlohmann::ordered_json machine = {{"gpu", p.gpu.name}, {"source", p.source}};
  if (!p.cluster.empty()) machine["cluster"] = p.cluster;
  if (p.gpus > 0) machine["gpus"] = p.gpus;
  if (!p.description.empty()) machine["description"] = p.description;
  if (!p.date.empty()) machine["date"] = p.date;
  nlohmann::ordered_json gemm = nlohmann::ordered_json::array();
  for (const GemmPoint& g : p.gemm) {
    gemm.push_back({{"m", g.m},
                    {"n", g.n},
                    {"k", g.k},
                    {"batch", g.batch},
                    {"dtype", name(g.dtype)},
                    {"seconds", g.time.value()}});
  }
  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (const MemoryPoint& m : p.memory) {
    nlohmann::ordered_json row = {{"bytes", m.bytes.count()}, {"seconds", m.time.value()}};
    if (!m.kernel.empty()) row["kernel"] = m.kernel;
    if (m.key) {
      row["kind"] = name(m.key->kind);
      row["kernels"] = name(m.key->kernels);
      row["phase"] = m.key->backward ? "bwd" : "fwd";
    }
    memory.push_back(row);
  }
  nlohmann::ordered_json curves = nlohmann::ordered_json::array();
  for (const CollectiveCurve& c : p.collectives) {
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    for (const CollectivePoint& pt : c.points)
      points.push_back({{"size_bytes", pt.size.count()}, {"time_us", to_us(pt.time)}});
    nlohmann::ordered_json curve = {{"collective", name(c.collective)},
                                    {"ranks", c.ranks},
                                    {"nodes", c.nodes},
                                    {"path_class", hw::name(c.path_class)}};
    if (!c.env.empty()) curve["env"] = c.env;
    if (!c.source.empty()) curve["source"] = c.source;
    curve["points"] = points;
    curves.push_back(curve);
  }
  nlohmann::ordered_json out = {{"schema_version", kCalibrationSchemaVersion},
                                {"kind", "commscale-calibration"},
                                {"machine", machine},
                                {"gemm", gemm},
                                {"memory", memory},
                                {"collectives", curves}};
  // The newer sections only where the profile has them: older profiles are written back unchanged.
  const auto rows = [](const auto& items) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const auto& item : items) array.push_back(section_json(item));
    return array;
  };
  if (!p.attention.empty()) out["attention"] = rows(p.attention);
  if (!p.host.empty()) out["host"] = rows(p.host);
  if (p.device.kernel_floor || !p.device.source.empty()) out["device"] = section_json(p.device);
  if (!p.interference.empty()) out["interference"] = rows(p.interference);
  if (!p.clock.points.empty()) out["clock"] = section_json(p.clock);
  return out;
}

}  // namespace commscale::predict
