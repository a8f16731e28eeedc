// The verification pattern against an independent host simulation of each collective: n ranks'
// inputs are generated, the collective is carried out by plain loops with NCCL's semantics, and
// every rank's output must pass the check; one changed element must fail it.
#include "core/pattern.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace commscale {
namespace {

using Array = std::vector<double>;

PatternSpec spec_for(Collective c, ReduceOp op, DataType type, int n, int rank, int root, std::uint64_t count) {
  PatternSpec s{c, op, type, n, rank, root, 3, count};
  s.rel_tolerance = pattern_tolerance(s);
  return s;
}

Array inputs_of(const PatternSpec& s, std::uint64_t send_count) {
  Array a(send_count);
  for (std::uint64_t i = 0; i < send_count; ++i) a[i] = pattern_input(s, s.rank, i);
  return a;
}

double reduce(ReduceOp op, DataType type, const std::vector<double>& xs) {
  double acc = xs[0];
  for (std::size_t i = 1; i < xs.size(); ++i) {
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg: acc = pattern_wrap(type, acc + xs[i]); break;
      case ReduceOp::kProd: acc = pattern_wrap(type, acc * xs[i]); break;
      case ReduceOp::kMax: acc = std::max(acc, xs[i]); break;
      case ReduceOp::kMin: acc = std::min(acc, xs[i]); break;
    }
  }
  if (op == ReduceOp::kAvg) acc = is_floating(type) ? acc / xs.size() : std::trunc(acc / xs.size());
  return acc;
}

// What rank r's receive buffer holds after the collective, computed from everyone's inputs.
Array simulate(Collective c, ReduceOp op, DataType type, const std::vector<Array>& in, int r, int root,
               std::uint64_t count) {
  const auto n = static_cast<int>(in.size());
  auto column = [&](std::uint64_t i) {
    std::vector<double> xs;
    for (int q = 0; q < n; ++q) xs.push_back(in[q][i]);
    return xs;
  };
  Array out;
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kReduce:
      for (std::uint64_t i = 0; i < count; ++i) out.push_back(reduce(op, type, column(i)));
      break;
    case Collective::kBroadcast: out = in[root]; break;
    case Collective::kAllGather:
      for (int q = 0; q < n; ++q) out.insert(out.end(), in[q].begin(), in[q].end());
      break;
    case Collective::kReduceScatter:
      for (std::uint64_t i = 0; i < count; ++i) out.push_back(reduce(op, type, column(r * count + i)));
      break;
    case Collective::kAllToAll:
      for (int q = 0; q < n; ++q) out.insert(out.end(), in[q].begin() + r * count, in[q].begin() + (r + 1) * count);
      break;
    case Collective::kSendRecv: out = in[(r + n - 1) % n]; break;
    case Collective::kAllToAllV:
      break;  // checked a peer's segment at a time: Pattern.AlltoallvSegments
  }
  return out;
}

std::uint64_t wrong_in(const Array& values, const PatternSpec& s) {
  std::vector<std::byte> typed(values.size() * size_of(s.type));
  for (std::size_t i = 0; i < values.size(); ++i) store_element_host(typed.data(), s.type, i, values[i]);
  return count_wrong_host(typed.data(), values.size(), s);
}

TEST(Pattern, EveryCollectiveTypeAndOperatorMatchesASimulation) {
  for (int n : {1, 2, 3, 5}) {
    for (Collective c : all_collectives()) {
      for (DataType type : all_data_types()) {
        for (ReduceOp op : all_reduce_ops()) {
          if (!takes_reduce_op(c) && op != ReduceOp::kSum) continue;
          const int root = n - 1;
          const std::uint64_t count = 37;  // per-rank chunk for gathers and scatters
          const bool whole_group = per_rank_chunks(traits(c).shape);
          const std::uint64_t send_count = c == Collective::kAllGather || !whole_group ? count : count * n;
          std::vector<Array> in;
          for (int r = 0; r < n; ++r) in.push_back(inputs_of(spec_for(c, op, type, n, r, root, count), send_count));
          for (int r = 0; r < n; ++r) {
            const PatternSpec s = spec_for(c, op, type, n, r, root, count);
            Array out = simulate(c, op, type, in, r, root, count);
            if (c == Collective::kReduce && r != root) continue;  // no defined output
            SCOPED_TRACE(::testing::Message()
                         << name(c) << " " << name(type) << " " << name(op) << " n=" << n << " rank=" << r);
            EXPECT_EQ(wrong_in(out, s), 0u);
            out[out.size() / 2] += 1;  // one element off by one
            EXPECT_EQ(wrong_in(out, s), 1u);
          }
        }
      }
    }
  }
}

// alltoallv (bench/sweep.cpp): sender i writes its share for peer j as the input of pair i x n + j, and the
// receiver checks the share from i against that pair. 3 ranks, rank 1 receiving shares of 5, 0 and 7 elements:
// the right shares pass, a share from the wrong sender and a share shifted by one element fail.
TEST(Pattern, AlltoallvSegments) {
  const int n = 3;
  const auto share = [&](int from, int to, std::uint64_t count) {
    PatternSpec s = spec_for(Collective::kAllToAllV, ReduceOp::kSum, DataType::kFloat32, n, from, 0, 0);
    s.rank = from * n + to;
    Array a(count);
    for (std::uint64_t i = 0; i < count; ++i) a[i] = pattern_input(s, s.rank, i);
    return a;
  };
  const auto check = [&](int from, const Array& got) {
    PatternSpec s = spec_for(Collective::kAllToAllV, ReduceOp::kSum, DataType::kFloat32, n, 1, 0, 0);
    s.root = from * n + 1;
    return wrong_in(got, s);
  };
  EXPECT_EQ(check(0, share(0, 1, 5)), 0u);
  EXPECT_EQ(check(2, share(2, 1, 7)), 0u);
  EXPECT_GT(check(2, share(0, 1, 7)), 0u);  // rank 0's share where rank 2's belongs
  EXPECT_GT(check(0, share(0, 2, 5)), 0u);  // rank 0's share for rank 2
  Array shifted = share(0, 1, 6);
  shifted.erase(shifted.begin());
  EXPECT_GT(check(0, shifted), 0u);
}

