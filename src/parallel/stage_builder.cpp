#include "parallel/stage_builder.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "parallel/program_builder.hpp"
#include "workload/layer_ops.hpp"

namespace commscale {
namespace {

std::string op_name(int mb, int layer, Phase phase, const std::string& what) {
  if (layer >= 0) return fmt::format("mb{}.L{}.{}.{}", mb, layer, name(phase), what);
  return fmt::format("mb{}.{}.{}", mb, name(phase), what);
}

bool is_compute(const WorkloadOp& op) { return !std::holds_alternative<LayerCollective>(op.payload); }

}  // namespace

UnitLists::UnitLists(const TransformerConfig& m, const ParallelPlan& p) {
  const LayerSharding s = shape(p);
  layer_fwd_ = layer_forward_ops(m, s);
  layer_bwd_ = layer_backward_ops(m, s);
  embedding_fwd_ = embedding_forward_ops(m, s);
  embedding_bwd_ = embedding_backward_ops(m, s);
  head_fwd_ = head_forward_ops(m, s);
  head_bwd_ = head_backward_ops(m, s, p.pp);
  layer_bwd_acc_ = layer_backward_ops(m, s, true);
  embedding_bwd_acc_ = embedding_backward_ops(m, s, true);
  head_bwd_acc_ = head_backward_ops(m, s, p.pp, true);
  if (m.moe.enabled()) {
    moe_fwd_ = layer_forward_ops(m, s, true);
    moe_bwd_ = layer_backward_ops(m, s, false, true);
    moe_bwd_acc_ = layer_backward_ops(m, s, true, true);
  }
}

const OpList& UnitLists::of(UnitKind kind, Phase phase, bool accumulate, bool moe) const noexcept {
  const bool fwd = phase == Phase::kForward;
  switch (kind) {
    case UnitKind::kEmbedding:
      return fwd ? embedding_fwd_ : (accumulate ? embedding_bwd_acc_ : embedding_bwd_);
    case UnitKind::kLayer:
      if (moe) return fwd ? moe_fwd_ : (accumulate ? moe_bwd_acc_ : moe_bwd_);
      return fwd ? layer_fwd_ : (accumulate ? layer_bwd_acc_ : layer_bwd_);
    case UnitKind::kHead:
      return fwd ? head_fwd_ : (accumulate ? head_bwd_acc_ : head_bwd_);
  }
  return layer_fwd_;
}

StageBuilder::StageBuilder(const TransformerConfig& m, const ParallelPlan& p, int stage, const UnitLists* lists)
    : m_(m), p_(p), stage_(stage), microbatches_(microbatches_per_step(p)), lists_(lists) {
  dense_.group = kDpGroup;
  dense_.ranks = grad_ranks(p);  // dp x cp (plan.hpp)
  dense_.label = "dp";
  experts_.group = kExpertDpGroup;
  experts_.ranks = m.moe.enabled() ? expert_dp(p) : 1;
  experts_.label = "edp";
}

std::vector<Op> StageBuilder::build() {
  // Reserve what the schedule will need (a little more for receives, sends and buckets), so that the
  // list does not move while it grows: it reaches tens of thousands of ops for large models.
  if (coarse()) {
    ops_.reserve(coarse_op_bound());
    work_.reserve(ops_.capacity());
  } else {
    const auto chunks = static_cast<std::size_t>(p_.chunks);
    const auto size = [&](UnitKind kind, Phase phase) {
      return std::max(lists_->of(kind, phase, true).size(), lists_->of(kind, phase, true, true).size());
    };
    const std::size_t per_microbatch =
        static_cast<std::size_t>(stage_layers(m_, p_, stage_)) *
            (size(UnitKind::kLayer, Phase::kForward) + size(UnitKind::kLayer, Phase::kBackward) + 8) +
        size(UnitKind::kEmbedding, Phase::kForward) + size(UnitKind::kEmbedding, Phase::kBackward) +
        size(UnitKind::kHead, Phase::kForward) + size(UnitKind::kHead, Phase::kBackward) + 8 * chunks;  // + FP8 amax
    ops_.reserve(per_microbatch * static_cast<std::size_t>(microbatches_) + 64);
  }
  for (int chunk = 0; chunk < p_.chunks; ++chunk) units_.push_back(chunk_units(chunk));
  for (const ScheduleStep& step : stage_schedule(p_.schedule, p_.pp, stage_, microbatches_, p_.chunks)) {
    if (step.forward) {
      forward(step.microbatch, step.chunk);
    } else {
      backward(step.microbatch, step.chunk);
    }
  }
  end_of_step();
  return std::move(ops_);
}

std::vector<StageBuilder::Unit> StageBuilder::chunk_units(int chunk) const {
  std::vector<Unit> units;
  if (first_virtual(chunk) && m_.vocab > 0)
    units.push_back({UnitKind::kEmbedding, -1, embedding_parameters(m_, p_.tp)});
  const LayerRange layers = virtual_stage_layers(m_, p_, virtual_stage(chunk));
  for (int l = layers.first; l < layers.first + layers.count; ++l) {
    const LayerParameters params = layer_parameters(m_, p_.tp, l, p_.ep, p_.etp);
    units.push_back({UnitKind::kLayer, l, params.dense(), params.experts, is_moe_layer(m_, l)});
  }
  if (last_virtual(chunk) && m_.vocab > 0) {
    units.push_back({UnitKind::kHead, -1, norm_parameters(m_) + output_parameters(m_, p_.tp, p_.pp)});
  }
  return units;
}

void StageBuilder::forward(int mb, int chunk) {
  if (!first_virtual(chunk)) {
    pending_.push_back(
        emit_p2p(P2pDirection::kRecv, kPpForwardGroup, (stage_ + p_.pp - 1) % p_.pp, mb, chunk, Phase::kForward));
  }
  previous_unit_first_ = kNone;
  offloaded_.clear();
  const std::vector<Unit>& units = units_[static_cast<std::size_t>(chunk)];
  if (fuse_chunk(Phase::kForward)) {
    run_fused_chunk(units, mb, Phase::kForward);
  } else {
    for (const Unit& unit : units) run_unit(unit, mb, Phase::kForward);
  }
  fp8_amax_reduction(mb, chunk, Phase::kForward);
  if (!last_virtual(chunk)) {
    const OpId send = emit_p2p(P2pDirection::kSend, kPpForwardGroup, (stage_ + 1) % p_.pp, mb, chunk, Phase::kForward);
    ops_[send].deps.push_back(last_compute_);
  }
  carried_[{mb, chunk}] = std::exchange(pending_, {});  // e.g. the loss all-reduces, for the backward
}

void StageBuilder::backward(int mb, int chunk) {
  const auto carried = carried_.find({mb, chunk});
  if (carried != carried_.end()) {
    pending_ = std::move(carried->second);
    carried_.erase(carried);
  }
  if (!last_virtual(chunk)) {
    pending_.push_back(
        emit_p2p(P2pDirection::kRecv, kPpBackwardGroup, (stage_ + 1) % p_.pp, mb, chunk, Phase::kBackward));
  }
  begin_backward_pass(mb);
  previous_unit_first_ = kNone;
  const std::vector<Unit>& units = units_[static_cast<std::size_t>(chunk)];
  if (fuse_chunk(Phase::kBackward)) {
    run_fused_chunk(units, mb, Phase::kBackward);
  } else {
    for (auto unit = units.rbegin(); unit != units.rend(); ++unit) run_unit(*unit, mb, Phase::kBackward);
  }
  fp8_amax_reduction(mb, chunk, Phase::kBackward);
  // Without overlap the gradients of every chunk wait for the stage's last backward, its first chunk's.
  if (p_.overlap_grad_reduce || (chunk == 0 && reducing_)) flush_bucket();
  if (!first_virtual(chunk)) {
    const OpId send =
        emit_p2p(P2pDirection::kSend, kPpBackwardGroup, (stage_ + p_.pp - 1) % p_.pp, mb, chunk, Phase::kBackward);
    ops_[send].deps.push_back(last_compute_);
  }
}

void StageBuilder::run_unit(const Unit& unit, int mb, Phase phase) {
  if (coarse()) {
    run_fused_unit(unit, mb, phase);
    return;
  }
  const OpList& list = lists_->of(unit.kind, phase, mb > 0, unit.moe);
  if (list.empty()) return;
  before_unit(unit, mb, phase);
  previous_unit_first_ = static_cast<OpId>(ops_.size());
  stamp(list, mb, unit.layer);
  if (phase == Phase::kForward) after_forward(unit, mb);
  if (p_.zero_stage == 3 && grad_ranks(p_) > 1 && phase == Phase::kBackward)
    zero3_reduce(unit, mb, last_grad_producer_);
}

void StageBuilder::stamp(const OpList& list, int mb, int layer) {
  stamp_list(list, mb, layer, ops_, pending_, last_compute_, [this](OpId id, const WorkloadOp& w) {
    if (w.grad_parameters > 0) grads_ready(id, w.grad_parameters, w.expert_grads);
  });
}

void stamp_list(const OpList& list, int mb, int layer, std::vector<Op>& ops, std::vector<OpId>& pending,
                OpId& last_compute, const std::function<void(OpId, const WorkloadOp&)>& stamped) {
  std::vector<OpId> ids(list.size());
  std::size_t last_compute_index = 0;
  for (std::size_t i = 0; i < list.size(); ++i) last_compute_index = is_compute(list[i]) ? i : last_compute_index;
  std::vector<OpId> trailing;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const WorkloadOp& w = list[i];
    Op op;
    op.id = static_cast<OpId>(ops.size());
    op.phase = w.phase;
    op.name = op_name(mb, layer, w.phase, w.name);
    op.microbatch = mb;
    op.layer = layer;
    for (int d : w.deps) op.deps.push_back(ids[static_cast<std::size_t>(d)]);
    if (i == 0) {
      op.deps.insert(op.deps.end(), pending.begin(), pending.end());
      pending.clear();
      if (!is_compute(w) && last_compute != kNoOp) op.deps.push_back(last_compute);
    }
    if (const auto* c = std::get_if<LayerCollective>(&w.payload)) {
      op.stream = Stream::kTp;
      op.payload = CollectiveOp{c->kind, handle_of(c->group), c->bytes, c->dtype};
    } else if (const auto* g = std::get_if<Gemm>(&w.payload)) {
      op.payload = *g;
    } else {
      op.payload = std::get<MemoryKernel>(w.payload);
    }
    ids[i] = op.id;
    ops.push_back(std::move(op));
    if (is_compute(w)) last_compute = ids[i];
    if (!is_compute(w) && i > last_compute_index) trailing.push_back(ids[i]);
    stamped(ids[i], w);
  }
  pending.insert(pending.end(), trailing.begin(), trailing.end());
}

