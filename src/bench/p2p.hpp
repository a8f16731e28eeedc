#pragma once

// `commscale p2p`: GPU x GPU copy bandwidth (copy engine and SM copies, one way and both ways) and
// load latency, and host <-> GPU bandwidth and latency per GPU, from one process that drives every
// GPU. Every copy is checked. Method: src/bench/P2P.md.

#include "bench/p2p_result.hpp"
#include "hw/machine.hpp"

namespace commscale {

// Measures what `options` asks for on machine.gpus (at least one). GPU pairs without peer access
// (or all pairs, with options.no_p2p) are measured over the staged path and say why. Returns the
// results without line rates (report/p2p_line_rate.hpp adds them) and with `context` empty. Throws
// RuntimeFailure on a CUDA failure, and in a build without CUDA.
[[nodiscard]] P2pReport run_p2p(const P2pOptions& options, const MachineDiscovery& machine);

}  // namespace commscale
