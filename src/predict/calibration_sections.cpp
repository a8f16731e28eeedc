// Calibration profile sections: flash attention, host costs, device figures, interference
// (CALIBRATION.md has the format).

#include "predict/calibration_sections.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "hw/json_numbers.hpp"
#include "predict/compute_model.hpp"
#include "workload/layer_ops.hpp"

namespace commscale::predict {
namespace {

using hw::JsonObject;

constexpr double kMaxFigureSeconds = 3600.0;
constexpr int kMaxFigureDim = 1 << 30;
// Host figures: a host that spends more than a second issuing one op is not a measurement.
constexpr double kMaxHostUs = 1e6;
// Slowdowns: more than 100x is a broken probe, not interference.
constexpr double kMaxSlowdown = 100.0;

// A number from 0 to `max` (a host cost may be nothing).
double non_negative(const nlohmann::json& value, const std::string& where, double max) {
  const double v = hw::expect_number(value, where);
  if (!(v >= 0.0 && v <= max)) throw InputError(where, fmt::format("is {}", v), fmt::format("0 to {}", max));
  return v;
}

bool read_phase_is_backward(JsonObject& o) {
  const std::string phase = o.string("phase");
  if (phase != "fwd" && phase != "bwd") throw InputError(o.where("phase"), fmt::format("\"{}\"", phase), "fwd or bwd");
  return phase == "bwd";
}

// "gemm" sets a class for every phase; "bwd.gemm" one phase only, and wins over the former whatever
// the order of the keys. Every class but attention is required in every phase; a phase without an
// attention figure charges an attention call a GEMM call (host_costs.hpp).
void read_issue_costs(JsonObject& o, HostCosts& h) {
  const nlohmann::json& costs = o.required("issue_us");
  const std::string where = o.where("issue_us");
  if (!costs.is_object()) throw InputError(where, "is not an object", "{\"gemm\": us, \"kernel\": us, ...}");
  std::array<bool, kHostOpClassCount> given{};
  std::vector<std::tuple<HostPhase, HostOpClass, double>> overrides;
  for (const auto& [key, value] : costs.items()) {
    const std::string at = fmt::format("{}.{}", where, printable(key));
    const double us = non_negative(value, at, kMaxHostUs);
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos) {
      const HostOpClass c = parse_host_op_class(key, at);
      given[static_cast<std::size_t>(c)] = true;
      for (auto& phase : h.issue) phase[static_cast<std::size_t>(c)] = microseconds(us);
      if (c == HostOpClass::kAttention) h.attention_given.fill(true);
    } else {
      overrides.emplace_back(parse_host_phase(key.substr(0, dot), at), parse_host_op_class(key.substr(dot + 1), at), us);
    }
  }
  for (std::size_t c = 0; c < given.size(); ++c) {
    const auto cls = static_cast<HostOpClass>(c);
    if (given[c] || cls == HostOpClass::kAttention) continue;
    const auto phases = std::count_if(overrides.begin(), overrides.end(),
                                      [&](const auto& t) { return std::get<1>(t) == cls; });
    if (phases < kHostPhaseCount) {
      throw InputError(where, fmt::format("gives no cost for \"{}\" in every phase", name(cls)),
                       fmt::format("\"{}\", or \"fwd.{}\", \"bwd.{}\" and \"step.{}\"", name(cls), name(cls), name(cls),
                                   name(cls)));
    }
  }
  for (const auto& [phase, cls, us] : overrides) {
    h.issue[static_cast<std::size_t>(phase)][static_cast<std::size_t>(cls)] = microseconds(us);
    if (cls == HostOpClass::kAttention) h.attention_given[static_cast<std::size_t>(phase)] = true;
  }
}

}  // namespace

std::string_view name(Beside b) noexcept { return b == Beside::kGemm ? "gemm" : "memory"; }

