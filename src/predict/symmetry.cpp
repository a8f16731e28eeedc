// Colour refinement of the ranks of a program set into classes that run identically (simulator.hpp).

#include <map>

#include "predict/simulator.hpp"

namespace commscale::predict {
namespace {

// Dense ids for distinct keys.
class Interner {
 public:
  int id(const std::vector<std::uint64_t>& key) {
    return ids_.try_emplace(key, static_cast<int>(ids_.size())).first->second;
  }
  [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }

 private:
  std::map<std::vector<std::uint64_t>, int> ids_;
};

}  // namespace

std::vector<int> symmetry_classes(const ProgramSet& set, const OpCosts& costs) {
  const auto n = static_cast<std::size_t>(set.world_size);
  std::vector<int> colour(n);
  std::size_t classes = 0;
  {
    Interner interner;
    for (std::size_t r = 0; r < n; ++r) {
      const auto program = static_cast<std::uint64_t>(set.ranks[r].program);
      colour[r] = interner.id({program, costs.signature(static_cast<int>(r))});
    }
    classes = interner.size();
  }
  // Each round splits classes whose members see different classes in some group; the partition only
  // gets finer, so it is stable once a round adds no class.
  while (true) {
    Interner interner;
    std::vector<int> next(n);
    std::vector<std::uint64_t> key;
    for (std::size_t r = 0; r < n; ++r) {
      key.assign(1, static_cast<std::uint64_t>(colour[r]));
      for (const Group& g : set.ranks[r].groups) {
        key.push_back(g.members.size());
        for (const int m : g.members) key.push_back(static_cast<std::uint64_t>(colour[static_cast<std::size_t>(m)]));
      }
      next[r] = interner.id(key);
    }
    colour = std::move(next);
    if (interner.size() == classes) return colour;
    classes = interner.size();
  }
}

}  // namespace commscale::predict
