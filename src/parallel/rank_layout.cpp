#include "parallel/rank_layout.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

constexpr std::string_view kOrderExpected =
    "tp, dp and pp once each, and cp at most once, joined by '-', e.g. tp-dp-pp, tp-pp-dp or tp-cp-dp-pp";

ParallelDim parse_dim(std::string_view text, std::string_view order) {
  for (ParallelDim dim : {ParallelDim::kTp, ParallelDim::kDp, ParallelDim::kPp, ParallelDim::kCp}) {
    if (text == name(dim)) return dim;
  }
  throw InputError("--order", fmt::format("\"{}\" has an unknown dimension \"{}\"", order, text), kOrderExpected);
}

// The dimensions of `order`, fastest-varying first, cp just after tp where the order does not name it.
std::array<ParallelDim, 4> parse_order(std::string_view order) {
  std::vector<ParallelDim> dims;
  std::array<bool, 4> seen{};
  std::size_t start = 0;
  while (true) {
    const std::size_t dash = order.find('-', start);
    const ParallelDim dim = parse_dim(order.substr(start, dash == std::string_view::npos ? dash : dash - start), order);
    if (seen[static_cast<std::size_t>(dim)]) {
      throw InputError("--order", fmt::format("\"{}\" names {} twice", order, name(dim)), kOrderExpected);
    }
    seen[static_cast<std::size_t>(dim)] = true;
    dims.push_back(dim);
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  if (!seen[0] || !seen[1] || !seen[2]) {
    throw InputError("--order", fmt::format("\"{}\" does not have the three dimensions tp, dp and pp", order),
                     kOrderExpected);
  }
  if (!seen[static_cast<std::size_t>(ParallelDim::kCp)]) {
    const auto tp = std::find(dims.begin(), dims.end(), ParallelDim::kTp);
    dims.insert(tp + 1, ParallelDim::kCp);
  }
  return {dims[0], dims[1], dims[2], dims[3]};
}

}  // namespace

std::string_view name(ParallelDim dim) noexcept {
  switch (dim) {
    case ParallelDim::kTp:
      return "tp";
    case ParallelDim::kDp:
      return "dp";
    case ParallelDim::kPp:
      return "pp";
    case ParallelDim::kCp:
      return "cp";
  }
  return "?";
}

int RankCoords::get(ParallelDim dim) const noexcept {
  switch (dim) {
    case ParallelDim::kTp:
      return tp;
    case ParallelDim::kDp:
      return dp;
    case ParallelDim::kPp:
      return pp;
    case ParallelDim::kCp:
      return cp;
  }
  return 0;
}

RankLayout::RankLayout(int tp, int dp, int pp, std::string_view order, int cp) : sizes_{tp, dp, pp, cp}, order_(order) {
  int stride = 1;
  for (ParallelDim dim : parse_order(order)) {
    strides_[static_cast<std::size_t>(dim)] = stride;
    stride *= sizes_[static_cast<std::size_t>(dim)];
  }
}

RankCoords RankLayout::coords(int rank) const noexcept {
  const auto along = [&](ParallelDim dim) {
    const auto i = static_cast<std::size_t>(dim);
    return rank / strides_[i] % sizes_[i];
  };
  return {along(ParallelDim::kTp), along(ParallelDim::kDp), along(ParallelDim::kPp), along(ParallelDim::kCp)};
}

int RankLayout::rank(const RankCoords& c) const noexcept {
  return c.tp * strides_[0] + c.dp * strides_[1] + c.pp * strides_[2] + c.cp * strides_[3];
}

std::vector<int> RankLayout::group(int rank, ParallelDim a, ParallelDim b) const {
  std::vector<int> members;
  for (int first : group(rank, a)) {
    const std::vector<int> along = group(first, b);
    members.insert(members.end(), along.begin(), along.end());
  }
  std::sort(members.begin(), members.end());
  return members;
}

ExpertLayout::ExpertLayout(int tp, int dp, int pp, int ep, std::string_view order, int etp, int cp) {
  // The dense ranks of a stage, regrouped: tp x cp x dp.
  const std::int64_t stage_ranks = std::int64_t{tp} * cp * dp;
  const std::string dense_text =
      cp > 1 ? fmt::format("tp {} x cp {} x dp {}", tp, cp, dp) : fmt::format("tp {} x dp {}", tp, dp);
  const std::string_view dense_name = cp > 1 ? "tp x cp x dp" : "tp x dp";
  if (ep < 1 || stage_ranks % ep != 0) {
    throw InputError("--ep", fmt::format("{} does not divide {}", ep, dense_text),
                     fmt::format("a divisor of {}", dense_name));
  }
  if (etp < 1 || stage_ranks % (std::int64_t{etp} * ep) != 0) {
    throw InputError("--etp", fmt::format("{} x ep {} does not divide {}", etp, ep, dense_text),
                     fmt::format("an expert-tensor-parallel size whose product with --ep divides {}", dense_name));
  }
  sizes_ = {etp, ep, static_cast<int>(stage_ranks / (std::int64_t{etp} * ep)), pp};
  int stride = 1;
  for (ParallelDim dim : parse_order(order)) {
    // tp becomes the expert-tensor dimension; ep goes just before dp; cp is folded into edp (its size is 1 in
    // Megatron-Core's expert generator).
    if (dim == ParallelDim::kCp) continue;
    if (dim == ParallelDim::kDp) {
      strides_[1] = stride;
      stride *= sizes_[1];
    }
    const std::size_t i = dim == ParallelDim::kTp ? 0 : dim == ParallelDim::kDp ? 2 : 3;
    strides_[i] = stride;
    stride *= sizes_[i];
  }
  const RankLayout dense(tp, dp, pp, order, cp);
  for (int rank = 0; rank < dense.world_size(); ++rank) {
    if (rank / strides_[3] % pp != dense.coords(rank).pp) {
      throw InputError("--order",
                       fmt::format("\"{}\" puts rank {} in stage {} and its experts in stage {}", order, rank,
                                   dense.coords(rank).pp, rank / strides_[3] % pp),
                       "an order whose expert ranks stay in their stage, e.g. tp-dp-pp (pp last)");
    }
  }
}

std::vector<int> ExpertLayout::group(int rank, ExpertDim dim) const {
  const std::size_t i = index(dim);
  const int base = rank - coord(rank, dim) * strides_[i];
  std::vector<int> members(static_cast<std::size_t>(sizes_[i]));
  for (int k = 0; k < sizes_[i]; ++k) members[static_cast<std::size_t>(k)] = base + k * strides_[i];
  return members;
}

std::vector<int> RankLayout::group(int rank, ParallelDim dim) const {
  const auto i = static_cast<std::size_t>(dim);
  const int base = rank - coords(rank).get(dim) * strides_[i];
  std::vector<int> members(static_cast<std::size_t>(sizes_[i]));
  for (int k = 0; k < sizes_[i]; ++k) members[static_cast<std::size_t>(k)] = base + k * strides_[i];
  return members;
}

}  // namespace commscale
