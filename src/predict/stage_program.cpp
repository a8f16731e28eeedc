// The coarse step program of the stage model (stage_program.hpp). It follows the program builder's
// rules (parallel/stage_builder.cpp, parallel/grad_sync.cpp) step for step, one op per unit.

#include "predict/stage_program.hpp"

#include <limits>
#include <map>
#include <tuple>

#include "parallel/plan_memory.hpp"
#include "parallel/program_builder.hpp"
#include "parallel/schedule.hpp"
#include "program/breakdown.hpp"
#include "workload/layer_ops.hpp"

namespace commscale::predict {
namespace {

constexpr OpId kNone = std::numeric_limits<OpId>::max();

struct Unit {
  const UnitCost* fwd;
  const UnitCost* bwd;
  const UnitCost* bwd_acc;  // the backward of every microbatch but the first
  std::uint64_t parameters;

  [[nodiscard]] const UnitCost& cost(bool forward, int mb) const { return forward ? *fwd : mb > 0 ? *bwd_acc : *bwd; }
};

class CoarseBuilder {
 public:
  CoarseBuilder(const TransformerConfig& m, const ParallelPlan& p, const UnitCosts& u, const LayoutLinks& l,
                const Target& t, int stage, CoarseStage& out)
      : m_(m),
        p_(p),
        units_(u),
        links_(l),
        target_(t),
        stage_(stage),
        microbatches_(microbatches_per_step(p)),
        w_(size_of(m.dtype)),
        out_(out) {
    out_.ops.clear();
    out_.deps.clear();
    out_.tp_busy = out_.tp_exposed = out_.gemm_flops = 0.0;
    for (int chunk = 0; chunk < p.chunks; ++chunk) units_of_.push_back(chunk_units(chunk));
  }

  // Fills the stage given to the constructor (its vectors keep their capacity from an earlier plan).
  void build() {
    // Per microbatch and chunk: a receive, one op (or one per unit), a send, both ways.
    const std::size_t blocks = 2 * static_cast<std::size_t>(microbatches_ * p_.chunks);
    out_.ops.reserve(blocks * 3 + 64);
    out_.deps.reserve(blocks * 3 + 64);
    for (const ScheduleStep& step : stage_schedule(p_.schedule, p_.pp, stage_, microbatches_, p_.chunks)) {
      if (step.forward) {
        forward(step.microbatch, step.chunk);
      } else {
        backward(step.microbatch, step.chunk);
      }
    }
    end_of_step();
  }

 private:
  [[nodiscard]] int virtual_stage(int chunk) const { return chunk * p_.pp + stage_; }
  [[nodiscard]] bool first_virtual(int chunk) const { return virtual_stage(chunk) == 0; }
  [[nodiscard]] bool last_virtual(int chunk) const { return virtual_stage(chunk) == p_.pp * p_.chunks - 1; }
  [[nodiscard]] bool zero3() const { return p_.zero_stage == 3 && p_.dp > 1; }

  std::vector<Unit> chunk_units(int chunk) const {
    std::vector<Unit> out;
    if (first_virtual(chunk) && m_.vocab > 0) {
      out.push_back({&units_.embedding_fwd, &units_.embedding_bwd, &units_.embedding_bwd_acc,
                     embedding_parameters(m_, p_.tp)});
    }
    const std::uint64_t layer = layer_parameters(m_, p_.tp).total();
    for (int l = 0; l < layers_per_chunk(m_, p_); ++l) {
      out.push_back({&units_.layer_fwd, &units_.layer_bwd, &units_.layer_bwd_acc, layer});
    }
    if (last_virtual(chunk) && m_.vocab > 0) {
      out.push_back({&units_.head_fwd, &units_.head_bwd, &units_.head_bwd_acc,
                     norm_parameters(m_) + output_parameters(m_, p_.tp, p_.pp)});
    }
    return out;
  }

