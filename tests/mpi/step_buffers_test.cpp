// Where the executor's ops read and write (runtime/step_buffers.hpp): inside the pool, never
// overlapping within an op, and GEMMs' A and B where no op writes; offload's host sides in the host pool.

#include <gtest/gtest.h>

#include <algorithm>
#include <variant>
#include <vector>

#include "parallel/prepared_step.hpp"
#include "runtime/step_buffers.hpp"
#include "runtime/step_engine.hpp"
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
  // A modelled size below what the largest ops need: the pool is the largest GEMM's inputs and the largest
  // written side, so slices wrap.
  const StepBuffers s = place_step_buffers(ops, Bytes(1));
  ASSERT_EQ(s.operands.size(), ops.size());
  std::uint64_t gemm_inputs = 0;
  std::uint64_t written = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpBuffers& o = s.operands[i];
    const auto aligned = [](const Slice& x) { return (x.size.count() + 255) / 256 * 256; };
    if (std::holds_alternative<Gemm>(ops[i].payload)) {
      gemm_inputs = std::max(gemm_inputs, aligned(o.a) + aligned(o.b));
      written = std::max(written, aligned(o.c));
    } else {
      written = std::max(written, o.a.offset == o.c.offset ? std::max(aligned(o.a), aligned(o.c))
                                                           : aligned(o.a) + aligned(o.b) + aligned(o.c));
    }
  }
  std::uint64_t largest = 0;  // but the in-place optimizer's
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpBuffers& o = s.operands[i];
    if (o.a.offset == o.c.offset && o.a.size.count() > 0) continue;
    largest = std::max(largest, (o.a.size.count() + 255) / 256 * 256 + (o.b.size.count() + 255) / 256 * 256 +
                                    (o.c.size.count() + 255) / 256 * 256);
  }
  EXPECT_EQ(s.pool.count(), std::max(2 * largest, gemm_inputs + written));
  EXPECT_GE(s.gemm_inputs.count(), gemm_inputs);
  EXPECT_GE(s.pool.count() - s.gemm_inputs.count(), written);
  int gemms = 0;
  int in_place = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpBuffers& o = s.operands[i];
    for (const Slice* x : {&o.a, &o.b, &o.c}) EXPECT_LE(x->offset + x->size.count(), s.pool.count()) << i;
    EXPECT_FALSE(overlap(o.a, o.b)) << i;
    EXPECT_FALSE(overlap(o.b, o.c)) << i;
    // The optimizer's update works in place: it writes where it reads. Every other op writes apart.
    const auto* kernel = std::get_if<MemoryKernel>(&ops[i].payload);
    if (kernel != nullptr && kernel->kind == MemoryKernelKind::kOptimizer) {
      ++in_place;
      EXPECT_EQ(o.c.offset, o.a.offset) << i;
    } else {
      EXPECT_FALSE(overlap(o.a, o.c)) << i;
    }
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
  EXPECT_EQ(in_place, 1);
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

// Everything offloaded (ZeRO-3 with optimizer, parameter and activation offload): each host copy and the host
// optimizer have a host side of their size in a host pool of twice the largest, placed one after another.
TEST(StepBuffers, OffloadsHostSidesAreInTheHostPool) {
  ParallelPlan plan;
  plan.global_batch = 2;
  plan.zero_stage = 3;
  plan.offload_optimizer = OffloadDevice::kCpu;
  plan.offload_params = OffloadDevice::kCpu;
  plan.offload_activations = true;
  const PreparedStep step = prepare_step(CheckedPlan(find_preset("tiny", ""), plan), {}, Bytes(80 * kGiB));
  const std::vector<Op>& ops = ops_of(step.program, 0);
  const StepBuffers s = place_step_buffers(ops, Bytes(1));
  std::uint64_t largest = 0;
  int copies = 0;
  const Slice* previous = nullptr;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Slice& host = s.operands[i].host;
    const Bytes side = host_side_bytes(ops[i]);
    EXPECT_EQ(host.size, side) << ops[i].name;
    if (side.count() == 0) continue;
    if (const auto* h = std::get_if<HostCopy>(&ops[i].payload)) {
      ++copies;
      EXPECT_EQ(s.operands[i].c.size, h->bytes) << ops[i].name;  // the device side
    }
    largest = std::max(largest, (side.count() + 255) / 256 * 256);
    EXPECT_LE(host.offset + host.size.count(), s.host_pool.count()) << ops[i].name;
    if (previous != nullptr) {
      EXPECT_FALSE(overlap(host, *previous)) << ops[i].name;
    }
    previous = &host;
  }
  EXPECT_GT(copies, 0);
  EXPECT_EQ(s.host_pool.count(), 2 * largest);

  // One host update, of the whole model's parameters (dp 1), 2 bytes a bf16 gradient and weight.
  const std::vector<HostUpdate> updates = host_updates(ops);
  ASSERT_EQ(updates.size(), 1U);
  const auto& k = std::get<MemoryKernel>(ops[updates[0].op].payload);
  EXPECT_EQ(k.kind, MemoryKernelKind::kHostOptimizer);
  EXPECT_EQ(updates[0].first, 0U);
  EXPECT_EQ(updates[0].count, k.elements);
  EXPECT_EQ(updates[0].width, 2U);
  EXPECT_EQ(host_parameters(updates), k.elements);
  EXPECT_EQ(s.operands[updates[0].op].host.size, k.bytes_read);
}

TEST(StepBuffers, NoOffloadNoHostPool) {
  const std::vector<Op> ops = tiny_step_ops();
  const StepBuffers s = place_step_buffers(ops, Bytes(1));
  EXPECT_EQ(s.host_pool.count(), 0U);
  EXPECT_TRUE(host_updates(ops).empty());
}

}  // namespace
}  // namespace commscale