AttentionPoint read_attention(JsonObject& o, const hw::GpuSpec& gpu) {
  AttentionPoint a;
  a.seq = o.integer("seq", 1, kMaxFigureDim);
  a.batch = o.integer("batch", 1, kMaxFigureDim);
  a.head_dim = o.integer("head_dim", 1, 1 << 16);
  a.dtype = parse_data_type(o.string("dtype"), o.where("dtype"));
  a.backward = read_phase_is_backward(o);
  if (o.has("dropout")) a.dropout = o.boolean("dropout");
  a.time = Seconds(hw::positive_number(o, "seconds", kMaxFigureSeconds));
  if (o.has("kernel")) a.kernel = o.string("kernel");
  o.finish();
  const auto rate = dense_rate(gpu, a.dtype, DataType::kFloat32);
  if (!rate) throw InputError(o.where("dtype"), fmt::format("{} has no {} rate in the catalog", gpu.name, name(a.dtype)));
  a.efficiency = flash_attention_flops(a.seq, a.batch, a.head_dim, a.backward).value() / a.time.value() / rate->value();
  if (a.efficiency > 1.05) {
    throw InputError(o.where("seconds"),
                     fmt::format("{:.4g} s is {:.0f}% of {}'s dense peak", a.time.value(), 100 * a.efficiency, gpu.name),
                     "a time no faster than the catalog's peak rate allows");
  }
  return a;
}

HostCosts read_host_costs(JsonObject& o) {
  HostCosts h;
  h.framework = o.string("framework");
  if (h.framework.empty()) throw InputError(o.where("framework"), "is empty", "a framework's name");
  h.source = o.string("source");
  read_issue_costs(o, h);
  if (o.has("step_us")) h.step = microseconds(non_negative(o.required("step_us"), o.where("step_us"), kMaxHostUs));
  if (o.has("sync")) h.sync = parse_host_sync(o.string("sync"), o.where("sync"));
  h.attention = o.has("attention_issue") ? parse_attention_issue(o.string("attention_issue"), o.where("attention_issue"))
                                         : default_attention_issue(h.framework);
  const bool any_attention = std::find(h.attention_given.begin(), h.attention_given.end(), true) != h.attention_given.end();
  if (any_attention && h.attention == AttentionIssue::kPerProduct) {
    // The figure would never be charged: each product is a GEMM call.
    throw InputError(o.where("issue_us"), "gives an \"attention\" cost for a framework whose attention_issue is product",
                     "no attention cost, or attention_issue \"kernel\" (one call per fused attention kernel)");
  }
  o.finish();
  return h;
}

DeviceFigures read_device(JsonObject& o) {
  DeviceFigures d;
  if (o.has("kernel_floor_us")) d.kernel_floor = microseconds(hw::positive_number(o, "kernel_floor_us", 1e4));
  d.source = o.string("source");
  o.finish();
  return d;
}

ClockCurve read_clock(JsonObject& o) {
  ClockCurve c;
  c.gemm = o.string("gemm");
  c.source = o.string("source");
  std::vector<JsonObject> points = o.objects("points");
  if (points.empty()) throw InputError(o.where("points"), "is empty", "at least one {gemm_share, speedup} point");
  for (JsonObject& p : points) {
    ClockPoint point;
    point.gemm_share = hw::positive_number(p, "gemm_share", 1.0);
    point.speedup = hw::positive_number(p, "speedup", 10.0);
    p.finish();
    c.points.push_back(point);
  }
  std::sort(c.points.begin(), c.points.end(),
            [](const ClockPoint& a, const ClockPoint& b) { return a.gemm_share < b.gemm_share; });
  for (std::size_t i = 1; i < c.points.size(); ++i) {
    if (c.points[i].gemm_share == c.points[i - 1].gemm_share) {
      throw InputError(o.where("points"), fmt::format("gemm_share {} appears twice", c.points[i].gemm_share),
                       "one point per share");
    }
  }
  o.finish();
  return c;
}

InterferencePoint read_interference(JsonObject& o) {
  InterferencePoint p;
  p.sms = o.integer("sms", 1, 1 << 12);
  p.probe_GBps = non_negative(o.required("probe_GBps"), o.where("probe_GBps"), 1e6);
  const std::string beside = o.string("beside");
  if (beside != "gemm" && beside != "memory") {
    throw InputError(o.where("beside"), fmt::format("\"{}\"", printable(beside)), "gemm or memory");
  }
  p.beside = beside == "gemm" ? Beside::kGemm : Beside::kMemory;
  for (const char* key : {"compute_slowdown", "probe_slowdown"}) {
    const double v = hw::positive_number(o, key, kMaxSlowdown);
    // A kernel is not faster beside another than alone, beyond the noise of a measurement.
    if (v < 0.9) throw InputError(o.where(key), fmt::format("is {}", v), "0.9 or more (time together over time alone)");
    (key[0] == 'c' ? p.compute_slowdown : p.probe_slowdown) = v;
  }
  if (o.has("source")) p.source = o.string("source");
  o.finish();
  return p;
}