  OpId emit(CoarseOp op, std::initializer_list<OpId> deps, const std::vector<OpId>* more = nullptr) {
    op.deps_begin = static_cast<std::uint32_t>(out_.deps.size());
    for (const OpId d : deps) {
      if (d != kNone) out_.deps.push_back(d);
    }
    if (more != nullptr) {
      for (const OpId d : *more) {
        if (d != kNone) out_.deps.push_back(d);
      }
    }
    op.deps_end = static_cast<std::uint32_t>(out_.deps.size());
    const auto id = static_cast<OpId>(out_.ops.size());
    if (op.stream == Stream::kDp) last_dp_ = id;
    out_.ops.push_back(op);
    return id;
  }

  // A compute op standing for a unit (or a run of units); waits for what is pending.
  OpId compute(const UnitCost& c) {
    out_.tp_busy += c.tp_busy;
    out_.tp_exposed += c.tp_exposed;
    out_.gemm_flops += c.gemm_flops;
    CoarseOp op;
    op.seconds = c.seconds;
    last_compute_ = emit(op, {}, &pending_);
    pending_.clear();
    return last_compute_;
  }

  OpId collective(Stream stream, std::uint8_t group, Collective kind, std::uint64_t elements, const GroupLinks& g,
                  std::initializer_list<OpId> deps) {
    const Bytes bytes(elements * w_);
    auto [cached, added] = comm_.try_emplace({group, static_cast<int>(kind), elements}, 0.0);
    if (added) cached->second = target_.comm.collective(kind, bytes, g).time.value();
    CoarseOp op;
    op.stream = stream;
    op.kind = CoarseKind::kCollective;
    op.group = group;
    op.seconds = cached->second;
    op.bytes = bytes;
    return emit(op, deps);
  }

  OpId transfer(P2pDirection d, std::uint8_t group, int peer, std::initializer_list<OpId> deps) {
    const bool sp = p_.sequence_parallel && p_.tp > 1;
    const Bytes bytes(static_cast<std::uint64_t>(p_.micro_batch) * static_cast<std::uint64_t>(m_.seq) *
                      static_cast<std::uint64_t>(m_.hidden) * w_ / static_cast<std::uint64_t>(sp ? p_.tp : 1));
    const FlowLinks& flow = group == kPpForwardGroup ? links_.forward : links_.backward;
    auto [cached, added] = comm_.try_emplace({group, -1, bytes.count()}, 0.0);
    if (added) cached->second = target_.comm.point_to_point(bytes, flow).time.value();
    CoarseOp op;
    op.stream = d == P2pDirection::kSend ? Stream::kPpSend : Stream::kPpRecv;
    op.kind = d == P2pDirection::kSend ? CoarseKind::kSend : CoarseKind::kRecv;
    op.group = group;
    op.peer = peer;
    op.seconds = cached->second;
    op.bytes = bytes;
    return emit(op, deps);
  }

  [[nodiscard]] std::uint64_t padded(std::uint64_t elements) const {
    const std::uint64_t unit = static_cast<std::uint64_t>(p_.dp) * (16 / w_);
    return (elements + unit - 1) / unit * unit;
  }

  void run_unit(const Unit& u, bool fwd, int mb) {
    const UnitCost& cost = u.cost(fwd, mb);
    OpId op = kNone;
    if (zero3()) {
      pending_.push_back(collective(Stream::kDp, kDpGroup, Collective::kAllGather, padded(u.parameters), links_.dp,
                                    {previous_unit_first_}));
      // The next unit's gather waits for this unit's first op only: split it off.
      UnitCost first;
      first.seconds = cost.first;
      UnitCost rest = cost;
      rest.seconds -= cost.first;
      previous_unit_first_ = compute(first);
      op = compute(rest);
    } else {
      op = compute(cost);
    }
    if (fwd) return;
    if (zero3()) {
      collective(Stream::kDp, kDpGroup, Collective::kReduceScatter, padded(u.parameters), links_.dp, {op});
    } else if (reducing_) {
      bucket_elements_ += u.parameters;
      bucket_producer_ = op;
      if (bucket_elements_ * w_ >= p_.bucket_bytes.count()) flush_bucket(mb);
    }
  }

