#pragma once

// Rank layout as pure math, in the manner of Megatron-LM's RankGenerator: an order string such as
// "tp-dp-pp" lists the dimensions fastest-varying first, so with "tp-dp-pp" the tp ranks of a group
// are adjacent (rank = tp + TP * (dp + DP * pp)) and share a node.
// Context parallelism adds a fourth dimension, cp: an order may name it ("tp-cp-dp-pp", Megatron-Core's
// default "tp-cp-ep-dp-pp" without ep, which is folded: ExpertLayout); an order without it places cp just
// after tp, as Megatron-Core's default does, so "tp-dp-pp" reads "tp-cp-dp-pp" and every layout with cp 1 is
// the three-dimensional one.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commscale {

enum class ParallelDim : std::uint8_t { kTp = 0, kDp = 1, kPp = 2, kCp = 3 };
[[nodiscard]] std::string_view name(ParallelDim dim) noexcept;  // tp dp pp cp

struct RankCoords {
  int tp = 0;
  int dp = 0;
  int pp = 0;
  int cp = 0;
  [[nodiscard]] int get(ParallelDim dim) const noexcept;
  friend bool operator==(const RankCoords&, const RankCoords&) = default;
};

class RankLayout {
 public:
  // Throws InputError naming --order unless `order` names tp, dp and pp once each, and cp at most once,
  // joined by '-'.
  RankLayout(int tp, int dp, int pp, std::string_view order, int cp = 1);

  [[nodiscard]] int world_size() const noexcept { return sizes_[0] * sizes_[1] * sizes_[2] * sizes_[3]; }
  [[nodiscard]] int size(ParallelDim dim) const noexcept { return sizes_[static_cast<int>(dim)]; }
  [[nodiscard]] const std::string& order() const noexcept { return order_; }

  [[nodiscard]] RankCoords coords(int rank) const noexcept;
  [[nodiscard]] int rank(const RankCoords& c) const noexcept;
  // The ranks that differ from `rank` only along `dim`, ordered by their coordinate on it (so a
  // member's index is its rank within the group; for pp, its stage).
  [[nodiscard]] std::vector<int> group(int rank, ParallelDim dim) const;
  // The ranks that differ from `rank` only along `a` and `b`, in rank order (Megatron-Core's "dp-cp" group:
  // the data-parallel group with context parallelism, for a = dp and b = cp).
  [[nodiscard]] std::vector<int> group(int rank, ParallelDim a, ParallelDim b) const;

 private:
  std::array<int, 4> sizes_{};    // indexed by ParallelDim
  std::array<int, 4> strides_{};  // indexed by ParallelDim
  std::string order_;
};

// The layout of a mixture-of-experts plan's expert ranks, as Megatron-Core's second RankGenerator lays them
// out (megatron/core/parallel_state.py, expert_decoder_rank_generator): the dimensions expert-tensor (etp), ep,
// expert-data (edp = tp x cp x dp / (etp x ep)) and pp, in the plan's order with etp in tp's place, ep just
// before dp and no cp ("tp-dp-pp" reads "etp-ep-edp-pp", Megatron-Core's "tp-cp-ep-dp-pp" with cp 1). Megatron-Core
// builds that generator with cp 1 and dp = world / (etp x ep x pp): context parallelism is folded into the expert
// dimensions, a stage's tp x cp x dp dense ranks regrouped. The experts' ranks of a stage are its dense ranks: an
// order whose expert layout would put a rank in another pipeline stage is refused, as Megatron-Core refuses it.
enum class ExpertDim : std::uint8_t { kEtp = 0, kEp = 1, kEdp = 2 };

class ExpertLayout {
 public:
  // Throws InputError naming --ep unless ep divides tp x cp x dp, --etp unless etp x ep does, or --order where
  // the stages would differ.
  ExpertLayout(int tp, int dp, int pp, int ep, std::string_view order, int etp = 1, int cp = 1);

  [[nodiscard]] int size(ExpertDim dim) const noexcept { return sizes_[index(dim)]; }
  [[nodiscard]] int coord(int rank, ExpertDim dim) const noexcept {
    return rank / strides_[index(dim)] % sizes_[index(dim)];
  }
  // The ranks that differ from `rank` only along `dim`, by their coordinate on it.
  [[nodiscard]] std::vector<int> group(int rank, ExpertDim dim) const;

 private:
  // sizes_ and strides_ are indexed etp, ep, edp, pp.
  [[nodiscard]] static std::size_t index(ExpertDim dim) noexcept { return static_cast<std::size_t>(dim); }
  std::array<int, 4> sizes_{};
  std::array<int, 4> strides_{};
};

}  // namespace commscale
