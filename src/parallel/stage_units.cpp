// The coarse build of a stage (program_builder.hpp, UnitWork): one compute op per unit, or per
// chunk's forward or backward where nothing on the data-parallel stream waits for a unit in between.
// Everything else (receives, sends, buckets, ZeRO-3 gathers, the end of the step) is the same build's.

#include "parallel/stage_builder.hpp"

namespace commscale {
namespace {

void count(UnitWork& work, UnitKind kind) {
  switch (kind) {
    case UnitKind::kEmbedding:
      ++work.embeddings;
      return;
    case UnitKind::kLayer:
      ++work.layers;
      return;
    case UnitKind::kHead:
      ++work.heads;
      return;
  }
}

}  // namespace

StageUnits StageBuilder::unit_counts() const {
  StageUnits units;
  for (int chunk = 0; chunk < p_.chunks; ++chunk) {
    for (const Unit& unit : chunk_units(chunk)) {
      units.embeddings += unit.kind == UnitKind::kEmbedding ? 1 : 0;
      units.layers += unit.kind == UnitKind::kLayer ? 1 : 0;
      units.moe_layers += unit.kind == UnitKind::kLayer && unit.moe ? 1 : 0;
      units.heads += unit.kind == UnitKind::kHead ? 1 : 0;
    }
  }
  return units;
}

StageUnits stage_units(const TransformerConfig& m, const ParallelPlan& p, int stage) {
  return StageBuilder(m, p, stage, nullptr).unit_counts();
}

bool StageBuilder::fuse_chunk(Phase phase) const noexcept {
  const bool zero3 = p_.zero_stage == 3 && grad_ranks(p_) > 1;
  return coarse() && !zero3 && !offloads_during_step() && (phase == Phase::kForward || !reducing_);
}

// At least as many ops as the coarse build of the stage emits, and not many more: a search builds
// thousands of these lists, and growing one moves every op (a tenth of a search's time).
std::size_t StageBuilder::coarse_op_bound() const noexcept {
  const auto chunks = static_cast<std::size_t>(p_.chunks);
  const auto microbatches = static_cast<std::size_t>(microbatches_);
  const auto units = static_cast<std::size_t>(stage_layers(m_, p_, stage_) / p_.chunks) + 2;  // layers, ends
  // A receive and a send each way per microbatch and chunk, but into the first virtual stage and out
  // of the last.
  const std::size_t ends = (first_virtual(0) ? 1 : 0) + (last_virtual(p_.chunks - 1) ? 1 : 0);
  const std::size_t transfers = 2 * (2 * chunks - ends) * microbatches;
  // Offload: two ops per unit each way (its first and the rest), and up to two copies each way
  // (offload_ops.cpp).
  const std::size_t copies = offloads_during_step() ? 8 * units * chunks * microbatches : 0;
  // FP8's delayed scaling: up to two amax reductions each way per microbatch and chunk (fp8_step_ops.cpp).
  const std::size_t amax = p_.fp8 == Fp8Recipe::kDelayed ? 4 * chunks * microbatches : 0;
  if (p_.zero_stage == 3 && grad_ranks(p_) > 1) {
    // A unit's gather and two ops each way, its reduce-scatter in the backward.
    return transfers + copies + amax + 7 * units * chunks * microbatches + 16;
  }
  // A fused op each way; a backward that fills buckets instead has an op per unit and at most a bucket
  // after each (every microbatch's with ZeRO-2, else the last's); ZeRO-1 and -2 gather as many buckets
  // at the end.
  const bool sharded = grad_ranks(p_) > 1 && (p_.zero_stage == 1 || p_.zero_stage == 2);
  const std::size_t filling = grad_ranks(p_) > 1 ? (p_.zero_stage == 2 ? microbatches : 1) * chunks : 0;
  return transfers + copies + amax + 2 * chunks * microbatches + filling * 2 * units +
         (sharded ? chunks * (units + 1) : 0) + 16;
}

void StageBuilder::run_fused_chunk(const std::vector<Unit>& units, int mb, Phase phase) {
  UnitWork work{.phase = phase, .accumulate = phase == Phase::kBackward && mb > 0};
  for (const Unit& unit : units) count(work, unit.kind);
  if (!work.empty()) emit_fused(mb, -1, work);
}

void StageBuilder::run_fused_unit(const Unit& unit, int mb, Phase phase) {
  UnitWork work{.phase = phase, .accumulate = phase == Phase::kBackward && mb > 0};
  count(work, unit.kind);
  const bool zero3 = p_.zero_stage == 3 && grad_ranks(p_) > 1;
  before_unit(unit, mb, phase);
  previous_unit_first_ = static_cast<OpId>(ops_.size());
  OpId last = kNone;
  // What is prefetched one unit ahead (a gather, offload's copies) waits for the unit's first op: an op
  // of its own, as in the full program, not the whole unit.
  if (zero3 || offloads_during_step()) {
    work.part = UnitWork::Part::kFirstOp;
    emit_fused(mb, unit.layer, work);
    work.part = UnitWork::Part::kRest;
    last = emit_fused(mb, unit.layer, work);
  } else {
    last = emit_fused(mb, unit.layer, work);
  }
  if (phase != Phase::kBackward) {
    after_forward(unit, mb);
    return;
  }
  grads_ready(last, unit.parameters);
  if (zero3) zero3_reduce(unit, mb, last_grad_producer_);
}

// A compute op standing for `work`; it waits for what is pending (a receive, a parameter gather).
OpId StageBuilder::emit_fused(int mb, int layer, UnitWork work) {
  Op op;
  op.phase = work.phase;
  op.microbatch = mb;
  op.layer = layer;
  op.deps = std::exchange(pending_, {});
  op.payload = MemoryKernel{};
  last_compute_ = emit(std::move(op), work);
  return last_compute_;
}

}  // namespace commscale
