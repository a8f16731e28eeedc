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

bool StageBuilder::fuse_chunk(Phase phase) const noexcept {
  const bool zero3 = p_.zero_stage == 3 && p_.dp > 1;
  return coarse() && !zero3 && (phase == Phase::kForward || !reducing_);
}

void StageBuilder::run_fused_chunk(const std::vector<Unit>& units, int mb, Phase phase) {
  UnitWork work{.phase = phase, .accumulate = phase == Phase::kBackward && mb > 0};
  for (const Unit& unit : units) count(work, unit.kind);
  if (!work.empty()) emit_fused(mb, -1, work);
}

void StageBuilder::run_fused_unit(const Unit& unit, int mb, Phase phase) {
  UnitWork work{.phase = phase, .accumulate = phase == Phase::kBackward && mb > 0};
  count(work, unit.kind);
  const bool zero3 = p_.zero_stage == 3 && p_.dp > 1;
  OpId last = kNone;
  if (zero3) {
    zero3_gather(unit, mb, phase);
    previous_unit_first_ = static_cast<OpId>(ops_.size());
    work.part = UnitWork::Part::kFirstOp;
    emit_fused(mb, unit.layer, work);
    work.part = UnitWork::Part::kRest;
    last = emit_fused(mb, unit.layer, work);
  } else {
    last = emit_fused(mb, unit.layer, work);
  }
  if (phase != Phase::kBackward) return;
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
