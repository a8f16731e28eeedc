#pragma once

// What `commscale p2p` was asked to do. Plain data, filled by the command line and passed down as
// `const P2pOptions&`. Method: src/bench/P2P.md.

#include <string>
#include <vector>

#include "core/units.hpp"

namespace commscale {

struct P2pOptions {
  std::vector<int> devices;      // CUDA devices; empty: every visible GPU
  Bytes size{512 * kMiB};        // bytes per bandwidth copy
  int copies = 8;                // copies queued behind the spin kernel per sample
  int iters = 10;                // timed samples per measurement
  int warmup = 2;                // untimed batches before them
  int latency_accesses = 20000;  // dependent loads per latency sample
  bool copy_engine = true;       // --tests ce: cudaMemcpyPeerAsync / cudaMemcpyAsync
  bool sm = true;                // --tests sm: a copy kernel reading the peer's memory
  bool latency = true;           // --tests latency: pointer chase over the peer's (or the host's) memory
  bool host = true;              // --tests host: host <-> GPU copies
  bool no_p2p = false;           // measure every GPU pair over the staged path, as if P2P were unavailable
  bool inject_corruption = false;  // testing: overwrite each measurement's first copy before it is checked
  std::string json_path;
  std::string csv_path;
};

}  // namespace commscale
