// The data-parallel side of a stage's program: gradient buckets, ZeRO-3 parameter gathers, and the
// end of the step (see program_builder.hpp for the rules).

#include <variant>

#include <fmt/format.h>

#include "parallel/plan_memory.hpp"
#include "parallel/program_builder.hpp"
#include "parallel/stage_builder.hpp"
#include "workload/layer_ops.hpp"

namespace commscale {
namespace {

// The data-parallel reduction as the framework runs it for a model of `dtype`: the gradients' type on the wire,
// the tied embedding's, and whether a sharded optimizer (ZeRO 1) still all-reduces the whole gradient.
//  - Megatron-LM in bf16 accumulates and reduces gradients in fp32 (megatron/training/arguments.py:
//    accumulate_allreduce_grads_in_fp32 = True for bf16 unless --grad-reduce-in-bf16): its DDP reduces the
//    fp32 main_grad buffer, and finalize_model_grads all-reduces the embedding's and the norms' main_grad.
//  - Megatron-DeepSpeed in bf16 runs DeepSpeed's BF16_Optimizer (ZeRO stage 0 in its config, its own ZeRO 1):
//    the pipeline engine all-reduces the whole fp32 gradient cast to bf16 (pipe/engine.py _bf16_reduce_grads ->
//    engine.py allreduce_bucket, communication_data_type bf16), the optimizer updates its shard and all-gathers
//    the bf16 weights (bf16_optimizer.py step), and the tied embedding's fp32 gradient (_hp_grad) is all-reduced
//    between the end stages (pipe/engine.py _exec_reduce_tied_grads). DeepSpeed as of BigScience's BLOOM run
//    (microsoft/DeepSpeed 56c5223, "bf16+pipeline parallelism", 2022-04).
struct Reduction {
  DataType grads;
  DataType embedding;
  bool whole;
};

Reduction reduction_of(Framework f, DataType dtype, int zero_stage) {
  const DataType grads = gradient_reduction_type(f, dtype);
  if (f == Framework::kMegatronDeepSpeed && dtype == DataType::kBFloat16) {
    return {grads, DataType::kFloat32, zero_stage == 1};
  }
  return {grads, grads, false};
}

}  // namespace

std::uint64_t StageBuilder::padded(std::uint64_t elements, int ranks) const noexcept {
  // A multiple of ranks * 16 bytes: every shard is whole and 16-byte aligned (nccl-tests rounds shards to 16 bytes).
  const std::uint64_t unit = static_cast<std::uint64_t>(ranks) * (16 / size_of(m_.dtype));
  return (elements + unit - 1) / unit * unit;
}

OpId StageBuilder::emit_collective(std::string name, Stream stream, std::uint32_t group, Collective kind, Bytes bytes,
                                   Phase phase, int mb, int layer, std::vector<OpId> deps) {
  Op op;
  op.stream = stream;
  op.phase = phase;
  op.name = std::move(name);
  op.microbatch = mb;
  op.layer = layer;
  std::erase(deps, kNone);
  op.deps = std::move(deps);
  op.payload = CollectiveOp{kind, group, bytes, m_.dtype};
  const OpId id = emit(std::move(op));
  if (stream == Stream::kDp) last_dp_ = id;
  return id;
}

void StageBuilder::begin_backward_pass(int mb) {
  backward_mb_ = mb;
  const bool every_microbatch = p_.zero_stage == 2;  // ZeRO-2 keeps no full gradient to accumulate into
  reducing_ =
      (dense_.ranks > 1 || experts_.ranks > 1) && p_.zero_stage < 3 && (every_microbatch || mb == microbatches_ - 1);
}

// A DDP bucket copy (framework.hpp, gradient_bucket_copies): `elements` gradients read and written once, on
// the compute stream (PyTorch's Reducer: mul_out into the bucket view, and grad.copy_ back after the wait).
OpId StageBuilder::emit_bucket_copy(std::string name, std::uint64_t elements, std::vector<OpId> deps) {
  const Bytes bytes(elements * size_of(m_.dtype));
  Op op;
  op.phase = Phase::kBackward;
  op.name = std::move(name);
  op.microbatch = backward_mb_;
  std::erase(deps, kNone);
  op.deps = std::move(deps);
  op.payload = MemoryKernel{bytes, bytes, elements, MemoryKernelKind::kCopy, p_.kernels};
  last_compute_ = emit(std::move(op));
  return last_compute_;
}

bool StageBuilder::copies_into_buckets() const noexcept {
  return p_.zero_stage == 0 && defaults_of(p_.framework).gradient_bucket_copies;
}

void StageBuilder::grads_ready(OpId producer, std::uint64_t parameters, bool experts) {
  last_grad_producer_ = producer;
  Buckets& b = experts ? experts_ : dense_;
  if (!reducing_ || b.ranks <= 1) return;
  if (copies_into_buckets()) {
    producer =
        emit_bucket_copy(coarse() ? std::string() : ops_[producer].name + ".bucket_copy", parameters, {producer});
  }
  b.elements += parameters;
  b.producer = producer;
  // Without overlap every gradient waits for the end of the backward (stage_builder.cpp flushes it there).
  if (p_.overlap_grad_reduce && b.elements * size_of(m_.dtype) >= p_.bucket_bytes.count()) flush(b);
}

void StageBuilder::flush_bucket() {
  flush(dense_);
  flush(experts_);
}

void StageBuilder::flush(Buckets& b) {
  if (b.elements == 0) return;
  const Reduction r = reduction_of(p_.framework, m_.dtype, p_.zero_stage);
  const bool all_reduce = p_.zero_stage == 0 || r.whole;
  const std::uint64_t elements = all_reduce ? b.elements : padded(b.elements, b.ranks);
  std::string name;
  if (p_.zero_stage == 2) {
    const int k = b.in_microbatch[backward_mb_]++;
    if (!coarse()) name = fmt::format("mb{}.{}.bucket{}.reduce_scatter", backward_mb_, b.label, k);
  } else {
    const int k = b.index++;
    if (!coarse()) name = fmt::format("{}.bucket{}.{}", b.label, k, all_reduce ? "all_reduce" : "reduce_scatter");
  }
  const OpId reduction = emit_collective(
      std::move(name), Stream::kDp, b.group, all_reduce ? Collective::kAllReduce : Collective::kReduceScatter,
      Bytes(elements * size_of(r.grads)), Phase::kBackward, backward_mb_, -1, {b.producer});
  std::get<CollectiveOp>(ops_[reduction].payload).dtype = r.grads;
  if (backward_mb_ == microbatches_ - 1) {
    b.final_sizes.push_back(elements);
    b.final_reductions.push_back(reduction);
  }
  b.elements = 0;
}

// `fetched`: the copy that brings the shard in from host memory (offload_ops.cpp), or kNone.
void StageBuilder::zero3_gather(const Unit& unit, int mb, Phase phase, OpId fetched) {
  const std::string what = "param_all_gather";
  std::string name;  // none in the coarse build
  if (!coarse()) {
    name = unit.kind == UnitKind::kLayer ? fmt::format("mb{}.L{}.{}.{}", mb, unit.layer, commscale::name(phase), what)
                                         : fmt::format("mb{}.{}.{}.{}", mb, commscale::name(phase),
                                                       unit.kind == UnitKind::kEmbedding ? "embedding" : "head", what);
  }
  // Prefetch at most one unit ahead: wait until the previous unit has started.
  const OpId gather = emit_collective(name, Stream::kDp, kDpGroup, Collective::kAllGather,
                                      Bytes(padded(unit.parameters, grad_ranks(p_)) * size_of(m_.dtype)), phase, mb,
                                      unit.layer, {previous_unit_first_, fetched});
  pending_.push_back(gather);
}

void StageBuilder::zero3_reduce(const Unit& unit, int mb, OpId producer) {
  const std::string what = "grad_reduce_scatter";
  std::string name;  // none in the coarse build
  if (!coarse()) {
    name = unit.kind == UnitKind::kLayer
               ? fmt::format("mb{}.L{}.bwd.{}", mb, unit.layer, what)
               : fmt::format("mb{}.bwd.{}.{}", mb, unit.kind == UnitKind::kEmbedding ? "embedding" : "head", what);
  }
  emit_collective(name, Stream::kDp, kDpGroup, Collective::kReduceScatter,
                  Bytes(padded(unit.parameters, grad_ranks(p_)) * size_of(m_.dtype)), Phase::kBackward, mb, unit.layer,
                  {producer});
}

// Norm weights, the biases of row-parallel layers and MLA's down projections and latent norms are replicated
// over tp; with sequence parallelism each tp rank computes their gradient from its own sequence shard, so they
// are summed.
std::uint64_t StageBuilder::replicated_parameters() const {
  const auto h = static_cast<std::uint64_t>(m_.hidden);
  const std::uint64_t per_layer =
      2 * norm_parameters(m_) + (m_.linear_bias ? 2 * h : 0) + mla_replicated_parameters(m_);
  std::uint64_t total = per_layer * static_cast<std::uint64_t>(stage_layers(m_, p_, stage_));
  if (m_.vocab > 0 && stage_ == p_.pp - 1) total += norm_parameters(m_);
  // An MoE layer's router is replicated too (Megatron-Core marks it sequence-parallel), and its MLP's row-parallel
  // bias is the shared experts' (counted above as the dense MLP's: a model with biases and experts is rare).
  for (const std::vector<Unit>& chunk : units_) {
    for (const Unit& unit : chunk) total += unit.moe ? layer_parameters(m_, p_.tp, unit.layer, p_.ep).router : 0;
  }
  return total;
}

void StageBuilder::end_of_step() {
  const Reduction r = reduction_of(p_.framework, m_.dtype, p_.zero_stage);
  std::vector<OpId> optimizer_deps;
  if (p_.sequence_parallel && p_.tp > 1) {
    const OpId norms =
        emit_collective("step.norm_grads.all_reduce", Stream::kTp, kTpGroup, Collective::kAllReduce,
                        Bytes(replicated_parameters() * size_of(r.grads)), Phase::kStep, -1, -1, {last_compute_});
    std::get<CollectiveOp>(ops_[norms].payload).dtype = r.grads;
    optimizer_deps.push_back(norms);
  }
  // (With LoRA the tied embedding is frozen: no gradient to sum.)
  const bool end_stage = stage_ == 0 || stage_ == p_.pp - 1;
  const bool embedding_group = m_.vocab > 0 && m_.tied_embeddings && p_.pp > 1 && end_stage && !p_.lora.enabled();
  if (embedding_group) {
    const std::uint64_t table =
        static_cast<std::uint64_t>(vocab_shard(m_, p_.tp)) * static_cast<std::uint64_t>(m_.hidden);
    const OpId tied =
        emit_collective("step.embedding_grads.all_reduce", Stream::kDp, kEmbeddingGroup, Collective::kAllReduce,
                        Bytes(table * size_of(r.embedding)), Phase::kStep, -1, -1, {last_compute_});
    std::get<CollectiveOp>(ops_[tied].payload).dtype = r.embedding;
  }
  // DDP's finalize_backward: it waits for every bucket and copies each back into its gradients, in bucket order.
  if (copies_into_buckets()) {
    for (const Buckets* b : {&dense_, &experts_}) {
      for (std::size_t k = 0; k < b->final_sizes.size(); ++k) {
        std::string name = coarse() ? std::string() : fmt::format("{}.bucket{}.copy_back", b->label, k);
        emit_bucket_copy(std::move(name), b->final_sizes[k], {b->final_reductions[k], last_compute_});
      }
    }
  }
  if (last_dp_ != kNone) optimizer_deps.push_back(last_dp_);
  if (copies_into_buckets() && !(dense_.final_sizes.empty() && experts_.final_sizes.empty())) {
    optimizer_deps.push_back(last_compute_);
  }
  if (p_.optimizer == Optimizer::kNone) {  // forward and backward only: nothing to update
    fp8_weight_cast({last_compute_});
    return;
  }

  // ZeRO 1 and more shard the optimizer over each group: the experts' over the expert-data-parallel ranks.
  const std::uint64_t experts = p_.lora.enabled() ? 0 : stage_expert_parameters(m_, p_, stage_);
  const std::uint64_t params = trainable_stage_parameters(m_, p_, stage_) - experts;
  const auto share = [&](std::uint64_t n, int ranks) {
    const auto r = static_cast<std::uint64_t>(ranks);
    return p_.zero_stage >= 1 && r > 1 ? (n + r - 1) / r : n;
  };
  Op step;
  step.phase = Phase::kStep;
  step.name = "step.optimizer";
  step.deps = optimizer_deps;
  const std::uint64_t shard = share(params, grad_ranks(p_)) + share(experts, experts_.ranks);
  step.payload = p_.offload_optimizer == OffloadDevice::kCpu ? host_optimizer_kernel(m_, shard)
                                                             : optimizer_kernel(m_, shard, p_.optimizer, p_.kernels);
  const OpId optimizer = emit(std::move(step));
  last_compute_ = optimizer;

  std::vector<OpId> updated = {optimizer};  // what the weights' FP8 cast waits for
  if (p_.zero_stage == 1 || p_.zero_stage == 2) {
    gather_updated(dense_, optimizer, updated);
    gather_updated(experts_, optimizer, updated);
  }
  fp8_weight_cast(std::move(updated));
}

// ZeRO 1 and 2: the updated parameters all-gathered bucket by bucket over the bucket's group (each gather
// appended to `gathers`).
void StageBuilder::gather_updated(const Buckets& b, OpId optimizer, std::vector<OpId>& gathers) {
  if (b.ranks <= 1) return;
  const std::uint64_t w = size_of(m_.dtype);
  const std::string_view prefix = b.group == kDpGroup ? "step" : "step.edp";  // dense names as before experts
  for (std::size_t k = 0; k < b.final_sizes.size(); ++k) {
    std::string name = coarse() ? std::string() : fmt::format("{}.bucket{}.all_gather", prefix, k);
    gathers.push_back(emit_collective(std::move(name), Stream::kDp, b.group, Collective::kAllGather,
                                      Bytes(b.final_sizes[k] * w), Phase::kStep, -1, -1, {optimizer}));
  }
}

}  // namespace commscale
