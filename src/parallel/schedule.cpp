#include "parallel/schedule.hpp"

#include <algorithm>

namespace commscale {
namespace {

std::vector<ScheduleStep> gpipe(int microbatches) {
  std::vector<ScheduleStep> steps;
  steps.reserve(2 * static_cast<std::size_t>(microbatches));
  for (int mb = 0; mb < microbatches; ++mb) steps.push_back({true, mb, 0});
  for (int mb = 0; mb < microbatches; ++mb) steps.push_back({false, mb, 0});
  return steps;
}

// The forwards a stage runs before its first backward, of `total` (microbatches x chunks): all of them with
// GPipe; p - s - 1 with 1F1B; with interleaving, Megatron-LM's (p - s - 1) x 2 + (v - 1) x p, or all where
// m = p.
int warmup_forwards(ScheduleKind kind, int pp, int stage, int microbatches, int chunks) {
  const int total = microbatches * chunks;
  switch (kind) {
    case ScheduleKind::kGpipe: return total;
    case ScheduleKind::k1F1B: return std::min(pp - stage - 1, total);
    case ScheduleKind::kInterleaved:
      return microbatches == pp ? total : std::min((pp - stage - 1) * 2 + (chunks - 1) * pp, total);
  }
  return total;
}

std::vector<ScheduleStep> one_f_one_b(int pp, int stage, int microbatches) {
  const int warmup = warmup_forwards(ScheduleKind::k1F1B, pp, stage, microbatches, 1);
  std::vector<ScheduleStep> steps;
  steps.reserve(2 * static_cast<std::size_t>(microbatches));
  for (int mb = 0; mb < warmup; ++mb) steps.push_back({true, mb, 0});
  for (int i = 0; i < microbatches - warmup; ++i) {
    steps.push_back({true, warmup + i, 0});
    steps.push_back({false, i, 0});
  }
  for (int mb = microbatches - warmup; mb < microbatches; ++mb) steps.push_back({false, mb, 0});
  return steps;
}

// Megatron-LM's mapping from the k-th forward (or backward) of a stage to its microbatch and chunk.
ScheduleStep interleaved_step(bool forward, int k, int pp, int chunks) {
  const int group = pp * chunks;
  const int in_group = k % group;
  int chunk = in_group / pp;
  if (!forward) chunk = chunks - 1 - chunk;
  return {forward, (k / group) * pp + in_group % pp, chunk};
}

std::vector<ScheduleStep> interleaved(int pp, int stage, int microbatches, int chunks) {
  const int total = microbatches * chunks;
  const int warmup = warmup_forwards(ScheduleKind::kInterleaved, pp, stage, microbatches, chunks);
  std::vector<ScheduleStep> steps;
  steps.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) steps.push_back(interleaved_step(true, k, pp, chunks));
  for (int i = 0; i < total - warmup; ++i) {
    steps.push_back(interleaved_step(true, warmup + i, pp, chunks));
    steps.push_back(interleaved_step(false, i, pp, chunks));
  }
  for (int k = total - warmup; k < total; ++k) steps.push_back(interleaved_step(false, k, pp, chunks));
  return steps;
}

}  // namespace

std::vector<ScheduleStep> stage_schedule(ScheduleKind kind, int pp, int stage, int microbatches, int chunks) {
  switch (kind) {
    case ScheduleKind::kGpipe:
      return gpipe(microbatches);
    case ScheduleKind::k1F1B:
      return one_f_one_b(pp, stage, microbatches);
    case ScheduleKind::kInterleaved:
      return interleaved(pp, stage, microbatches, chunks);
  }
  return {};
}

int forwards_in_flight(ScheduleKind kind, int pp, int stage, int microbatches, int chunks) {
  const int total = kind == ScheduleKind::kInterleaved ? microbatches * chunks : microbatches;
  const int warmup = warmup_forwards(kind, pp, stage, microbatches, kind == ScheduleKind::kInterleaved ? chunks : 1);
  return warmup < total ? warmup + 1 : total;
}

double peak_in_flight(const std::vector<ScheduleStep>& steps, const std::vector<double>& chunk_cost) {
  double now = 0;
  double peak = 0;
  for (const ScheduleStep& step : steps) {
    const double cost = chunk_cost.at(static_cast<std::size_t>(step.chunk));
    now += step.forward ? cost : -cost;
    peak = std::max(peak, now);
  }
  return peak;
}

}  // namespace commscale
