// The coarse program's simulation (stage_program.hpp): the simulator's rules (simulator.hpp) on one
// rank per stage, with counterparts matched at build time so that no call needs matching while it
// runs. tests/unit/predict_stage_model_test.cpp checks it against the general simulator.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "parallel/program_builder.hpp"
#include "predict/stage_program.hpp"

namespace commscale::predict {
namespace {

constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();

class CoarseEngine {
 public:
  CoarseEngine(const CoarseProgram& p, CoarseTimes& t) : p_(p), t_(t) {
    const std::size_t n = p.stages.size();
    t.start.resize(n);
    t.data_start.resize(n);
    t.end.resize(n);
    streams_.resize(n);
    next_.assign(n, {});
    dependents_begin_.resize(n);
    dependents_.resize(n);
    for (std::size_t s = 0; s < n; ++s) {
      const CoarseStage& stage = p.stages[s];
      t.start[s].assign(stage.ops.size(), kUnset);
      t.data_start[s].assign(stage.ops.size(), kUnset);
      t.end[s].assign(stage.ops.size(), kUnset);
      index(s);
      for (int k = 0; k < kStreamCount; ++k) work_.push_back({static_cast<int>(s), k});
    }
  }

  void run() {
    while (!work_.empty()) {
      const auto [s, k] = work_.back();
      work_.pop_back();
      advance(s, k);
    }
    for (std::size_t s = 0; s < t_.end.size(); ++s) {
      for (const double e : t_.end[s]) {
        if (std::isnan(e)) throw RuntimeFailure("coarse simulation stalled: a transfer has no counterpart");
        t_.step = std::max(t_.step, e);
      }
    }
  }

 private:
  // Stream order and dependents (CSR) of one stage.
  void index(std::size_t s) {
    const CoarseStage& stage = p_.stages[s];
    auto& begin = dependents_begin_[s];
    begin.assign(stage.ops.size() + 1, 0);
    for (std::size_t i = 0; i < stage.ops.size(); ++i) {
      streams_[s][static_cast<std::size_t>(stage.ops[i].stream)].push_back(static_cast<OpId>(i));
      for (std::uint32_t d = stage.ops[i].deps_begin; d < stage.ops[i].deps_end; ++d) ++begin[stage.deps[d] + 1];
    }
    for (std::size_t i = 0; i < stage.ops.size(); ++i) begin[i + 1] += begin[i];
    dependents_[s].resize(begin.back());
    std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
    for (std::size_t i = 0; i < stage.ops.size(); ++i) {
      for (std::uint32_t d = stage.ops[i].deps_begin; d < stage.ops[i].deps_end; ++d) {
        dependents_[s][fill[stage.deps[d]]++] = static_cast<OpId>(i);
      }
    }
  }

  void advance(int s, int k) {
    const auto si = static_cast<std::size_t>(s);
    const CoarseStage& stage = p_.stages[si];
    const auto& order = streams_[si][static_cast<std::size_t>(k)];
    std::size_t& next = next_[si][static_cast<std::size_t>(k)];
    auto& start = t_.start[si];
    auto& end = t_.end[si];
    while (next < order.size()) {
      const OpId id = order[next];
      if (!std::isnan(end[id])) {
        ++next;
        continue;
      }
      if (!std::isnan(start[id])) return;  // waiting for its counterpart
      const CoarseOp& op = stage.ops[id];
      double ready = next > 0 ? end[order[next - 1]] : 0.0;
      for (std::uint32_t d = op.deps_begin; d < op.deps_end; ++d) {
        const double e = end[stage.deps[d]];
        if (std::isnan(e)) return;
        ready = std::max(ready, e);
      }
      start[id] = ready;
      if (op.partner_stage < 0) {
        complete(s, id, ready);
        continue;
      }
      const auto ps = static_cast<std::size_t>(op.partner_stage);
      const double other = t_.start[ps][op.partner_op];
      if (std::isnan(other)) return;  // the counterpart completes both
      const double moving = std::max(ready, other);
      complete(s, id, moving);
      complete(op.partner_stage, op.partner_op, moving);
      work_.push_back({op.partner_stage, static_cast<int>(p_.stages[ps].ops[op.partner_op].stream)});
    }
  }

  void complete(int s, OpId id, double moving) {
    const auto si = static_cast<std::size_t>(s);
    t_.data_start[si][id] = moving;
    t_.end[si][id] = moving + p_.stages[si].ops[id].seconds;
    const auto& begin = dependents_begin_[si];
    for (std::uint32_t d = begin[id]; d < begin[id + 1]; ++d) {
      work_.push_back({s, static_cast<int>(p_.stages[si].ops[dependents_[si][d]].stream)});
    }
  }

