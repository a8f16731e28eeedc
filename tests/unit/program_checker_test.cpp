// The deadlock checker: a correct program passes; each kind of bug, seeded on purpose, is caught
// with a message that names the rank, the op and the group.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "parallel/program_builder.hpp"
#include "program/checker.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

// tiny on dp 2 x tp 2 x pp 2 (8 ranks, tp-dp-pp), 1F1B with 4 microbatches, sequence parallel.
ProgramSet built() {
  ParallelPlan p;
  p.dp = 2;
  p.tp = 2;
  p.pp = 2;
  p.global_batch = 8;
  p.sequence_parallel = true;
  p.zero_stage = 1;
  return build_program(CheckedPlan(find_preset("tiny", ""), p));
}

::testing::AssertionResult caught(const ProgramSet& set, std::initializer_list<std::string> parts) {
  const ProgramCheck check = check_program(set);
  if (check.ok()) return ::testing::AssertionFailure() << "the checker found nothing";
  const std::string& message = check.problems.front();
  for (const std::string& part : parts) {
    if (message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << part << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

// The index of the first op of `rank` whose name is `name`.
OpId find(const ProgramSet& set, int rank, const std::string& name) {
  const std::vector<Op>& ops = ops_of(set, rank);
  for (const Op& op : ops) {
    if (op.name == name) return op.id;
  }
  ADD_FAILURE() << "no op " << name;
  return 0;
}

// Turns an op into a harmless compute kernel: the rank no longer issues it.
void drop(ProgramSet& set, int rank, OpId id) {
  Op& op = own_ops(set, rank)[id];
  op.stream = Stream::kCompute;
  op.payload = MemoryKernel{};
}

TEST(Checker, BuiltProgramPasses) { EXPECT_TRUE(check_program(built()).ok()); }

TEST(Checker, CollectivesInADifferentOrder) {
  ProgramSet set = built();
  std::vector<Op>& ops = own_ops(set, 1);  // rank 1: tp 1 of rank 0's tp group
  const OpId gather = find(set, 1, "mb0.L0.fwd.ln1.all_gather");
  const OpId scatter = find(set, 1, "mb0.L0.fwd.attn.reduce_scatter");
  std::swap(ops[gather].payload, ops[scatter].payload);
  EXPECT_TRUE(caught(set, {"group 'tp' [0, 1]", "stream tp", "all_gather", "reduce_scatter", "rank 1 op",
                           "same collectives in the same order"}));
}

TEST(Checker, CollectiveOfAnotherSize) {
  ProgramSet set = built();
  const OpId id = find(set, 3, "mb1.L2.bwd.mlp.fc1.reduce_scatter");
  std::get<CollectiveOp>(own_ops(set, 3)[id].payload).bytes = Bytes(4096);
  EXPECT_TRUE(caught(set, {"group 'tp' [2, 3]", "of 4096 bytes", "rank 3 op", "mb1.L2.bwd.mlp.fc1.reduce_scatter"}));
}

TEST(Checker, MissingCollective) {
  // Rank 2 is rank 0's data-parallel peer. Without its last all-gather it issues one collective fewer.
  ProgramSet set = built();
  const std::vector<Op>& ops = ops_of(set, 2);
  OpId last = 0;
  for (const Op& op : ops) last = op.stream == Stream::kDp ? op.id : last;
  drop(set, 2, last);
  EXPECT_TRUE(caught(set, {"group 'dp' [0, 2] on stream dp", "rank 0 issues", "rank 2 issues", "step.bucket"}));
  // Without its first reduce-scatter, its sequence no longer lines up with rank 0's.
  set = built();
  drop(set, 2, find(set, 2, "dp.bucket0.reduce_scatter"));
  EXPECT_TRUE(caught(set, {"group 'dp' [0, 2]", "collective #0 is reduce_scatter", "but all_gather", "rank 2 op",
                           "'step.bucket0.all_gather'"}));
}

TEST(Checker, SendWithoutReceive) {
  ProgramSet set = built();
  drop(set, 4, find(set, 4, "mb3.fwd.recv"));  // rank 4 is stage 1 of rank 0's pipeline
  EXPECT_TRUE(caught(set, {"group 'pp-fwd' [0, 4]", "mb3.fwd.send", "no matching receive on rank 4"}));
}

TEST(Checker, ReceiveWithoutSend) {
  ProgramSet set = built();
  drop(set, 4, find(set, 4, "mb2.bwd.send"));
  // The sends that are left match mb0, mb1 and mb3's receives in order; mb3's is the one left over.
  EXPECT_TRUE(caught(set, {"group 'pp-bwd' [0, 4]", "rank 0 op", "'mb3.bwd.recv'", "no matching send from rank 4",
                           "3 sends from rank 4 to rank 0, 4 receives"}));
}

TEST(Checker, SendAndReceiveOfDifferentSizes) {
  ProgramSet set = built();
  std::get<PointToPoint>(own_ops(set, 0)[find(set, 0, "mb1.fwd.send")].payload).bytes = Bytes(100);
  EXPECT_TRUE(caught(set, {"send #1 from rank 0 to rank 4 is 100 bytes", "mb1.fwd.recv"}));
}

TEST(Checker, DependencyOnALaterOpOrItself) {
  ProgramSet set = built();
  std::vector<Op>& ops = own_ops(set, 5);
  ops[3].deps.push_back(7);
  EXPECT_TRUE(caught(set, {"rank 5 op 3", "depends on op 7", "later"}));
  ops[3].deps = {3};
  EXPECT_TRUE(caught(set, {"rank 5 op 3", "itself"}));
  ops[3].deps = {999999};
  EXPECT_TRUE(caught(set, {"rank 5 op 3", "missing"}));
}

TEST(Checker, OpOnTheWrongStreamAndBadHandles) {
  ProgramSet set = built();
  own_ops(set, 6)[find(set, 6, "mb0.L4.fwd.qkv")].stream = Stream::kTp;
  EXPECT_TRUE(caught(set, {"rank 6 op", "mb0.L4.fwd.qkv", "cannot run on stream tp"}));
  set = built();
  std::get<CollectiveOp>(own_ops(set, 6)[find(set, 6, "mb0.L4.fwd.attn.reduce_scatter")].payload).group = 9;
  EXPECT_TRUE(caught(set, {"rank 6", "group handle 9 does not exist"}));
  set = built();
  std::get<PointToPoint>(own_ops(set, 0)[find(set, 0, "mb0.fwd.send")].payload).peer = 0;
  EXPECT_TRUE(caught(set, {"rank 0", "peer 0 is not another member of group 'pp-fwd'"}));
}

TEST(Checker, GroupsThatDisagree) {
  ProgramSet set = built();
  set.ranks[1].groups[kTpGroup].members = {1, 0};  // rank 0 lists [0, 1]
  EXPECT_TRUE(caught(set, {"group 'tp' [0, 1] lists rank 1", "no group 'tp' with these members"}));
  set = built();
  set.ranks[1].groups[kTpGroup].members = {0, 2};
  EXPECT_TRUE(caught(set, {"rank 1 group 'tp' [0, 2]", "including the rank itself"}));
}

// Two ranks, two groups; each rank's second collective waits for its first, but they issue the
// groups in opposite orders: each group's order is consistent, yet neither can start.
TEST(Checker, CrossGroupDeadlock) {
  ProgramSet set;
  set.world_size = 2;
  const auto collective = [](OpId id, Stream stream, std::uint32_t group, std::vector<OpId> deps, std::string name) {
    Op op;
    op.id = id;
    op.stream = stream;
    op.deps = std::move(deps);
    op.name = std::move(name);
    op.payload = CollectiveOp{Collective::kAllReduce, group, Bytes(1024), DataType::kFloat32};
    return op;
  };
  set.programs.push_back({collective(0, Stream::kTp, 0, {}, "a"), collective(1, Stream::kDp, 1, {0}, "b")});
  set.programs.push_back({collective(0, Stream::kDp, 1, {}, "b"), collective(1, Stream::kTp, 0, {0}, "a")});
  const std::vector<Group> groups = {{GroupRole::kTp, {0, 1}}, {GroupRole::kDp, {0, 1}}};
  set.ranks = {{0, 0, groups}, {1, 1, groups}};
  EXPECT_TRUE(caught(set, {"deadlock", "through ranks 0, 1", "rank 0 op 0 'a' (tp) = rank 1 op 1 'a' (tp)",
                           "rank 0 op 1 'b' (dp) = rank 1 op 0 'b' (dp)", "back to the first"}));
  // In the same order on both ranks, it runs.
  set.programs[1] = set.programs[0];
  EXPECT_TRUE(check_program(set).ok());
}

// Both ranks receive before they send, and each send waits for the receive: nobody sends first.
TEST(Checker, PointToPointDeadlock) {
  ProgramSet set;
  set.world_size = 2;
  std::vector<Op> ops(2);
  ops[0].id = 0;
  ops[0].stream = Stream::kPpRecv;
  ops[0].name = "recv";
  ops[0].payload = PointToPoint{P2pDirection::kRecv, 0, 0, Bytes(64), DataType::kBFloat16};
  ops[1].id = 1;
  ops[1].stream = Stream::kPpSend;
  ops[1].name = "send";
  ops[1].deps = {0};
  ops[1].payload = PointToPoint{P2pDirection::kSend, 0, 0, Bytes(64), DataType::kBFloat16};
  std::vector<Op> rank1 = ops;
  std::get<PointToPoint>(ops[0].payload).peer = 1;
  std::get<PointToPoint>(ops[1].payload).peer = 1;
  set.programs = {ops, rank1};
  set.ranks = {{0, 0, {{GroupRole::kPpForward, {0, 1}}}}, {1, 1, {{GroupRole::kPpForward, {0, 1}}}}};
  EXPECT_TRUE(caught(set, {"deadlock", "'recv'", "'send'"}));
  // Without the dependency the sends can start: no deadlock.
  set.programs[0][1].deps.clear();
  EXPECT_TRUE(check_program(set).ok());
}

// Moves op `id` to the front of the list, renumbering ids and dependencies.
void move_to_front(std::vector<Op>& ops, OpId id) {
  std::vector<OpId> renumbered(ops.size());
  for (OpId i = 0; i < ops.size(); ++i) renumbered[i] = i == id ? 0 : (i < id ? i + 1 : i);
  std::rotate(ops.begin(), ops.begin() + id, ops.begin() + id + 1);
  for (Op& op : ops) {
    op.id = renumbered[op.id];
    for (OpId& d : op.deps) d = renumbered[d];
  }
}

TEST(Checker, SeededCycleInABuiltProgramIsConfirmedRankByRank) {
  // Rank 0 (stage 0) posts its receive of mb0's gradient first and makes its very first forward op
  // wait for it. That gradient comes from rank 4 (stage 1), which needs mb0's activation, which rank
  // 0 only sends after that forward: a cycle through two ranks and two point-to-point pairs. Ranks
  // 1-3 still share stage 0's op list, so the check first sees it on the shared lists, then confirms
  // it rank by rank and names rank 0 and rank 4.
  ProgramSet set = built();
  std::vector<Op>& ops = own_ops(set, 0);
  move_to_front(ops, find(set, 0, "mb0.bwd.recv"));
  ops[find(set, 0, "mb0.fwd.embedding")].deps.push_back(0);
  EXPECT_TRUE(caught(set, {"deadlock", "through ranks 0, 1, 4, 5", "[rank 0 op 0 'mb0.bwd.recv' (pp-recv) = rank 4 op",
                           "'mb0.fwd.send' (pp-send) = rank 4 op"}));
}

}  // namespace
}  // namespace commscale
