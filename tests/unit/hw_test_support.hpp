#pragma once

// Shared by the hardware catalog tests: the source tree's catalog and fixtures.

#include <string>

#include "hw/catalog.hpp"
#include "hw/link_graph.hpp"

namespace commscale::hw::testing {

inline const std::string kSourceDir = COMMSCALE_SOURCE_DIR;
inline const std::string kFixtures = kSourceDir + "/tests/data/hw/";

inline const Catalog& catalog() {
  static const Catalog c = Catalog::open(kSourceDir + "/topologies");
  return c;
}

inline LinkGraph graph(const std::string& cluster, int nodes = 1) {
  return LinkGraph::build(catalog().cluster(cluster, "test"), nodes);
}

}  // namespace commscale::hw::testing
