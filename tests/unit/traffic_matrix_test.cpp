#include "core/traffic_matrix.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/routing.hpp"

namespace commscale {
namespace {

namespace fs = std::filesystem;

class MatrixFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("commscale-matrix-{}-{}", ::getpid(), counter_++);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  [[nodiscard]] fs::path write(const std::string& text) const {
    const fs::path p = dir_ / "m.txt";
    std::ofstream(p) << text;
    return p;
  }
  // The message of the InputError reading `text` throws.
  [[nodiscard]] std::string error_of(const std::string& text) const {
    try {
      (void)read_traffic_matrix(write(text), "--matrix");
    } catch (const InputError& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      return e.what();
    }
    ADD_FAILURE() << "no error for: " << text;
    return "";
  }

  fs::path dir_;
  static inline int counter_ = 0;
};

TEST_F(MatrixFile, ReadsTextWithCommentsAndJson) {
  const TrafficMatrix t = read_traffic_matrix(write("# bytes\n0 1 2\n3 4 5  # row 1\n\n6 7 8\n"), "--matrix");
  EXPECT_EQ(t.ranks, 3);
  EXPECT_DOUBLE_EQ(t.at(1, 2), 5.0);
  EXPECT_DOUBLE_EQ(t.sent_by(2), 21.0);     // 6 + 7 + 8
  EXPECT_DOUBLE_EQ(t.received_by(0), 9.0);  // 0 + 3 + 6
  const TrafficMatrix j = read_traffic_matrix(write(R"({"matrix": [[1, 2], [3, 4]]})"), "--matrix");
  EXPECT_EQ(j.ranks, 2);
  EXPECT_DOUBLE_EQ(j.at(1, 0), 3.0);
  EXPECT_EQ(read_traffic_matrix(write("[[1]]"), "--matrix").ranks, 1);
}

TEST_F(MatrixFile, ErrorsNameTheFileAndWhatWasExpected) {
  EXPECT_NE(error_of("1 2\n3\n").find("not square"), std::string::npos);
  EXPECT_NE(error_of("1 2 3\n4 5 6\n").find("not square"), std::string::npos);
  EXPECT_NE(error_of("1 -2\n3 4\n").find("row 0 column 1 is -2"), std::string::npos);
  EXPECT_NE(error_of("1 x\n3 4\n").find("\"x\" is not a number"), std::string::npos);
  EXPECT_NE(error_of("0 0\n0 0\n").find("every value is 0"), std::string::npos);
  EXPECT_NE(error_of("# nothing\n").find("no matrix"), std::string::npos);
  EXPECT_NE(error_of(R"({"rows": [[1]]})").find("unknown key \"rows\""), std::string::npos);
  EXPECT_NE(error_of("[[1, 2], [3, \"4\"]]").find("row 1 column 1 is not a number"), std::string::npos);
  const std::string message = error_of("1 2\n3\n");
  EXPECT_NE(message.find("--matrix"), std::string::npos);
  EXPECT_NE(message.find("m.txt"), std::string::npos);
  EXPECT_THROW((void)read_traffic_matrix(dir_ / "missing.txt", "--matrix"), InputError);
  const TrafficMatrix m = uniform_traffic(4);
  EXPECT_NO_THROW(check_matrix_ranks(m, 4, "--matrix"));
  EXPECT_THROW(check_matrix_ranks(m, 8, "--matrix"), InputError);
}

// A uniform matrix gives alltoall's chunk: 1 MiB over 4 ranks is 256 KiB a peer; 1000 bytes over 4 is 250,
// rounded down to 240 (15 units of 16), as collective_layout rounds alltoall's chunk.
TEST(TrafficMatrix, PeerBytesOfAUniformMatrixAreAlltoallChunks) {
  for (const auto& [size, chunk] : {std::pair{1u << 20, 1u << 18}, std::pair{1000u, 240u}}) {
    const std::vector<std::uint64_t> b = peer_bytes(uniform_traffic(4), Bytes(size));
    ASSERT_EQ(b.size(), 16u);
    for (std::uint64_t v : b) EXPECT_EQ(v, chunk);
    const TrafficLoad load = traffic_load(b, 4);
    EXPECT_EQ(load.max_send_bytes, 4 * chunk);
    EXPECT_EQ(load.max_recv_bytes, 4 * chunk);
    EXPECT_DOUBLE_EQ(load.recv_imbalance(), 1.0);
  }
}

// Rows {1,1},{1,3} (total 6) at a mean of 96 bytes a rank: scale 96 x 2 / 6 = 32 bytes per unit weight, so
// the cells are 32, 32, 32, 96; rank 1 receives 32 + 96 = 128 of a mean of 96 (4/3) and sends 128.
TEST(TrafficMatrix, PeerBytesScaleTheWeightsToTheMeanByHand) {
  const TrafficMatrix m{2, {1, 1, 1, 3}, "test"};
  const std::vector<std::uint64_t> b = peer_bytes(m, Bytes(96));
  EXPECT_EQ(b, (std::vector<std::uint64_t>{32, 32, 32, 96}));
  const TrafficLoad load = traffic_load(b, 2);
  EXPECT_EQ(load.max_send_bytes, 128u);
  EXPECT_EQ(load.max_recv_bytes, 128u);
  EXPECT_DOUBLE_EQ(load.mean_recv_bytes, 96.0);
  EXPECT_DOUBLE_EQ(load.recv_imbalance(), 128.0 / 96.0);
}

TEST(Routing, ParsesKeysAndRefusesBadOnes) {
  const RoutingSpec s = parse_routing("experts=64,top-k=6,imbalance=1.5,seed=7,tokens=256", "--routing");
  EXPECT_EQ(s.experts, 64);
  EXPECT_EQ(s.top_k, 6);
  EXPECT_DOUBLE_EQ(*s.imbalance, 1.5);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.tokens, 256);
  EXPECT_EQ(routing_text(s), "experts=64,top-k=6,imbalance=1.5,tokens=256,seed=7");
  EXPECT_EQ(parse_routing(routing_text(s), "r").tokens, 256);
  for (const char* bad :
       {"experts=8", "experts=8,top-k=9", "experts=8,top-k=2,imbalance=0.5", "experts=8,top-k=2,gini=1",
        "experts=8,top-k=2,gini=0.2,imbalance=2", "experts=8,top-k=2,x=1", "experts=8,top-k=two",
        "experts=8,top-k=2,groups=3,group-top-k=1", "experts=8,top-k=2,groups=4",
        "experts=8,top-k=3,groups=4,group-top-k=2", "experts=8,top-k=4,groups=4,group-top-k=1"}) {
    EXPECT_THROW((void)parse_routing(bad, "--routing"), InputError) << bad;
  }
}