TEST(Pattern, InputsAreSmallNonZeroIntegersAndDifferByRankAndRep) {
  PatternSpec s = spec_for(Collective::kAllGather, ReduceOp::kSum, DataType::kFloat32, 4, 0, 0, 1000);
  int same_across_ranks = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const double x = pattern_input(s, 0, i);
    EXPECT_GE(x, 1.0);
    EXPECT_LE(x, 8.0);
    EXPECT_EQ(x, std::floor(x));
    if (x == pattern_input(s, 1, i)) ++same_across_ranks;
  }
  // Independent values in 1..8 agree one time in eight: about 125 of 1000, far from all of them.
  EXPECT_LT(same_across_ranks, 250);
  PatternSpec next = s;
  next.rep = s.rep + 1;
  int same_across_reps = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) same_across_reps += pattern_input(s, 0, i) == pattern_input(next, 0, i);
  EXPECT_LT(same_across_reps, 250);
}

TEST(Pattern, PoisonIsNeverAnExpectedValue) {
  for (DataType type : all_data_types()) {
    const PatternSpec s = spec_for(Collective::kAllReduce, ReduceOp::kSum, type, 4, 0, 0, 64);
    std::vector<std::byte> poisoned(64 * size_of(type));
    std::memset(poisoned.data(), kPoisonByte, poisoned.size());
    EXPECT_EQ(count_wrong_host(poisoned.data(), 64, s), 64u) << name(type);
  }
}

TEST(Pattern, SeededCorruptionChangesEveryReduction) {
  // pattern_corruption(op) must move the reduced value under each operator, in every type and for
  // every element: -64 lowers sums, products and minimums (inputs are >= 1) and moves a truncated
  // integer average by at least 65 / n; 64 raises a maximum (inputs are <= 8).
  for (DataType type : all_data_types()) {
    for (ReduceOp op : all_reduce_ops()) {
      for (int n : {1, 2, 4, 7}) {
        const PatternSpec s = spec_for(Collective::kAllReduce, op, type, n, 0, 0, 1);
        for (std::uint64_t i = 0; i < 64; ++i) {
          std::vector<double> xs;
          for (int q = 0; q < n; ++q) xs.push_back(pattern_input(s, q, i));
          const double good = reduce(op, type, xs);
          xs[0] = pattern_corruption(op);
          EXPECT_FALSE(pattern_matches(s, reduce(op, type, xs), good)) << name(type) << " " << name(op) << " n=" << n;
        }
      }
    }
  }
}

TEST(Pattern, ToleranceIsZeroWhereResultsAreExact) {
  // bf16 holds integers to 2^8 = 256: a sum of 32 ranks' inputs (at most 8 each) is exact, of 33 not.
  EXPECT_EQ(spec_for(Collective::kAllReduce, ReduceOp::kSum, DataType::kBFloat16, 32, 0, 0, 1).rel_tolerance, 0.0);
  EXPECT_DOUBLE_EQ(spec_for(Collective::kAllReduce, ReduceOp::kSum, DataType::kBFloat16, 33, 0, 0, 1).rel_tolerance,
                   34.0 / 128.0);  // (n + 1) * 2^-7
  // Products of 1s and 2s reach 2^n: exact in fp16 (2^11) up to 11 ranks.
  EXPECT_EQ(spec_for(Collective::kReduce, ReduceOp::kProd, DataType::kFloat16, 11, 0, 0, 1).rel_tolerance, 0.0);
  EXPECT_GT(spec_for(Collective::kReduce, ReduceOp::kProd, DataType::kFloat16, 12, 0, 0, 1).rel_tolerance, 0.0);
  // Averages divide: (n + 1) ulps of fp32 for 3 ranks.
  EXPECT_DOUBLE_EQ(spec_for(Collective::kAllReduce, ReduceOp::kAvg, DataType::kFloat32, 3, 0, 0, 1).rel_tolerance,
                   4.0 * std::ldexp(1.0, -23));
  // Moving data is exact whatever the group size; integers are always compared exactly.
  EXPECT_EQ(spec_for(Collective::kAllGather, ReduceOp::kSum, DataType::kBFloat16, 1000, 0, 0, 1).rel_tolerance, 0.0);
  EXPECT_EQ(spec_for(Collective::kAllReduce, ReduceOp::kAvg, DataType::kInt32, 3, 0, 0, 1).rel_tolerance, 0.0);
}

TEST(Pattern, IntegerSumsWrapLikeTheDevice) {
  // 20 ranks of int8 inputs up to 8 can sum past 127; the expected value wraps as int8 arithmetic does.
  const PatternSpec s = spec_for(Collective::kAllReduce, ReduceOp::kSum, DataType::kInt8, 20, 0, 0, 256);
  for (std::uint64_t i = 0; i < 256; ++i) {
    long exact = 0;
    for (int q = 0; q < 20; ++q) exact += static_cast<long>(pattern_input(s, q, i));
    double expected = 0;
    ASSERT_TRUE(pattern_expected(s, i, &expected));
    EXPECT_EQ(expected, static_cast<double>(static_cast<std::int8_t>(exact)));
  }
}

}  // namespace
}  // namespace commscale
