#pragma once

// What `commscale p2p` measured: plain records handed to the reporters (text matrices, JSON, CSV).
// The measurement code never prints. Method: src/bench/P2P.md.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/p2p_options.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "core/run_context.hpp"

namespace commscale {

// One bandwidth measurement. A sample is one batch of copies timed as a whole; samples_us holds the
// time of one copy in it (of one copy each way, for a bidirectional measurement).
struct BandwidthResult {
  bool measured = false;  // false where the test does not apply (an SM copy without P2P) or was not asked for
  Bytes bytes_per_copy;   // moved by one copy, both directions together when bidirectional
  std::vector<double> samples_us;
  Summary stats;                  // of samples_us
  GBps bw;                        // bytes_per_copy / median time
  std::optional<GBps> line_rate;  // of the path, both directions together when bidirectional
  std::uint64_t wrong_bytes = 0;  // over every verified batch, warm-up included

  [[nodiscard]] std::optional<double> fraction_of_line_rate() const noexcept {
    if (!measured || !line_rate || line_rate->value() <= 0.0) return std::nullopt;
    return bw / *line_rate;
  }
  // Bandwidth at the fastest and slowest sample.
  [[nodiscard]] GBps bw_at(double time_us) const noexcept { return bandwidth(bytes_per_copy, microseconds(time_us)); }
};

// Dependent 8-byte loads timed one chain at a time.
struct LatencyResult {
  bool measured = false;
  std::vector<double> samples_ns;  // per load, one per sample
  Summary stats;                   // of samples_ns
  std::uint64_t wrong_bytes = 0;   // 8 for every chase that ended on the wrong node
};

enum class PeerPath : std::uint8_t {
  kP2p,     // one GPU reads or writes the other's memory (NVLink or PCIe)
  kStaged,  // device -> pinned host memory -> device, as NCCL's SHM transport moves it
};

// GPU `src` to GPU `dst` (indices into P2pReport::gpus). Bidirectional results are the same for
// (a, b) and (b, a): both directions run together.
struct PairResult {
  int src = 0;
  int dst = 0;
  PeerPath path = PeerPath::kP2p;
  std::string why_staged;  // empty on the P2P path
  std::string link;        // "NV18", "PCIe gen5 x16 P2P", "staged over PCIe gen5 x16"
  BandwidthResult ce_uni;
  BandwidthResult ce_bi;
  BandwidthResult sm_uni;
  BandwidthResult sm_bi;
  LatencyResult latency;  // `dst` loading from `src`'s memory
};

// Pinned host memory and one GPU.
struct HostResult {
  int gpu = 0;
  std::string link;  // "PCIe gen5 x16"
  BandwidthResult h2d;
  BandwidthResult d2h;
  BandwidthResult bidir;
  LatencyResult latency;  // the GPU loading from pinned host memory
};

struct P2pGpu {
  int device = 0;
  std::string name;
  std::string pci_bus_id;
};

struct P2pReport {
  RunContext context;
  P2pOptions options;
  std::vector<P2pGpu> gpus;
  std::string timing;              // how samples were taken, one sentence
  std::vector<std::string> notes;  // what was not measured and why, where line rates come from
  std::vector<PairResult> pairs;   // every ordered pair of distinct GPUs
  std::vector<HostResult> hosts;   // one per GPU

  [[nodiscard]] std::uint64_t wrong_bytes() const noexcept;
  [[nodiscard]] bool passed() const noexcept { return wrong_bytes() == 0; }
};

inline std::uint64_t P2pReport::wrong_bytes() const noexcept {
  std::uint64_t wrong = 0;
  for (const PairResult& p : pairs) {
    wrong += p.ce_uni.wrong_bytes + p.sm_uni.wrong_bytes + p.latency.wrong_bytes;
    if (p.src < p.dst) wrong += p.ce_bi.wrong_bytes + p.sm_bi.wrong_bytes;  // counted once per pair
  }
  for (const HostResult& h : hosts)
    wrong += h.h2d.wrong_bytes + h.d2h.wrong_bytes + h.bidir.wrong_bytes + h.latency.wrong_bytes;
  return wrong;
}

}  // namespace commscale
