#include "program/timeline.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/printable.hpp"

namespace commscale {

void to_json(nlohmann::json& out, const Timeline& t) {
  nlohmann::json events = nlohmann::json::array();
  for (const TimelineEvent& e : t.events) {
    events.push_back(nlohmann::json::array({e.rank, e.step, e.op, e.start.value(), e.end.value()}));
  }
  out = {{"engine", t.engine}, {"world_size", t.world_size}, {"steps", t.steps}, {"events", std::move(events)}};
}

void from_json(const nlohmann::json& in, Timeline& t) {
  t.engine = printable(in.at("engine").get<std::string>());
  t.world_size = in.at("world_size").get<int>();
  t.steps = in.at("steps").get<int>();
  t.events.clear();
  for (const nlohmann::json& e : in.at("events")) {
    t.events.push_back(TimelineEvent{e.at(0).get<int>(), e.at(1).get<int>(), e.at(2).get<OpId>(),
                                     Seconds(e.at(3).get<double>()), Seconds(e.at(4).get<double>())});
  }
}

void validate_timeline(const ProgramSet& set, const Timeline& t, const std::string& where) {
  if (t.world_size != set.world_size) {
    throw InputError(where + ": world_size", fmt::format("{} ranks", t.world_size),
                     fmt::format("the program's {} ranks", set.world_size));
  }
  if (t.steps < 1) throw InputError(where + ": steps", fmt::format("{}", t.steps), "at least 1");
  // seen[rank][op] counts the steps an op appears in.
  std::vector<std::vector<int>> seen(static_cast<std::size_t>(set.world_size));
  for (int r = 0; r < set.world_size; ++r) seen[static_cast<std::size_t>(r)].assign(ops_of(set, r).size(), 0);
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    const TimelineEvent& e = t.events[i];
    const std::string at = fmt::format("{}: events[{}]", where, i);
    if (e.rank < 0 || e.rank >= set.world_size) throw InputError(at, fmt::format("rank {}", e.rank), "a rank of the program");
    if (e.step < 0 || e.step >= t.steps) throw InputError(at, fmt::format("step {}", e.step), "a step below steps");
    auto& ops = seen[static_cast<std::size_t>(e.rank)];
    if (e.op >= ops.size()) throw InputError(at, fmt::format("op {}", e.op), "an op of the rank's program");
    if (!(e.end >= e.start)) throw InputError(at, "ends before it starts", "end >= start");
    ++ops[e.op];
  }
  for (int r = 0; r < set.world_size; ++r) {
    const auto& ops = seen[static_cast<std::size_t>(r)];
    for (std::size_t op = 0; op < ops.size(); ++op) {
      if (ops[op] != t.steps) {
        throw InputError(where, fmt::format("rank {} op {} ({}) appears in {} of {} steps", r, op,
                                            ops_of(set, r)[op].name, ops[op], t.steps),
                         "every op once per step");
      }
    }
  }
}

}  // namespace commscale
