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
  if (t.attribution.empty()) return;
  nlohmann::json parts = nlohmann::json::array();
  for (const EventAttribution& a : t.attribution) {
    parts.push_back(
        nlohmann::json::array({a.host.value(), a.peers.value(), a.latency.value(), a.interference.value()}));
  }
  out["attribution"] = {{"version", kAttributionVersion},
                        {"fields", nlohmann::json::array({"host_s", "peers_s", "latency_s", "interference_s"})},
                        {"events", std::move(parts)}};
}

namespace {

// nlohmann's get<int>() truncates 0.5 to 0 and wraps -1 into an unsigned op id: check first.
int whole(const nlohmann::json& value, const std::string& where, long long max) {
  if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > max) {
    throw InputError(where, fmt::format("{} is not a whole number from 0", value.dump()), fmt::format("0 to {}", max));
  }
  return static_cast<int>(value.get<long long>());
}

// Seconds from the step's start: not negative (JSON has no NaN or infinity).
Seconds time_of(const nlohmann::json& value, const std::string& where) {
  if (!value.is_number() || value.get<double>() < 0) {
    throw InputError(where, fmt::format("{} is not a time", value.dump()), "0 or more seconds from the step's start");
  }
  return Seconds(value.get<double>());
}

constexpr std::string_view kAttributionShape =
    "{\"version\": 1, \"fields\": [\"host_s\", \"peers_s\", \"latency_s\", \"interference_s\"], \"events\": "
    "[[4 times], ...] one per event}";

// The optional "attribution" of a timeline whose `events` have been read: its shape exactly, and one
// entry of four times per event.
std::vector<EventAttribution> read_attribution(const nlohmann::json& in, std::size_t events) {
  if (!in.is_object()) throw InputError("attribution", "is not an object", kAttributionShape);
  for (const auto& [key, value] : in.items()) {
    if (key != "version" && key != "fields" && key != "events") {
      throw InputError("attribution." + printable(key), "is not a key of attribution", "version, fields, events");
    }
  }
  if (!in.contains("version") || in.at("version") != kAttributionVersion) {
    throw InputError("attribution.version", in.contains("version") ? in.at("version").dump() : "missing",
                     "1, the attribution this build reads");
  }
  const nlohmann::json fields = nlohmann::json::array({"host_s", "peers_s", "latency_s", "interference_s"});
  if (!in.contains("fields") || in.at("fields") != fields) {
    throw InputError("attribution.fields", in.contains("fields") ? in.at("fields").dump() : "missing", fields.dump());
  }
  if (!in.contains("events") || !in.at("events").is_array()) {
    throw InputError("attribution.events", "is not an array", kAttributionShape);
  }
  const nlohmann::json& parts = in.at("events");
  if (parts.size() != events) {
    throw InputError("attribution.events", fmt::format("has {} entries for {} events", parts.size(), events),
                     "one [host_s, peers_s, latency_s, interference_s] per event, in the order of events");
  }
  std::vector<EventAttribution> out;
  out.reserve(events);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const nlohmann::json& e = parts[i];
    const std::string at = fmt::format("attribution.events[{}]", i);
    if (!e.is_array() || e.size() != 4) throw InputError(at, "is not [host_s, peers_s, latency_s, interference_s]");
    out.push_back({time_of(e[0], at + ".host_s"), time_of(e[1], at + ".peers_s"), time_of(e[2], at + ".latency_s"),
                   time_of(e[3], at + ".interference_s")});
  }
  return out;
}

}  // namespace

// Checks each event's fields (whole numbers, times of 0 or more) and throws InputError naming the
// event; nlohmann's exceptions for missing keys.
void from_json(const nlohmann::json& in, Timeline& t) {
  t.engine = printable(in.at("engine").get<std::string>());
  t.world_size = in.at("world_size").get<int>();
  t.steps = in.at("steps").get<int>();
  t.events.clear();
  const nlohmann::json& events = in.at("events");
  if (!events.is_array()) throw InputError("events", "is not an array", "[[rank, step, op, start_s, end_s], ...]");
  for (std::size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[i];
    const std::string at = fmt::format("events[{}]", i);
    if (!e.is_array() || e.size() != 5) throw InputError(at, "is not [rank, step, op, start_s, end_s]");
    constexpr long long kIntMax = 2147483647;
    t.events.push_back(TimelineEvent{whole(e[0], at + ".rank", kIntMax), whole(e[1], at + ".step", kIntMax),
                                     static_cast<OpId>(whole(e[2], at + ".op", kIntMax)), time_of(e[3], at + ".start"),
                                     time_of(e[4], at + ".end")});
  }
  t.attribution.clear();
  if (in.contains("attribution")) t.attribution = read_attribution(in.at("attribution"), t.events.size());
}

void validate_timeline(const ProgramSet& set, const Timeline& t, const std::string& where) {
  if (t.world_size != set.world_size) {
    throw InputError(where + ": world_size", fmt::format("{} ranks", t.world_size),
                     fmt::format("the program's {} ranks", set.world_size));
  }
  if (t.steps < 1) throw InputError(where + ": steps", fmt::format("{}", t.steps), "at least 1");
  if (!t.attribution.empty() && t.attribution.size() != t.events.size()) {
    throw InputError(where + ": attribution",
                     fmt::format("{} entries for {} events", t.attribution.size(), t.events.size()), "one per event");
  }
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