  // One op for the whole chunk when nothing needs to wait for a unit in between.
  void run_chunk(const std::vector<Unit>& units, bool fwd, int mb) {
    if (zero3() || (!fwd && reducing_)) {
      previous_unit_first_ = kNone;
      if (fwd) {
        for (const Unit& u : units) run_unit(u, true, mb);
      } else {
        for (auto u = units.rbegin(); u != units.rend(); ++u) run_unit(*u, false, mb);
      }
      return;
    }
    // The units run back to back, each ending with its streams idle: the chunk takes their sum.
    UnitCost total;
    for (const Unit& u : units) {
      const UnitCost& c = u.cost(fwd, mb);
      total.seconds += c.seconds;
      total.compute += c.compute;
      total.tp_busy += c.tp_busy;
      total.tp_exposed += c.tp_exposed;
      total.gemm_flops += c.gemm_flops;
    }
    compute(total);
  }

  void forward(int mb, int chunk) {
    if (!first_virtual(chunk)) {
      pending_.push_back(
          transfer(P2pDirection::kRecv, static_cast<std::uint8_t>(kPpForwardGroup), (stage_ + p_.pp - 1) % p_.pp, {}));
    }
    run_chunk(units_of_[static_cast<std::size_t>(chunk)], true, mb);
    if (!last_virtual(chunk))
      transfer(P2pDirection::kSend, static_cast<std::uint8_t>(kPpForwardGroup), (stage_ + 1) % p_.pp, {last_compute_});
  }

  void backward(int mb, int chunk) {
    if (!last_virtual(chunk)) {
      pending_.push_back(
          transfer(P2pDirection::kRecv, static_cast<std::uint8_t>(kPpBackwardGroup), (stage_ + 1) % p_.pp, {}));
    }
    reducing_ = p_.dp > 1 && p_.zero_stage < 3 && (p_.zero_stage == 2 || mb == microbatches_ - 1);
    run_chunk(units_of_[static_cast<std::size_t>(chunk)], false, mb);
    flush_bucket(mb);
    if (!first_virtual(chunk)) {
      transfer(P2pDirection::kSend, static_cast<std::uint8_t>(kPpBackwardGroup), (stage_ + p_.pp - 1) % p_.pp,
               {last_compute_});
    }
  }

  void flush_bucket(int mb) {
    if (bucket_elements_ == 0) return;
    const bool all_reduce = p_.zero_stage == 0;
    const std::uint64_t elements = all_reduce ? bucket_elements_ : padded(bucket_elements_);
    collective(Stream::kDp, static_cast<std::uint8_t>(kDpGroup),
               all_reduce ? Collective::kAllReduce : Collective::kReduceScatter, elements, links_.dp,
               {bucket_producer_});
    if (mb == microbatches_ - 1) final_buckets_.push_back(elements);
    bucket_elements_ = 0;
  }

  void end_of_step();