void reject_duplicate_attention(const std::vector<AttentionPoint>& rows, const std::string& where) {
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, DataType, bool, bool>> seen;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const AttentionPoint& a = rows[i];
    if (!seen.emplace(a.seq, a.batch, a.head_dim, a.dtype, a.backward, a.dropout).second) {
      throw InputError(fmt::format("{}[{}]", where, i),
                       "the same case (seq, batch, head_dim, dtype, phase, dropout) appears twice",
                       "one time per case (the median of the repetitions)");
    }
  }
}

void reject_duplicate_host(const std::vector<HostCosts>& rows, const std::string& where) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!seen.insert(rows[i].framework).second) {
      throw InputError(fmt::format("{}[{}]", where, i), fmt::format("framework \"{}\" appears twice", rows[i].framework),
                       "one row per framework");
    }
  }
}

void reject_duplicate_interference(const std::vector<InterferencePoint>& rows, const std::string& where) {
  std::set<std::tuple<int, double, Beside>> seen;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const InterferencePoint& p = rows[i];
    if (!seen.emplace(p.sms, p.probe_GBps, p.beside).second) {
      throw InputError(fmt::format("{}[{}]", where, i), "the same probe (sms, probe_GBps, beside) appears twice",
                       "one row per probe setting");
    }
  }
}

nlohmann::ordered_json section_json(const AttentionPoint& a) {
  nlohmann::ordered_json row = {{"seq", a.seq},          {"batch", a.batch},
                                {"head_dim", a.head_dim}, {"dtype", name(a.dtype)},
                                {"phase", a.backward ? "bwd" : "fwd"}, {"seconds", a.time.value()}};
  if (a.dropout) row["dropout"] = true;
  if (!a.kernel.empty()) row["kernel"] = a.kernel;
  return row;
}

nlohmann::ordered_json section_json(const HostCosts& h) {
  // Written as one key per phase and class: exact, whatever form the file it came from had.
  nlohmann::ordered_json issue = nlohmann::ordered_json::object();
  // A phase's attention figure only where the row has one (without it, the GEMM figure stands for it).
  for (int p = 0; p < kHostPhaseCount; ++p) {
    for (int c = 0; c < kHostOpClassCount; ++c) {
      const auto cls = static_cast<HostOpClass>(c);
      if (cls == HostOpClass::kAttention && !h.attention_given[static_cast<std::size_t>(p)]) continue;
      issue[fmt::format("{}.{}", name(static_cast<HostPhase>(p)), name(cls))] =
          to_us(h.issue[static_cast<std::size_t>(p)][static_cast<std::size_t>(c)]);
    }
  }
  return {{"framework", h.framework}, {"source", h.source}, {"issue_us", issue}, {"step_us", to_us(h.step)},
          {"sync", name(h.sync)}, {"attention_issue", name(h.attention)}};
}

nlohmann::ordered_json section_json(const DeviceFigures& d) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (d.kernel_floor) out["kernel_floor_us"] = to_us(*d.kernel_floor);
  out["source"] = d.source;
  return out;
}

nlohmann::ordered_json section_json(const ClockCurve& c) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const ClockPoint& p : c.points) points.push_back({{"gemm_share", p.gemm_share}, {"speedup", p.speedup}});
  return {{"gemm", c.gemm}, {"source", c.source}, {"points", points}};
}

nlohmann::ordered_json section_json(const InterferencePoint& p) {
  nlohmann::ordered_json row = {{"sms", p.sms},
                                {"probe_GBps", p.probe_GBps},
                                {"beside", name(p.beside)},
                                {"compute_slowdown", p.compute_slowdown},
                                {"probe_slowdown", p.probe_slowdown}};
  if (!p.source.empty()) row["source"] = p.source;
  return row;
}

}  // namespace commscale::predict
