// The step-level ops of FP8 training (workload/fp8_ops.hpp): delayed scaling's amax reductions and the weights'
// once-per-step cast. The layer-level ones (GEMM types, casts, current scaling's amaxes) are in the layer lists.

#include <fmt/format.h>

#include "parallel/plan_memory.hpp"
#include "parallel/program_builder.hpp"
#include "parallel/stage_builder.hpp"
#include "workload/fp8_ops.hpp"

namespace commscale {

// Megatron-LM gives TE's delayed scaling the amax-reduction group tp x dp x cp (get_amax_reduction_group); TE
// reduces the amaxes of an fp8_autocast region (a chunk's forward, and its backward) in one all-reduce (max) at
// its end. Here over tp, then the data-parallel group (dp x cp with context parallelism): the same maximum,
// through the groups a rank has (one collective's latency more than a single all-reduce would take).
void StageBuilder::fp8_amax_reduction(int mb, int chunk, Phase phase) {
  if (p_.fp8 != Fp8Recipe::kDelayed) return;
  const int layers = virtual_stage_layers(m_, p_, virtual_stage(chunk)).count;
  const Bytes bytes = amax_reduction_bytes(layers, phase == Phase::kBackward);
  OpId after = last_compute_;
  const auto reduce = [&](Stream stream, std::uint32_t group, const char* what) {
    std::string label =
        coarse() ? std::string() : fmt::format("{}.fp8_amax.{}.all_reduce", chunk_label(mb, chunk, phase), what);
    after = emit_collective(std::move(label), stream, group, Collective::kAllReduce, bytes, phase, mb, -1, {after});
    std::get<CollectiveOp>(ops_[after].payload).dtype = DataType::kFloat32;
  };
  if (p_.tp > 1) reduce(Stream::kTp, kTpGroup, "tp");
  if (grad_ranks(p_) > 1) reduce(Stream::kDp, kDpGroup, "dp");
}

// TE casts the weights to FP8 (with their transposes) on a step's first microbatch (Megatron-LM's
// is_first_microbatch); later microbatches reuse them. Emitted after the update that changed them, as the step's
// last compute op: the next step's first forward reads them.
void StageBuilder::fp8_weight_cast(std::vector<OpId> deps) {
  if (p_.fp8 == Fp8Recipe::kNone) return;
  const std::uint64_t params = stage_fp8_linear_parameters(m_, p_, stage_);
  if (params == 0) return;
  std::erase(deps, kNone);
  Op cast;
  cast.phase = Phase::kStep;
  cast.name = "step.fp8_weight_cast";
  cast.deps = std::move(deps);
  cast.payload = weight_cast_kernel(m_, params);
  last_compute_ = emit(std::move(cast));
}

}  // namespace commscale
