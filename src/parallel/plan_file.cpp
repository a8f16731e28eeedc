#include "parallel/plan_file.hpp"

#include <array>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "hw/catalog.hpp"
#include "hw/json_reader.hpp"
#include "workload/model_spec.hpp"

namespace commscale {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 8> kTopKeys = {"schema_version", "kind",  "model", "plan",
                                                      "cluster",        "nodes", "set",   "note"};
// Plan keys and the flags they stand for.
constexpr std::array<std::pair<std::string_view, std::string_view>, 21> kPlanKeys = {
    {{"world", "--world"},
     {"dp", "--dp"},
     {"tp", "--tp"},
     {"pp", "--pp"},
     {"sp", "--sp"},
     {"zero", "--zero"},
     {"recompute", "--recompute"},
     {"flash_attn", "--flash-attn"},
     {"kernels", "--kernels"},
     {"micro_batch", "--micro-batch"},
     {"global_batch", "--global-batch"},
     {"schedule", "--schedule"},
     {"chunks", "--chunks"},
     {"order", "--order"},
     {"bucket_mib", "--bucket-mb"},
     {"ep", "--ep"},
     {"etp", "--etp"},
     {"cp", "--cp"},
     {"cp_comm_type", "--cp-comm-type"},
     {"fp8", "--fp8"},
     {"fp8_dispatch", "--fp8-dispatch"}}};

std::string key_list(const auto& keys) {
  std::string out;
  for (const auto& k : keys) {
    if constexpr (std::is_same_v<std::decay_t<decltype(k)>, std::string_view>) {
      out += fmt::format("{}{}", out.empty() ? "" : ", ", k);
    } else {
      out += fmt::format("{}{}", out.empty() ? "" : ", ", k.first);
    }
  }
  return out;
}

void check_keys(const json& object, const std::string& where, const std::string& known, auto is_known) {
  for (const auto& item : object.items()) {
    if (!is_known(item.key())) throw InputError(fmt::format("{}{}", where, excerpt(item.key())), "unknown key", known);
  }
}

// A path in the file is relative to the file's folder.
std::string beside(const std::string& plan_path, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(plan_path).parent_path() / p).lexically_normal().string();
}

PlanFileModel read_model(const json& value, const std::string& file) {
  PlanFileModel m;
  const std::string where = fmt::format("{}: model", file);
  if (value.is_string()) {
    m.preset = hw::expect_string(value, where);
    return m;
  }
  if (!value.is_object()) {
    throw InputError(where, "is neither a preset name nor an object",
                     "\"llama2-7b\", a model object, {\"model_file\": PATH} or {\"hf_config\": PATH}");
  }
  for (std::string_view key : {"model_file", "hf_config"}) {
    if (!value.contains(std::string(key))) continue;
    if (value.size() != 1) throw InputError(fmt::format("{}.{}", where, key), "given with other keys", "it alone");
    const std::string path =
        beside(file, hw::expect_string(value.at(std::string(key)), fmt::format("{}.{}", where, key)));
    (key == "model_file" ? m.model_file : m.hf_config) = path;
    return m;
  }
  m.document = value;
  return m;
}

template <class T>
void read_plan_value(hw::JsonObject& plan, std::string_view key, std::optional<T>& out) {
  if (!plan.has(key)) return;
  if constexpr (std::is_same_v<T, int>) {
    out = plan.integer(key, -(1 << 30), 1 << 30);
  } else if constexpr (std::is_same_v<T, bool>) {
    out = plan.boolean(key);
  } else if constexpr (std::is_same_v<T, double>) {
    out = plan.number(key);
  } else {
    out = plan.string(key);
  }
}

PlanFileFields read_plan(const json& value, const std::string& file) {
  hw::JsonObject plan(value, file, "plan");
  check_keys(value, fmt::format("{}: plan.", file), key_list(kPlanKeys), [](const std::string& k) {
    for (const auto& [key, flag] : kPlanKeys) {
      if (key == k) return true;
    }
    return false;
  });
  PlanFileFields f;
  read_plan_value(plan, "world", f.world);
  read_plan_value(plan, "dp", f.dp);
  read_plan_value(plan, "tp", f.tp);
  read_plan_value(plan, "pp", f.pp);
  read_plan_value(plan, "sp", f.sp);
  read_plan_value(plan, "zero", f.zero);
  read_plan_value(plan, "recompute", f.recompute);
  read_plan_value(plan, "flash_attn", f.flash_attn);
  read_plan_value(plan, "kernels", f.kernels);
  read_plan_value(plan, "micro_batch", f.micro_batch);
  read_plan_value(plan, "global_batch", f.global_batch);
  read_plan_value(plan, "schedule", f.schedule);
  read_plan_value(plan, "chunks", f.chunks);
  read_plan_value(plan, "order", f.order);
  read_plan_value(plan, "bucket_mib", f.bucket_mib);
  read_plan_value(plan, "ep", f.ep);
  read_plan_value(plan, "etp", f.etp);
  read_plan_value(plan, "cp", f.cp);
  read_plan_value(plan, "cp_comm_type", f.cp_comm_type);
  read_plan_value(plan, "fp8", f.fp8);
  read_plan_value(plan, "fp8_dispatch", f.fp8_dispatch);
  return f;
}

}  // namespace

