#pragma once

// A plan file (`--plan-file FILE`): a model, a parallel plan and a cluster in one JSON object, read by
// plan, train, predict, search and compare and written by `search --best-plan-file`.
//
//   {"schema_version": 1, "kind": "commscale-plan",
//    "model": "llama2-7b" | {commscale model JSON} | {Hugging Face config} | {"model_file": PATH} |
//             {"hf_config": PATH},
//    "plan": {"tp": 2, "pp": 2, "dp": 4, "world": 16, "sp": true, "zero": 1, "recompute": "selective",
//             "flash_attn": true, "kernels": "fused", "micro_batch": 1, "global_batch": 64,
//             "schedule": "1f1b", "chunks": 1, "order": "tp-dp-pp", "bucket_mib": 25, "ep": 1 (written when not 1),
//             "etp": 1 (written when not 1), "cp": 1, "cp_comm_type": "p2p" (written when cp is not 1),
//             "fp8": "delayed" (written when not "none"), "fp8_dispatch": true (written when true)},
//    "cluster": "hgx-a100" | PATH, "nodes": 2, "set": ["network.nic_rate_Gbps=400"], "note": "..."}
//
// schema_version, kind and model are required; every plan key is optional (the flag's default). Paths
// are relative to the plan file. Unknown keys are errors naming the file and key. Flags given beside
// the file override it, one by one (the command's output says which did).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "parallel/plan.hpp"

namespace commscale {

inline constexpr int kPlanFileSchemaVersion = 1;

struct PlanFileModel {
  std::string preset;
  std::string model_file;  // resolved against the plan file's folder
  std::string hf_config;
  std::optional<nlohmann::json> document;  // a model written out in the file
};

// The plan's keys, as given (absent: the flag's default). Values are checked where the flags' are.
struct PlanFileFields {
  std::optional<int> world, dp, tp, pp, zero, micro_batch, global_batch, chunks, ep, etp, cp;
  std::optional<bool> sp, flash_attn, fp8_dispatch;
  std::optional<std::string> recompute, kernels, schedule, order, cp_comm_type, fp8;
  std::optional<double> bucket_mib;
};

struct PlanFile {
  std::string path;
  PlanFileModel model;
  PlanFileFields plan;
  std::string cluster;           // empty when absent; a path is resolved against the plan file's folder
  int nodes = 0;                 // 0 when absent
  std::vector<std::string> set;  // what-if overrides (hw/overrides.hpp), as --set takes them
};

// Throws InputError naming the file and key.
[[nodiscard]] PlanFile load_plan_file(const std::string& path);

// The file form of a resolved model and plan (what `search --best-plan-file` writes): the model inline
// (model_to_json), every plan key, the cluster and node count when given.
[[nodiscard]] nlohmann::ordered_json plan_file_json(const TransformerConfig& model, const ParallelPlan& plan, int world,
                                                    const std::string& cluster, int nodes,
                                                    const std::vector<std::string>& set, const std::string& note);

// The plan key a flag is read from ("--tp" -> "tp"), or empty for a flag with none.
[[nodiscard]] std::string plan_file_key(std::string_view flag);

}  // namespace commscale
