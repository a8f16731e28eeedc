#pragma once

// Internal to the program builder: emits the op list of one pipeline stage. stage_builder.cpp runs
// the schedule and stamps the workload's op lists; grad_sync.cpp adds the data-parallel and
// end-of-step ops. See program_builder.hpp for what the result contains.

#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "parallel/plan.hpp"
#include "parallel/schedule.hpp"
#include "program/op.hpp"
#include "workload/op_list.hpp"
#include "workload/transformer.hpp"

namespace commscale {

class StageBuilder {
 public:
  StageBuilder(const TransformerConfig& m, const ParallelPlan& p, int stage);
  [[nodiscard]] std::vector<Op> build();

 private:
  static constexpr OpId kNone = std::numeric_limits<OpId>::max();

  // A piece of a model chunk with its own op lists (and, under ZeRO-3, its own parameter gathers).
  enum class UnitKind : std::uint8_t { kEmbedding, kLayer, kHead };
  struct Unit {
    UnitKind kind = UnitKind::kLayer;
    int layer = -1;  // -1 for the embedding and the head
    std::uint64_t parameters = 0;
  };

  void forward(int mb, int chunk);
  void backward(int mb, int chunk);
  void run_unit(const Unit& unit, int mb, Phase phase);
  [[nodiscard]] const OpList& unit_ops(const Unit& unit, Phase phase, int mb) const noexcept;
  void stamp(const OpList& list, int mb, int layer);
  OpId emit(Op op);
  OpId emit_p2p(P2pDirection direction, std::uint32_t group, int peer, int mb, int chunk, Phase phase);
  [[nodiscard]] std::string chunk_label(int mb, int chunk, Phase phase) const;
  [[nodiscard]] int virtual_stage(int chunk) const noexcept { return chunk * p_.pp + stage_; }
  [[nodiscard]] bool first_virtual(int chunk) const noexcept { return virtual_stage(chunk) == 0; }
  [[nodiscard]] bool last_virtual(int chunk) const noexcept { return virtual_stage(chunk) == p_.pp * p_.chunks - 1; }
  [[nodiscard]] std::vector<Unit> chunk_units(int chunk) const;

  // grad_sync.cpp
  void begin_backward_pass(int mb);
  void grads_ready(OpId producer, std::uint64_t parameters);
  void flush_bucket();
  void zero3_gather(const Unit& unit, int mb, Phase phase);
  void zero3_reduce(const Unit& unit, int mb, OpId producer);
  void end_of_step();
  [[nodiscard]] std::uint64_t padded(std::uint64_t elements) const noexcept;
  [[nodiscard]] std::uint64_t replicated_parameters() const;
  OpId emit_collective(std::string name, Stream stream, std::uint32_t group, Collective kind, Bytes bytes, Phase phase,
                       int mb, int layer, std::vector<OpId> deps);

  const TransformerConfig& m_;
  const ParallelPlan& p_;
  const int stage_;
  const int microbatches_;
  OpList layer_fwd_, layer_bwd_, embedding_fwd_, embedding_bwd_, head_fwd_, head_bwd_;
  // The backward lists of every microbatch but the first, whose weight gradients add to the earlier
  // ones (a kernel of their own with eager kernels; the same lists as above otherwise).
  OpList layer_bwd_acc_, embedding_bwd_acc_, head_bwd_acc_;

  std::vector<Op> ops_;
  std::vector<OpId> pending_;  // what the next op stamped must wait for (a receive, trailing collectives, a gather)
  std::map<std::pair<int, int>, std::vector<OpId>> carried_;  // forward leftovers for the backward of (mb, chunk)
  OpId last_compute_ = kNone;
  OpId last_dp_ = kNone;              // the latest op on the dp stream
  OpId previous_unit_first_ = kNone;  // ZeRO-3 prefetch bound
  OpId last_grad_producer_ = kNone;

  // Gradient buckets (ZeRO 0-2).
  bool reducing_ = false;
  int backward_mb_ = 0;
  int bucket_index_ = 0;
  std::uint64_t bucket_elements_ = 0;
  OpId bucket_producer_ = kNone;
  std::map<int, int> buckets_in_microbatch_;
  std::vector<std::uint64_t> final_buckets_;  // padded element counts of the last pass, for the all-gathers
};

}  // namespace commscale
