// Offload's copies in a stage's program (program_builder.hpp): the HostCopy ops on the h2d and d2h streams that
// move ZeRO-Infinity's parameter shards in and a layer's kept activations out and back, around the units
// the stage builder runs. The memory they save is plan_memory.cpp's; this is what it costs in time.

#include <fmt/format.h>

#include "parallel/stage_builder.hpp"
#include "workload/memory.hpp"

namespace commscale {

bool StageBuilder::offloads_during_step() const noexcept {
  return p_.offload_params != OffloadDevice::kNone || p_.offload_activations;
}

OpId StageBuilder::emit_host_copy(const Unit& unit, int mb, Phase phase, CopyDirection direction, Bytes bytes,
                                  const char* what, OpId after) {
  Op op;
  op.stream = copy_stream(direction);
  op.phase = phase;
  if (!coarse()) {
    op.name = unit.kind == UnitKind::kLayer
                  ? fmt::format("mb{}.L{}.{}.{}", mb, unit.layer, name(phase), what)
                  : fmt::format("mb{}.{}.{}.{}", mb, name(phase),
                                unit.kind == UnitKind::kEmbedding ? "embedding" : "head", what);
  }
  op.microbatch = mb;
  op.layer = unit.layer;
  if (after != kNone) op.deps.push_back(after);
  op.payload = HostCopy{direction, bytes};
  return emit(std::move(op));
}

// Before a unit runs: ZeRO-Infinity's parameter shard comes in from host memory (and ZeRO-3 gathers it),
// and in the backward the layer's activations come back. Each is prefetched at most one unit ahead, as
// ZeRO-3's gather is: it waits until the unit before has started.
void StageBuilder::before_unit(const Unit& unit, int mb, Phase phase) {
  const bool gathers = p_.zero_stage == 3 && grad_ranks(p_) > 1;
  OpId fetched = kNone;
  if (p_.offload_params != OffloadDevice::kNone) {
    const std::uint64_t shard = padded(unit.parameters, grad_ranks(p_)) / static_cast<std::uint64_t>(grad_ranks(p_));
    fetched = emit_host_copy(unit, mb, phase, CopyDirection::kToDevice, Bytes(shard * size_of(m_.dtype)),
                             "param_to_device", previous_unit_first_);
    if (!gathers) pending_.push_back(fetched);  // else the gather waits for it, and the unit for the gather
  }
  if (gathers) zero3_gather(unit, mb, phase, fetched);
  if (!p_.offload_activations || unit.kind != UnitKind::kLayer) return;
  if (phase == Phase::kBackward) {
    pending_.push_back(emit_host_copy(unit, mb, phase, CopyDirection::kToDevice, offloaded_layer_bytes(),
                                      "activations_to_device", previous_unit_first_));
  } else if (offloaded_.size() >= 2) {
    // Two layers' activations on the GPU: the one running and the one in transit; the next waits.
    pending_.push_back(offloaded_[offloaded_.size() - 2]);
  }
}

// After a layer's forward its activations go out to host memory.
void StageBuilder::after_forward(const Unit& unit, int mb) {
  if (!p_.offload_activations || unit.kind != UnitKind::kLayer) return;
  offloaded_.push_back(emit_host_copy(unit, mb, Phase::kForward, CopyDirection::kToHost, offloaded_layer_bytes(),
                                      "activations_to_host", last_compute_));
}

Bytes StageBuilder::offloaded_layer_bytes() const { return layer_activation_bytes(m_, layer_sharding(p_)); }

}  // namespace commscale