ProgramSet unit_program(const OpList& list, int copies) {
  ProgramSet set;
  set.world_size = 1;
  std::vector<Op> ops;
  ops.reserve(list.size() * static_cast<std::size_t>(copies));
  std::vector<OpId> pending;
  OpId last_compute = kNoOp;
  for (int c = 0; c < copies; ++c) stamp_list(list, c, -1, ops, pending, last_compute, [](OpId, const WorkloadOp&) {});
  set.programs.push_back(std::move(ops));
  set.ranks.push_back({0, 0, {{GroupRole::kTp, {0}}}});
  return set;
}

OpId StageBuilder::emit(Op op, UnitWork work) {
  if (coarse()) work_.push_back(work);
  op.id = static_cast<OpId>(ops_.size());
  ops_.push_back(std::move(op));
  return ops_.back().id;
}

std::string StageBuilder::chunk_label(int mb, int chunk, Phase phase) const {
  if (p_.chunks > 1) return fmt::format("mb{}.c{}.{}", mb, chunk, name(phase));
  return fmt::format("mb{}.{}", mb, name(phase));
}

OpId StageBuilder::emit_p2p(P2pDirection direction, std::uint32_t group, int peer, int mb, int chunk, Phase phase) {
  Op op;
  op.stream = direction == P2pDirection::kSend ? Stream::kPpSend : Stream::kPpRecv;
  op.phase = phase;
  if (!coarse()) op.name = fmt::format("{}.{}", chunk_label(mb, chunk, phase), name(direction));
  op.microbatch = mb;
  op.payload = PointToPoint{direction, group, peer, pipeline_transfer_bytes(m_, p_), m_.dtype};
  return emit(std::move(op));
}

}  // namespace commscale