  const CoarseProgram& p_;
  CoarseTimes& t_;
  std::vector<std::array<std::vector<OpId>, kStreamCount>> streams_;
  std::vector<std::array<std::size_t, kStreamCount>> next_;
  std::vector<std::vector<std::uint32_t>> dependents_begin_;
  std::vector<std::vector<OpId>> dependents_;
  std::vector<std::pair<int, int>> work_;
};

}  // namespace

void match_counterparts(CoarseProgram& program) {
  // (group, from stage, to stage) -> the sends, and the receives, in program order.
  std::map<std::tuple<int, int, int>, std::pair<std::vector<OpId>, std::vector<OpId>>> channels;
  std::vector<std::pair<int, OpId>> embedding;
  for (std::size_t s = 0; s < program.stages.size(); ++s) {
    const auto stage = static_cast<int>(s);
    for (std::size_t i = 0; i < program.stages[s].ops.size(); ++i) {
      const CoarseOp& op = program.stages[s].ops[i];
      if (op.kind == CoarseKind::kSend) channels[{op.group, stage, op.peer}].first.push_back(static_cast<OpId>(i));
      if (op.kind == CoarseKind::kRecv) channels[{op.group, op.peer, stage}].second.push_back(static_cast<OpId>(i));
      if (op.kind == CoarseKind::kCollective && op.group == kEmbeddingGroup)
        embedding.emplace_back(stage, static_cast<OpId>(i));
    }
  }
  const auto pair = [&](int a, OpId x, int b, OpId y) {
    CoarseOp& first = program.stages[static_cast<std::size_t>(a)].ops[x];
    CoarseOp& second = program.stages[static_cast<std::size_t>(b)].ops[y];
    first.partner_stage = b;
    first.partner_op = y;
    second.partner_stage = a;
    second.partner_op = x;
  };
  for (const auto& [key, ops] : channels) {
    if (ops.first.size() != ops.second.size())
      throw RuntimeFailure("coarse program: sends and receives do not pair up");
    for (std::size_t k = 0; k < ops.first.size(); ++k)
      pair(std::get<1>(key), ops.first[k], std::get<2>(key), ops.second[k]);
  }
  if (embedding.size() == 2) pair(embedding[0].first, embedding[0].second, embedding[1].first, embedding[1].second);
}

void run_coarse_program(const CoarseProgram& program, CoarseTimes& out) {
  out.step = 0.0;
  CoarseEngine(program, out).run();
}

CoarseTimes run_coarse_program(const CoarseProgram& program) {
  CoarseTimes t;
  run_coarse_program(program, t);
  return t;
}

CoarseAsProgramSet as_program_set(const CoarseProgram& program) {
  CoarseAsProgramSet out;
  const int stages = static_cast<int>(program.stages.size());
  out.set.world_size = stages;
  std::vector<int> pipeline(program.stages.size());
  for (int s = 0; s < stages; ++s) pipeline[static_cast<std::size_t>(s)] = s;
  for (int s = 0; s < stages; ++s) {
    const CoarseStage& stage = program.stages[static_cast<std::size_t>(s)];
    std::vector<Op> ops;
    std::vector<double> durations;
    for (std::size_t i = 0; i < stage.ops.size(); ++i) {
      const CoarseOp& c = stage.ops[i];
      Op op;
      op.id = static_cast<OpId>(i);
      op.stream = c.stream;
      op.deps.assign(stage.deps.begin() + c.deps_begin, stage.deps.begin() + c.deps_end);
      if (c.kind == CoarseKind::kCompute) op.payload = MemoryKernel{};
      if (c.kind == CoarseKind::kCollective)
        op.payload = CollectiveOp{Collective::kAllReduce, c.group, c.bytes, DataType::kBFloat16};
      if (c.kind == CoarseKind::kSend || c.kind == CoarseKind::kRecv) {
        op.payload = PointToPoint{c.kind == CoarseKind::kSend ? P2pDirection::kSend : P2pDirection::kRecv, c.group,
                                  c.peer, c.bytes, DataType::kBFloat16};
      }
      ops.push_back(std::move(op));
      durations.push_back(c.seconds);
    }
    out.set.programs.push_back(std::move(ops));
    out.durations.push_back(std::move(durations));
    std::vector<Group> groups = {{"tp", {s}}, {"dp", {s}}, {"pp-fwd", pipeline}, {"pp-bwd", pipeline}};
    if (program.tied_embedding_group && (s == 0 || s == stages - 1)) groups.push_back({"embedding", {0, stages - 1}});
    out.set.ranks.push_back({s, s, std::move(groups)});
  }
  return out;
}

}  // namespace commscale::predict