  const TransformerConfig& m_;
  const ParallelPlan& p_;
  const UnitCosts& units_;
  const LayoutLinks& links_;
  const Target& target_;
  const int stage_;
  const int microbatches_;
  const std::uint64_t w_;
  CoarseStage& out_;
  std::vector<std::vector<Unit>> units_of_;                              // by chunk
  std::map<std::tuple<std::uint8_t, int, std::uint64_t>, double> comm_;  // (group, kind or -1, size) -> seconds
  std::vector<OpId> pending_;
  OpId last_compute_ = kNone;
  OpId last_dp_ = kNone;
  OpId previous_unit_first_ = kNone;
  bool reducing_ = false;
  std::uint64_t bucket_elements_ = 0;
  OpId bucket_producer_ = kNone;
  std::vector<std::uint64_t> final_buckets_;
};

void CoarseBuilder::end_of_step() {
  OpId norm_grads = kNone;
  if (p_.sequence_parallel && p_.tp > 1) {
    const auto h = static_cast<std::uint64_t>(m_.hidden);
    std::uint64_t replicated = (2 * norm_parameters(m_) + (m_.linear_bias ? 2 * h : 0)) *
                               static_cast<std::uint64_t>(layers_per_chunk(m_, p_) * p_.chunks);
    if (m_.vocab > 0 && stage_ == p_.pp - 1) replicated += norm_parameters(m_);
    norm_grads = collective(Stream::kTp, static_cast<std::uint8_t>(kTpGroup), Collective::kAllReduce, replicated,
                            links_.tp, {last_compute_});
  }
  if (m_.vocab > 0 && m_.tied_embeddings && p_.pp > 1 && (stage_ == 0 || stage_ == p_.pp - 1)) {
    const std::uint64_t table =
        static_cast<std::uint64_t>(vocab_shard(m_, p_.tp)) * static_cast<std::uint64_t>(m_.hidden);
    collective(Stream::kDp, static_cast<std::uint8_t>(kEmbeddingGroup), Collective::kAllReduce, table, links_.embedding,
               {last_compute_});
  }
  const std::uint64_t params = stage_parameters(m_, p_, stage_);
  const auto dp = static_cast<std::uint64_t>(p_.dp);
  const bool sharded = p_.zero_stage >= 1 && p_.dp > 1;
  CoarseOp step;
  step.seconds = target_.compute.time(optimizer_kernel(m_, sharded ? (params + dp - 1) / dp : params)).value();
  const OpId optimizer = emit(step, {norm_grads, last_dp_});
  if (p_.dp > 1 && (p_.zero_stage == 1 || p_.zero_stage == 2)) {
    for (const std::uint64_t elements : final_buckets_) {
      collective(Stream::kDp, static_cast<std::uint8_t>(kDpGroup), Collective::kAllGather, elements, links_.dp,
                 {optimizer});
    }
  }
}

}  // namespace

UnitCost unit_cost(const OpList& ops, const Target& target, const GroupLinks& tp) {
  UnitCost c;
  std::vector<double> end(ops.size(), 0.0);
  std::array<double, 2> stream_end{0.0, 0.0};
  std::vector<Interval> compute;
  std::vector<Interval> comm;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const WorkloadOp& op = ops[i];
    const auto* collective = std::get_if<TpCollective>(&op.payload);
    const std::size_t s = collective != nullptr ? 1 : 0;
    double ready = stream_end[s];
    for (const int d : op.deps) ready = std::max(ready, end[static_cast<std::size_t>(d)]);
    double seconds = 0.0;
    if (collective != nullptr) {
      seconds = target.comm.collective(collective->kind, collective->bytes, tp).time.value();
      comm.push_back({ready, ready + seconds});
      c.tp_busy += seconds;
    } else {
      const OpPayload payload = std::holds_alternative<Gemm>(op.payload)
                                    ? OpPayload(std::get<Gemm>(op.payload))
                                    : OpPayload(std::get<MemoryKernel>(op.payload));
      seconds = target.compute.time(payload, op.phase).value();
      compute.push_back({ready, ready + seconds});
      c.compute += seconds;
      if (const auto* g = std::get_if<Gemm>(&op.payload)) c.gemm_flops += g->flops.value();
    }
    end[i] = ready + seconds;
    stream_end[s] = end[i];
    if (i == 0) c.first = end[i];
  }
  c.seconds = std::max(stream_end[0], stream_end[1]);
  c.tp_exposed = uncovered_length(comm, compute);
  return c;
}

void build_coarse_program(const TransformerConfig& m, const ParallelPlan& p, const UnitCosts& units,
                          const LayoutLinks& links, const Target& target, CoarseProgram& out) {
  out.tied_embedding_group = m.vocab > 0 && m.tied_embeddings && p.pp > 1;
  out.stages.resize(static_cast<std::size_t>(p.pp));
  for (int s = 0; s < p.pp; ++s)
    CoarseBuilder(m, p, units, links, target, s, out.stages[static_cast<std::size_t>(s)]).build();
  match_counterparts(out);
}

CoarseProgram build_coarse_program(const TransformerConfig& m, const ParallelPlan& p, const UnitCosts& units,
                                   const LayoutLinks& links, const Target& target) {
  CoarseProgram out;
  build_coarse_program(m, p, units, links, target, out);
  return out;
}

}  // namespace commscale::predict
