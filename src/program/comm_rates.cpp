#include "program/comm_rates.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/collective.hpp"
#include "program/arrivals.hpp"

namespace commscale {

std::vector<CommRate> comm_rates(const ProgramSet& set, const Timeline& timeline) {
  using Key = std::tuple<std::string, std::string, std::uint64_t, int>;
  std::map<Key, std::vector<double>> samples;
  std::map<Key, double> factor;
  for (int step = 0; step < timeline.steps; ++step) {
    const StepEvents events(set, timeline, step);
    const Arrivals arrivals(set, events);
    for (int r = 0; r < set.world_size; ++r) {
      const RankProgram& rp = set.ranks[static_cast<std::size_t>(r)];
      for (const Op& op : ops_of(set, r)) {
        const TimelineEvent* e = events.at(r, op.id);
        if (e == nullptr) continue;
        Key key;
        if (const auto* c = std::get_if<CollectiveOp>(&op.payload)) {
          const int n = static_cast<int>(rp.groups.at(c->group).members.size());
          key = Key{std::string(name(rp.groups.at(c->group).role)), std::string(name(c->kind)), c->bytes.count(), n};
          factor[key] = busbw_factor(c->kind, n);
        } else if (const auto* p = std::get_if<PointToPoint>(&op.payload)) {
          key = Key{std::string(name(rp.groups.at(p->group).role)), "send_recv", p->bytes.count(), 2};
          factor[key] = 1.0;
        } else {
          continue;
        }
        samples[key].push_back(e->end.value() - arrivals.data_start(r, op.id, e->start.value()));
      }
    }
  }
  std::vector<CommRate> rates;
  for (auto& [key, times] : samples) {
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    CommRate rate;
    std::tie(rate.group, rate.call, std::ignore, rate.ranks) = key;
    rate.size = Bytes(std::get<2>(key));
    rate.calls = static_cast<int>(times.size()) / std::max(1, timeline.steps);
    rate.median = Seconds(times[times.size() / 2]);
    if (rate.median.value() > 0) {
      rate.algbw = bandwidth(rate.size, rate.median);
      rate.busbw = GBps(rate.algbw.value() * factor[key]);
    }
    rates.push_back(rate);
  }
  return rates;
}

void to_json(nlohmann::json& out, const CommRate& r) {
  out = {{"group", r.group},          {"call", r.call},
         {"size_bytes", r.size.count()}, {"ranks", r.ranks},
         {"calls_per_step", r.calls},  {"median_us", r.median.value() * 1e6},
         {"algbw_GBps", r.algbw.value()}, {"busbw_GBps", r.busbw.value()}};
}

}  // namespace commscale