PlanFile load_plan_file(const std::string& path) {
  const json doc = hw::read_json_file(path);
  if (!doc.is_object())
    throw InputError(path, "is not a JSON object", "a plan file ({\"kind\": \"commscale-plan\", ...})");
  check_keys(doc, fmt::format("{}: ", path), key_list(kTopKeys), [](const std::string& k) {
    for (std::string_view key : kTopKeys) {
      if (key == k) return true;
    }
    return false;
  });
  hw::JsonObject top(doc, path, "");
  if (top.integer("schema_version", 0, 1 << 20) != kPlanFileSchemaVersion) {
    throw InputError(top.where("schema_version"), "unsupported version", fmt::format("{}", kPlanFileSchemaVersion));
  }
  if (const std::string kind = top.string("kind"); kind != "commscale-plan") {
    throw InputError(top.where("kind"), fmt::format("is \"{}\"", kind), "\"commscale-plan\"");
  }
  PlanFile f;
  f.path = path;
  f.model = read_model(top.required("model"), path);
  if (top.has("plan")) f.plan = read_plan(top.required("plan"), path);
  if (top.has("cluster")) {
    const std::string cluster = top.string("cluster");
    f.cluster = hw::looks_like_path(cluster) ? beside(path, cluster) : cluster;
  }
  if (top.has("nodes")) f.nodes = top.integer("nodes", 1, 1 << 20);
  if (top.has("set")) f.set = top.strings("set");
  if (top.has("note")) (void)top.string("note");
  return f;
}

nlohmann::ordered_json plan_file_json(const TransformerConfig& model, const ParallelPlan& p, int world,
                                      const std::string& cluster, int nodes, const std::vector<std::string>& set,
                                      const std::string& note) {
  nlohmann::ordered_json plan = {
      {"world", world},
      {"dp", p.dp},
      {"tp", p.tp},
      {"pp", p.pp},
      {"sp", p.sequence_parallel},
      {"zero", p.zero_stage},
      {"recompute", name(p.recompute)},
      {"flash_attn", p.flash_attention},
      {"kernels", name(p.kernels)},
      {"micro_batch", p.micro_batch},
      {"global_batch", p.global_batch},
      {"schedule", name(p.schedule)},
      {"chunks", p.chunks},
      {"order", p.order},
      {"bucket_mib", static_cast<double>(p.bucket_bytes.count()) / static_cast<double>(kMiB)}};
  if (p.ep != 1) plan["ep"] = p.ep;  // only for a model with experts: a dense plan's file is as it was
  if (p.etp != 1) plan["etp"] = p.etp;
  if (p.cp != 1) {  // only with context parallelism, likewise
    plan["cp"] = p.cp;
    plan["cp_comm_type"] = name(p.cp_comm);
  }
  if (p.fp8 != Fp8Recipe::kNone) plan["fp8"] = name(p.fp8);  // only in FP8, likewise
  if (p.fp8_dispatch) plan["fp8_dispatch"] = true;
  nlohmann::ordered_json doc = {{"schema_version", kPlanFileSchemaVersion}, {"kind", "commscale-plan"}};
  if (!note.empty()) doc["note"] = note;
  doc["model"] = nlohmann::ordered_json(model_to_json(model));
  doc["plan"] = plan;
  if (!cluster.empty()) doc["cluster"] = cluster;
  if (nodes > 0) doc["nodes"] = nodes;
  if (!set.empty()) doc["set"] = set;
  return doc;
}

std::string plan_file_key(std::string_view flag) {
  for (const auto& [key, f] : kPlanKeys) {
    if (f == flag) return std::string(key);
  }
  return {};
}

}  // namespace commscale
