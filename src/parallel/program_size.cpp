#include "parallel/program_size.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "core/error.hpp"

namespace commscale {
namespace {

// The full program lists, for every rank, the world ranks of each of its groups: world x (tp + dp +
// 2 pp) numbers, which the checker, the cost model and the simulator then walk rank by rank. Past
// this bound (1 GiB of rank numbers) that takes minutes and tens of GB (dp 4096 x tp 8 x pp 16 is
// 2.2e9 numbers, 8.7 GB before anything runs), so the build refuses it before allocating anything.
constexpr std::int64_t kMaxGroupEntries = std::int64_t{1} << 28;

}  // namespace

void check_program_size(const ParallelPlan& p) {
  const int world = world_size(p);
  // With context parallelism the dp group is dp x cp ranks, beside the cp group and three one-rank slots.
  const std::int64_t context = p.cp > 1 ? std::int64_t{grad_ranks(p)} - p.dp + p.cp + 3 : 0;
  const std::int64_t entries = std::int64_t{world} * (p.tp + p.dp + context + 2 * std::int64_t{p.pp});
  if (entries <= kMaxGroupEntries) return;
  throw InputError(
      "--dp/--tp/--pp",
      fmt::format("dp {} x tp {} x pp {}: the step program of {} ranks would list {} group members ({:.1f} GiB) "
                  "for the deadlock check and the simulation",
                  p.dp, p.tp, p.pp, world, entries, static_cast<double>(entries) * sizeof(int) / (1 << 30)),
      fmt::format("at most {} (world x (tp + dp + 2 pp)): fewer ranks or a smaller dp; `search` ranks larger "
                  "plans with its stage model, which builds no program",
                  kMaxGroupEntries));
}

}  // namespace commscale
