#pragma once

// Shared by the predictor's tests: targets on the source tree's catalog, and plans in one line.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hw_test_support.hpp"
#include "parallel/plan.hpp"
#include "predict/simulator.hpp"
#include "predict/target.hpp"
#include "program/op.hpp"
#include "workload/presets.hpp"

namespace commscale::predict::testing {

inline Target target(const std::string& cluster, int nodes = 1) {
  const hw::Catalog& catalog = hw::testing::catalog();
  return make_target(catalog, catalog.cluster(cluster, "test"), nodes, nullptr);
}

// The target as commscale's own executor runs on it (`train`): its GEMMs at the executor's figures
// (AttentionIssue::kPerProduct), no host costs.
inline Target executor_target(const std::string& cluster, int nodes = 1) {
  const hw::Catalog& catalog = hw::testing::catalog();
  HostCosts executor;
  executor.attention = AttentionIssue::kPerProduct;
  return make_target(catalog, catalog.cluster(cluster, "test"), nodes, nullptr, executor);
}

inline ParallelPlan plan(int dp, int tp, int pp, int global_batch) {
  ParallelPlan p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.global_batch = global_batch;
  return p;
}

// Durations by op name, the same on every rank unless a rank-specific entry exists.
class TableCosts final : public OpCosts {
 public:
  explicit TableCosts(std::map<std::string, double> by_name, std::map<std::pair<int, std::string>, double> by_rank = {})
      : by_name_(std::move(by_name)), by_rank_(std::move(by_rank)) {}
  [[nodiscard]] Seconds duration(int rank, const Op& op) const override {
    const auto r = by_rank_.find({rank, op.name});
    return Seconds(r != by_rank_.end() ? r->second : by_name_.at(op.name));
  }
  [[nodiscard]] std::uint64_t signature(int rank) const override {
    std::uint64_t s = 0;
    for (const auto& [key, t] : by_rank_) s += key.first == rank ? static_cast<std::uint64_t>(t * 1000) : 0;
    return s;
  }

 private:
  std::map<std::string, double> by_name_;
  std::map<std::pair<int, std::string>, double> by_rank_;
};

inline Op op(OpId id, Stream stream, std::vector<OpId> deps, std::string name, OpPayload payload) {
  Op o;
  o.id = id;
  o.stream = stream;
  o.deps = std::move(deps);
  o.name = std::move(name);
  o.payload = std::move(payload);
  return o;
}

}  // namespace commscale::predict::testing