// Every rank sends exactly tokens x top-k rows (dropless, one copy per token and expert), whatever the skew.
TEST(Routing, RowSumsAreExactAndTheSameSeedGivesTheSameMatrix) {
  const RoutingSpec s = parse_routing("experts=16,top-k=2,imbalance=1.8,tokens=512,seed=3", "r");
  const RoutedTraffic a = route_tokens(s, 4, "r");
  for (int r = 0; r < 4; ++r) EXPECT_DOUBLE_EQ(a.rows.sent_by(r), 512.0 * 2);
  EXPECT_DOUBLE_EQ(a.rows.total(), 4 * 512.0 * 2);
  EXPECT_EQ(route_tokens(s, 4, "r").rows.cells, a.rows.cells);
  RoutingSpec other = s;
  other.seed = 4;
  EXPECT_NE(route_tokens(other, 4, "r").rows.cells, a.rows.cells);
}

// The targets are reached within 2 % (imbalance) and 0.02 (gini) with 1024 tokens a rank: above the
// sampling noise of a balanced router (about 1.03 over 8 ranks here), the bisection's steps are finer. (This
// seed's 6 most popular experts put 2 on one rank: 2 / (6 / 8) = 2.67x is its most, refused above.)
TEST(Routing, ImbalanceAndGiniAreReachedWithinTolerance) {
  for (double target : {1.25, 1.5, 2.0, 2.5}) {
    const RoutingSpec s = parse_routing(fmt::format("experts=64,top-k=6,imbalance={}", target), "r");
    const RoutedTraffic t = route_tokens(s, 8, "r");
    EXPECT_NEAR(t.imbalance, target, 0.02 * target) << target;
    double busiest = 0.0;
    for (int r = 0; r < 8; ++r) busiest = std::max(busiest, t.rows.received_by(r));
    EXPECT_NEAR(busiest / (t.rows.total() / 8), t.imbalance, 1e-12);
  }
  for (double target : {0.1, 0.3, 0.5}) {
    const RoutingSpec s = parse_routing(fmt::format("experts=32,top-k=2,gini={}", target), "r");
    EXPECT_NEAR(route_tokens(s, 4, "r").gini, target, 0.02) << target;
  }
  const RoutedTraffic balanced = route_tokens(parse_routing("experts=64,top-k=6", "r"), 8, "r");
  EXPECT_EQ(balanced.skew, 0.0);
  EXPECT_LT(balanced.imbalance, 1.05);
}

TEST(Routing, UnreachableTargetsAndUnevenExpertsAreRefused) {
  // 8 experts on 8 ranks, top 2, T tokens a rank: a rank holds one expert, which takes each of the 8 T
  // tokens at most once, and the mean rank receives 8 T x 2 / 8 = 2 T rows: 4x the mean at most.
  EXPECT_THROW((void)route_tokens(parse_routing("experts=8,top-k=2,imbalance=5", "r"), 8, "r"), InputError);
  EXPECT_THROW((void)route_tokens(parse_routing("experts=12,top-k=2", "r"), 8, "r"), InputError);
  EXPECT_THROW((void)route_tokens(parse_routing("experts=256,top-k=8,tokens=1048576", "r"), 8, "r"), InputError);
}

// Node-limited routing, 2 groups of 8 experts on 4 ranks (ranks 0-1 hold group 0, ranks 2-3 group 1), each
// token in one group: with one token a rank, its 4 copies go to the 2 ranks of one group only. Without the
// limit, some seed sends a token's copies to both groups.
TEST(Routing, GroupLimitedRoutingKeepsEachTokenInItsGroups) {
  bool split_without_groups = false;
  for (int seed = 1; seed <= 20; ++seed) {
    const auto spec = [&](const char* groups) {
      return parse_routing(fmt::format("experts=16,top-k=4,tokens=1,seed={}{}", seed, groups), "r");
    };
    const RoutedTraffic t = route_tokens(spec(",groups=2,group-top-k=1"), 4, "r");
    const RoutedTraffic free = route_tokens(spec(""), 4, "r");
    for (int r = 0; r < 4; ++r) {
      EXPECT_DOUBLE_EQ(t.rows.sent_by(r), 4.0);
      const double first = t.rows.at(r, 0) + t.rows.at(r, 1);
      EXPECT_TRUE(first == 0.0 || first == 4.0) << "seed " << seed << " rank " << r;
      const double free_first = free.rows.at(r, 0) + free.rows.at(r, 1);
      split_without_groups = split_without_groups || (free_first != 0.0 && free_first != 4.0);
    }
  }
  EXPECT_TRUE(split_without_groups);
  EXPECT_DOUBLE_EQ(gini_coefficient({1, 1, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(gini_coefficient({0, 0, 0, 4}), 0.75);  // (n - 1) / n
}

}  // namespace
}  // namespace commscale
