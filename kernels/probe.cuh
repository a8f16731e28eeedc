#pragma once

// Kernels of `calibrate --measure host,interference` (src/bench/calibrate_probes.cpp):
//  - a timed spin (one thread) that keeps a stream busy while the host queues calls behind it, so the
//    host's time per call is measured without the GPU ever waiting for it;
//  - the shortest kernel there is, whose back-to-back period is the device's kernel floor;
//  - the interference probe: `blocks` persistent blocks, one per SM, that either stream memory (a
//    read + write copy through a buffer larger than L2) or only hold their SMs, until told to stop;
//    and the two one-thread markers a compute stream runs around the work it times beside the probe.
//    The begin marker waits until every probe block is running, so the overlap is certain, then
//    notes the time and the bytes the probe has moved; the end marker notes them again and stops the
//    probe. The probe's rate during the overlap is the bytes between the markers over the time
//    between them.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace commscale::kernels {

inline constexpr int kMaxProbeBlocks = 256;

// Shared between the probe, the markers and the host (device memory; zero it before each run).
struct ProbeState {
  unsigned int started;    // probe blocks running
  unsigned int stop;       // set by the end marker
  unsigned int timed_out;  // the begin marker gave up waiting for the probe's blocks
  unsigned int expired;    // a probe block reached its time limit before the end marker stopped it
  unsigned long long begin_ns;
  unsigned long long end_ns;
  unsigned long long begin_bytes;  // bytes the probe had moved at each marker (all blocks)
  unsigned long long end_bytes;
  unsigned long long bytes[kMaxProbeBlocks];  // bytes each block has moved so far
};

// One thread spins for `ns` nanoseconds of the global timer.
void launch_timed_spin(std::uint64_t ns, cudaStream_t stream);
// One thread, no work.
void launch_empty(cudaStream_t stream);

// Allows the probe, on the current device, more than half of an SM's shared memory (228 KiB on Hopper:
// 115 KiB), so that no second probe block, nor a cuBLAS GEMM tile, fits beside one on its SM; sets
// *shared_bytes to what launch_probe must be given.
cudaError_t prepare_probe(int* shared_bytes);
// `blocks` (1..kMaxProbeBlocks) blocks of 1024 threads holding `shared_bytes` each. With
// `stream_memory` each copies its share of `buffer` (read half, write half, 1 MiB per round, round and
// round) and counts the bytes; otherwise it sleeps between looks at the stop flag. Every block returns
// when `state->stop` is set, or after `max_ns` (then it sets expired).
void launch_probe(ProbeState* state, int blocks, void* buffer, std::uint64_t buffer_bytes, bool stream_memory,
                  std::uint64_t max_ns, int shared_bytes, cudaStream_t stream);
// Waits (up to max_wait_ns, else timed_out) until `blocks` probe blocks run, then notes begin_ns and
// begin_bytes. With blocks == 0 it only notes them.
void launch_probe_begin(ProbeState* state, int blocks, std::uint64_t max_wait_ns, cudaStream_t stream);
// Notes end_ns and end_bytes, then sets stop.
void launch_probe_end(ProbeState* state, int blocks, cudaStream_t stream);

}  // namespace commscale::kernels
