#pragma once

// Shared by the predictor's tests: targets on the source tree's catalog, and plans in one line.

#include <string>

#include "hw_test_support.hpp"
#include "parallel/plan.hpp"
#include "predict/target.hpp"
#include "workload/presets.hpp"

namespace commscale::predict::testing {

inline Target target(const std::string& cluster, int nodes = 1) {
  const hw::Catalog& catalog = hw::testing::catalog();
  return make_target(catalog, catalog.cluster(cluster, "test"), nodes, nullptr);
}

inline ParallelPlan plan(int dp, int tp, int pp, int global_batch) {
  ParallelPlan p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.global_batch = global_batch;
  return p;
}

}  // namespace commscale::predict::testing
