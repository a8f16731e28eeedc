#include "report/calibration_merge.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {

using Json = nlohmann::ordered_json;

void merge_calibration(Json& base, const Json& more, const std::string& where) {
  auto gpu_of = [](const Json& profile) {
    return profile.contains("machine") ? profile["machine"].value("gpu", std::string()) : std::string();
  };
  if (gpu_of(base) != gpu_of(more)) {
    throw InputError(where, fmt::format("it is a profile of \"{}\", and this run measured \"{}\"", gpu_of(base),
                                        gpu_of(more)),
                     "a profile of the same GPU");
  }
  auto merge = [&](const char* key, auto same) {
    if (!more.contains(key)) return;
    Json& rows = base[key];
    if (!rows.is_array()) rows = Json::array();
    for (const Json& row : more[key]) {
      const auto it = std::find_if(rows.begin(), rows.end(), [&](const Json& r) { return same(r, row); });
      if (it != rows.end()) {
        *it = row;
      } else {
        rows.push_back(row);
      }
    }
  };
  auto equal_on = [](std::vector<std::string> keys) {
    return [keys = std::move(keys)](const Json& a, const Json& b) {
      return std::all_of(keys.begin(), keys.end(),
                         [&](const std::string& k) { return a.value(k, Json()) == b.value(k, Json()); });
    };
  };
  merge("gemm", equal_on({"m", "n", "k", "batch", "dtype"}));
  // A memory row is of the generic curve or of one kind, kernel set and phase (defaults as parsed).
  merge("memory", [](const Json& a, const Json& b) {
    const auto key = [](const Json& r) {
      if (!r.contains("kind")) return Json::array({r.value("bytes", Json())});
      return Json::array({r.value("bytes", Json()), r["kind"], r.value("kernels", Json("fused")),
                          r.value("phase", Json("fwd"))});
    };
    return key(a) == key(b);
  });
  merge("collectives", equal_on({"collective", "ranks", "nodes", "path_class"}));
  merge("attention", equal_on({"seq", "batch", "head_dim", "dtype", "phase"}));
  merge("host", equal_on({"framework"}));
  merge("interference", equal_on({"sms", "probe_GBps", "beside"}));
  if (more.contains("device")) base["device"] = more["device"];
  if (more.contains("clock")) base["clock"] = more["clock"];
  base["machine"]["source"] =
      fmt::format("{}; {}", base["machine"].value("source", ""), more["machine"].value("source", ""));
}

}  // namespace commscale
