// The step breakdown by hand on tiny timelines, and the timeline's checks and JSON form.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "program/breakdown.hpp"
#include "program/comm_rates.hpp"
#include "program/timeline.hpp"

namespace commscale {
namespace {

TEST(Intervals, UnionAndUncoveredByHand) {
  // [0,2) u [1,3) u [5,6) = [0,3) u [5,6): length 4.
  EXPECT_DOUBLE_EQ(union_length({{0, 2}, {1, 3}, {5, 6}}), 4.0);
  EXPECT_DOUBLE_EQ(union_length({}), 0.0);
  // [0,10) minus [2,3) u [5,7) u [9,12): 10 - (1 + 2 + 1) = 6.
  EXPECT_DOUBLE_EQ(uncovered_length({{0, 10}}, {{2, 3}, {5, 7}, {9, 12}}), 6.0);
  // Overlapping pieces of a and b are each counted once: [0,4) u [2,6) minus [3,5) = 6 - 2 = 4.
  EXPECT_DOUBLE_EQ(uncovered_length({{0, 4}, {2, 6}}, {{3, 5}}), 4.0);
}

// Two ranks, one tp group: rank r computes, then all-reduces, then computes again.
ProgramSet two_rank_timeline_program() {
  ProgramSet set;
  set.world_size = 2;
  std::vector<Op> ops(3);
  ops[0] = Op{0, Stream::kCompute, Phase::kForward, {}, "a", 0, 0, make_gemm(64, 64, 64, 1, DataType::kBFloat16)};
  ops[1] = Op{1, Stream::kTp, Phase::kForward, {0}, "ar", 0, 0, CollectiveOp{Collective::kAllReduce, 0, Bytes(64)}};
  ops[2] = Op{2, Stream::kCompute, Phase::kForward, {1}, "b", 0, 0, make_gemm(64, 64, 64, 1, DataType::kBFloat16)};
  set.programs.push_back(ops);
  for (int r = 0; r < 2; ++r) set.ranks.push_back(RankProgram{r, 0, {Group{GroupRole::kTp, {0, 1}}}});
  return set;
}

TEST(Breakdown, ComputeExposedCommunicationAndBubbleByHand) {
  const ProgramSet set = two_rank_timeline_program();
  Timeline t{"test", 2, 1, {}};
  // Rank 0: compute [0,4), all-reduce [4,7), compute [7,9). Rank 1: compute [0,2), all-reduce
  // [3,7) (it waited for rank 0), compute [7,10). Step window [0,10): 10.
  t.events = {{0, 0, 0, Seconds(0), Seconds(4)}, {0, 0, 1, Seconds(4), Seconds(7)}, {0, 0, 2, Seconds(7), Seconds(9)},
              {1, 0, 0, Seconds(0), Seconds(2)}, {1, 0, 1, Seconds(3), Seconds(7)}, {1, 0, 2, Seconds(7), Seconds(10)}};
  validate_timeline(set, t, "test");
  const StepBreakdown b = break_down_step(set, t, 0);
  EXPECT_DOUBLE_EQ(b.step_time.value(), 10.0);
  // The all-reduce moves data from 4, when rank 0 arrives: rank 1 waits [3,4).
  // Rank 0: compute 4 + 2 = 6, exposed [4,7) = 3, bubble 10 - 6 - 3 = 1.
  // Rank 1: compute 2 + 3 = 5, exposed [4,7) = 3, bubble 10 - 5 - 3 = 2 (idle [2,3), waiting [3,4)).
  EXPECT_DOUBLE_EQ(b.ranks[0].compute.value(), 6.0);
  EXPECT_DOUBLE_EQ(b.ranks[0].exposed_comm.value(), 3.0);
  EXPECT_DOUBLE_EQ(b.ranks[0].bubble.value(), 1.0);
  EXPECT_DOUBLE_EQ(b.ranks[1].compute.value(), 5.0);
  EXPECT_DOUBLE_EQ(b.ranks[1].exposed_comm.value(), 3.0);
  EXPECT_DOUBLE_EQ(b.ranks[1].bubble.value(), 2.0);
  EXPECT_DOUBLE_EQ(b.ranks[1].groups.at("tp").busy.value(), 3.0);
  // Means: compute 5.5, exposed 3, bubble 1.5; they add up to the step.
  EXPECT_DOUBLE_EQ(b.compute.value(), 5.5);
  EXPECT_DOUBLE_EQ(b.exposed_comm.value(), 3.0);
  EXPECT_DOUBLE_EQ(b.bubble.value(), 1.5);
  EXPECT_DOUBLE_EQ(b.groups.at("tp").exposed.value(), 3.0);
}

TEST(CommRates, TimeFromTheLastArrivalAndBenchsBusBandwidth) {
  const ProgramSet set = two_rank_timeline_program();
  Timeline t{"test", 2, 2, {}};
  // Step 0 as above: the all-reduce moves data [4,7) on both ranks: 3 s. Step 1: rank 0 reaches it at
  // 1, rank 1 at 2, both end at 3: 1 s on both. Median of {3, 3, 1, 1} (the upper middle): 3 s.
  t.events = {{0, 0, 0, Seconds(0), Seconds(4)}, {0, 0, 1, Seconds(4), Seconds(7)}, {0, 0, 2, Seconds(7), Seconds(9)},
              {1, 0, 0, Seconds(0), Seconds(2)}, {1, 0, 1, Seconds(3), Seconds(7)}, {1, 0, 2, Seconds(7), Seconds(10)},
              {0, 1, 0, Seconds(0), Seconds(1)}, {0, 1, 1, Seconds(1), Seconds(3)}, {0, 1, 2, Seconds(3), Seconds(4)},
              {1, 1, 0, Seconds(0), Seconds(2)}, {1, 1, 1, Seconds(2), Seconds(3)}, {1, 1, 2, Seconds(3), Seconds(4)}};
  validate_timeline(set, t, "test");
  const std::vector<CommRate> rates = comm_rates(set, t);
  ASSERT_EQ(rates.size(), 1u);
  const CommRate& r = rates[0];
  EXPECT_EQ(r.group, "tp");
  EXPECT_EQ(r.call, "all_reduce");
  EXPECT_EQ(r.size.count(), 64u);
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.calls, 2);  // one per rank and step
  EXPECT_DOUBLE_EQ(r.median.value(), 3.0);
  // algbw = 64 B / 3 s; all-reduce busbw = algbw * 2 (n - 1) / n = algbw for 2 ranks.
  EXPECT_DOUBLE_EQ(r.algbw.value(), 64.0 / 3.0 / 1e9);
  EXPECT_DOUBLE_EQ(r.busbw.value(), r.algbw.value());
}

TEST(Breakdown, ATransferMovesDataOnceBothSidesArrive) {
  // Two pipeline stages: rank 0 computes [0,5) then sends; rank 1 posts its receive at 0 and waits
  // for the send, which starts at 5 and ends at 6; then rank 1 computes [6,9). Step [0,9).
  ProgramSet set;
  set.world_size = 2;
  const Gemm g = make_gemm(8, 8, 8, 1, DataType::kBFloat16);
  std::vector<Op> first(2);
  first[0] = Op{0, Stream::kCompute, Phase::kForward, {}, "f", 0, 0, g};
  first[1] = Op{1, Stream::kPpSend, Phase::kForward, {0}, "send", 0, -1,
                PointToPoint{P2pDirection::kSend, 0, 1, Bytes(64), DataType::kBFloat16}};
  std::vector<Op> second(2);
  second[0] = Op{0, Stream::kPpRecv, Phase::kForward, {}, "recv", 0, -1,
                 PointToPoint{P2pDirection::kRecv, 0, 0, Bytes(64), DataType::kBFloat16}};
  second[1] = Op{1, Stream::kCompute, Phase::kForward, {0}, "f", 0, 1, g};
  set.programs = {first, second};
  set.ranks = {RankProgram{0, 0, {Group{GroupRole::kPpForward, {0, 1}}}},
               RankProgram{1, 1, {Group{GroupRole::kPpForward, {0, 1}}}}};
  Timeline t{"test", 2, 1, {}};
  t.events = {{0, 0, 0, Seconds(0), Seconds(5)}, {0, 0, 1, Seconds(5), Seconds(6)},
              {1, 0, 0, Seconds(0), Seconds(6)}, {1, 0, 1, Seconds(6), Seconds(9)}};
  const StepBreakdown b = break_down_step(set, t, 0);
  // Rank 1: the receive moves data [5,6): exposed 1; compute 3; bubble 9 - 3 - 1 = 5 (the pipeline's fill).
  EXPECT_DOUBLE_EQ(b.ranks[1].exposed_comm.value(), 1.0);
  EXPECT_DOUBLE_EQ(b.ranks[1].bubble.value(), 5.0);
  // Rank 0: compute 5, exposed 1, bubble 3 (the drain).
  EXPECT_DOUBLE_EQ(b.ranks[0].bubble.value(), 3.0);
  EXPECT_DOUBLE_EQ(b.groups.at("pp").busy.value(), 1.0);
}

TEST(Breakdown, OverlappedCommunicationIsNotExposed) {
  const ProgramSet set = two_rank_timeline_program();
  Timeline t{"test", 2, 1, {}};
  // The all-reduce [1,3) runs under compute [0,4): nothing exposed.
  for (int r = 0; r < 2; ++r) {
    t.events.push_back({r, 0, 0, Seconds(0), Seconds(4)});
    t.events.push_back({r, 0, 1, Seconds(1), Seconds(3)});
    t.events.push_back({r, 0, 2, Seconds(4), Seconds(6)});
  }
  const StepBreakdown b = break_down_step(set, t, 0);
  EXPECT_DOUBLE_EQ(b.exposed_comm.value(), 0.0);
  EXPECT_DOUBLE_EQ(b.groups.at("tp").busy.value(), 2.0);
  EXPECT_DOUBLE_EQ(b.bubble.value(), 0.0);
}

TEST(Timeline, ValidationNamesTheProblem) {
  const ProgramSet set = two_rank_timeline_program();
  Timeline t{"test", 2, 1, {}};
  for (int r = 0; r < 2; ++r) {
    for (OpId op = 0; op < 3; ++op) t.events.push_back({r, 0, op, Seconds(op), Seconds(op + 1.0)});
  }
  EXPECT_NO_THROW(validate_timeline(set, t, "t.json"));
  Timeline missing = t;
  missing.events.pop_back();
  EXPECT_THROW(validate_timeline(set, missing, "t.json"), InputError);
  Timeline backwards = t;
  std::swap(backwards.events[0].start, backwards.events[0].end);
  try {
    validate_timeline(set, backwards, "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t.json: events[0]: ends before it starts (expected end >= start)");
  }
  Timeline wrong_op = t;
  wrong_op.events[1].op = 7;
  EXPECT_THROW(validate_timeline(set, wrong_op, "t.json"), InputError);
}

TEST(Timeline, JsonRoundTrip) {
  Timeline t{"executor", 2, 1, {{1, 0, 2, Seconds(0.5), Seconds(0.75)}}};
  const nlohmann::json j = t;
  EXPECT_EQ(j["events"][0], nlohmann::json::parse("[1, 0, 2, 0.5, 0.75]"));
  const Timeline back = j.get<Timeline>();
  EXPECT_EQ(back.engine, "executor");
  EXPECT_EQ(back.events[0].op, 2u);
  EXPECT_DOUBLE_EQ(back.events[0].end.value(), 0.75);
}

TEST(Timeline, AttributionRoundTripsBesideTheEvents) {
  Timeline t{"predictor", 2, 1, {{1, 0, 2, Seconds(0.5), Seconds(0.75)}, {0, 0, 1, Seconds(0.25), Seconds(1.0)}}};
  t.attribution = {{Seconds(0.125), Seconds(0.0), Seconds(0.0), Seconds(0.0625)},
                   {Seconds(0.0), Seconds(0.25), Seconds(0.03125), Seconds(0.0)}};
  const nlohmann::json j = t;
  // The events keep their five elements; attribution is a block of its own, aligned with them.
  EXPECT_EQ(j["events"][1], nlohmann::json::parse("[0, 0, 1, 0.25, 1.0]"));
  EXPECT_EQ(j["attribution"]["version"], 1);
  EXPECT_EQ(j["attribution"]["fields"],
            nlohmann::json::parse(R"(["host_s", "peers_s", "latency_s", "interference_s"])"));
  EXPECT_EQ(j["attribution"]["events"][1], nlohmann::json::parse("[0.0, 0.25, 0.03125, 0.0]"));
  const Timeline back = j.get<Timeline>();
  ASSERT_EQ(back.attribution.size(), 2u);
  EXPECT_EQ(back.attribution[0].host.value(), 0.125);
  EXPECT_EQ(back.attribution[0].interference.value(), 0.0625);
  EXPECT_EQ(back.attribution[1].peers.value(), 0.25);
  EXPECT_EQ(back.attribution[1].latency.value(), 0.03125);
  // A timeline without attribution writes none and reads back with none (train's, and older files).
  const nlohmann::json plain = Timeline{"executor", 2, 1, {{1, 0, 2, Seconds(0.5), Seconds(0.75)}}};
  EXPECT_FALSE(plain.contains("attribution"));
  EXPECT_TRUE(plain.get<Timeline>().attribution.empty());
}

TEST(Timeline, MalformedAttributionIsRefusedWithWhatWasExpected) {
  const nlohmann::json good = nlohmann::json::parse(R"({"engine": "predictor", "world_size": 1, "steps": 1,
      "events": [[0, 0, 0, 0.0, 1.0], [0, 0, 1, 1.0, 2.0]],
      "attribution": {"version": 1, "fields": ["host_s", "peers_s", "latency_s", "interference_s"],
                      "events": [[0.5, 0, 0, 0], [0, 0.25, 0.125, 0]]}})");
  EXPECT_EQ(good.get<Timeline>().attribution.size(), 2u);
  const auto refused = [&](const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json bad = good;
    bad[nlohmann::json::json_pointer(pointer)] = value;
    try {
      (void)bad.get<Timeline>();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused("/attribution/events/1", nlohmann::json::parse("[0, 0.25, 0.125]")),
            "attribution.events[1]: is not [host_s, peers_s, latency_s, interference_s]");
  EXPECT_EQ(refused("/attribution/events/0/3", -0.5),
            "attribution.events[0].interference_s: -0.5 is not a time (expected 0 or more seconds from the step's "
            "start)");
  EXPECT_EQ(refused("/attribution/events", nlohmann::json::parse("[[0, 0, 0, 0]]")),
            "attribution.events: has 1 entries for 2 events (expected one [host_s, peers_s, latency_s, "
            "interference_s] per event, in the order of events)");
  EXPECT_EQ(refused("/attribution/version", 2),
            "attribution.version: 2 (expected 1, the attribution this build reads)");
  EXPECT_EQ(refused("/attribution/fields/0", "wait_s"),
            "attribution.fields: [\"wait_s\",\"peers_s\",\"latency_s\",\"interference_s\"] (expected "
            "[\"host_s\",\"peers_s\",\"latency_s\",\"interference_s\"])");
  EXPECT_EQ(refused("/attribution/extra", 1), "attribution.extra: is not a key of attribution (expected version, "
                                              "fields, events)");
  EXPECT_NE(refused("/attribution", "none").find("attribution: is not an object"), std::string::npos);
  // Built in code rather than read: validate_timeline holds attribution to one entry per event too.
  const ProgramSet set = two_rank_timeline_program();
  Timeline t{"predictor", 2, 1, {}};
  for (int r = 0; r < 2; ++r) {
    for (OpId op = 0; op < 3; ++op) t.events.push_back({r, 0, op, Seconds(op), Seconds(op + 1.0)});
  }
  t.attribution.resize(5);
  EXPECT_THROW(validate_timeline(set, t, "t.json"), InputError);
  t.attribution.resize(6);
  EXPECT_NO_THROW(validate_timeline(set, t, "t.json"));
}

}  // namespace
}  // namespace commscale
