// Where the executor's ops read and write (runtime/step_buffers.hpp): inside the pool, never
// overlapping within an op, and GEMMs' A and B where no op writes.

#include <gtest/gtest.h>

#include <variant>
#include <vector>

#include "parallel/prepared_step.hpp"
#include "runtime/step_buffers.hpp"
#include "workload/presets.hpp"

namespace commscale {
namespace {

bool overlap(const Slice& x, const Slice& y) {
  if (x.size.count() == 0 || y.size.count() == 0) return false;
  return x.offset < y.offset + y.size.count() && y.offset < x.offset + x.size.count();
}

std::vector<Op> tiny_step_ops() {
  ParallelPlan plan;
  plan.global_batch = 4;
  const CheckedPlan checked(find_preset("tiny", ""), plan);
  const PreparedStep step = prepare_step(checked, {}, Bytes(80 * kGiB));
  return ops_of(step.program, 0);
}

TEST(StepBuffers, GemmOperandsAreNeverWritten) {
  const std::vector<Op> ops = tiny_step_ops();
  // A modelled size below twice the largest op: the pool is twice the largest op, so slices wrap.
  const StepBuffers s = place_step_buffers(ops, Bytes(1));
  ASSERT_EQ(s.operands.size(), ops.size());
  EXPECT_EQ(s.pool.count(), 2 * s.largest_op.count());
  EXPECT_GE(s.gemm_inputs.count(), s.largest_op.count());
  int gemms = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpBuffers& o = s.operands[i];
    for (const Slice* x : {&o.a, &o.b, &o.c}) EXPECT_LE(x->offset + x->size.count(), s.pool.count()) << i;
    EXPECT_FALSE(overlap(o.a, o.b)) << i;
    EXPECT_FALSE(overlap(o.a, o.c)) << i;
    EXPECT_FALSE(overlap(o.b, o.c)) << i;
    // Every written slice lies past the GEMMs' inputs; every GEMM reads before it.
    EXPECT_GE(o.c.offset, s.gemm_inputs.count()) << i;
    if (std::holds_alternative<Gemm>(ops[i].payload)) {
      ++gemms;
      EXPECT_LE(o.a.offset + o.a.size.count(), s.gemm_inputs.count()) << i;
      EXPECT_LE(o.b.offset + o.b.size.count(), s.gemm_inputs.count()) << i;
    } else {
      EXPECT_GE(o.a.offset, s.gemm_inputs.count()) << i;
    }
  }
  EXPECT_GT(gemms, 0);
}

TEST(StepBuffers, ConsecutiveGemmsReadDifferentMemory) {
  const std::vector<Op> ops = tiny_step_ops();
  const StepBuffers s = place_step_buffers(ops, Bytes(kGiB));
  ASSERT_EQ(s.pool.count(), kGiB);  // the modelled size, above twice the largest op
  const OpBuffers* last = nullptr;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!std::holds_alternative<Gemm>(ops[i].payload)) continue;
    const OpBuffers& o = s.operands[i];
    if (last != nullptr) {
      EXPECT_FALSE(overlap(o.a, last->a) || overlap(o.a, last->b) || overlap(o.b, last->a) || overlap(o.b, last->b))
          << i;
    }
    last = &o;
  }
}

}  // namespace
}  // namespace commscale
