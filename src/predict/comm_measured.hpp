#pragma once

// The terms of the collective model that come from this project's own measurements, not from NCCL's
// tuning model (nccl_tables.hpp): each with the files it was derived from and how. All were measured on
// one machine, 2 x H200 SXM joined by NV18, NCCL 2.28.3 (results/h200x2-2026-12-01/compare); they are
// applied to every cluster of their path class, which no other measurement here checks yet.
// launch/collective_latency.py derives them again from those files (results/collective-latency/README.md,
// "The measured terms"), so that a new sweep can replace them.
//
// Also measured, and kept where they are used: the host-staged path's bandwidth, kHostStagedEfficiency
// (group_links.hpp), and the socket transport's per-step latency, topologies/links.json "socket".

namespace commscale::predict {

// NCCL's Simple protocol over NVLink does not move data at NCCL's per-link figure, and reaches its
// steady rate only at GiB sizes: measured all_reduce on NV18 (cs- and nt-nvlink-all_reduce-*.txt, the
// median of both tools' repetitions, 2 MiB - 4 GiB) is, after NCCL's Simple latency (15.2 us for two
// ranks), bytes / (0.924 x 370.8 GB/s) + 0.00431 us x sqrt(bytes), by relative least squares over the
// 12 sizes (within -5 .. +4 % of every one). bytes is the traffic per link, the bus bytes (size x
// bench's busbw factor), so that a group of n ranks moves what the measured pair moved for the same
// link traffic. The square-root term is empirical (NCCL 2.28's ring Simple keeps a fixed chunk size,
// whose pipeline would add a constant); held against the other four collectives of the same sweep,
// which were not fitted: results/collective-latency/README.md.
inline constexpr double kNvlinkSimpleEfficiency = 0.924;
inline constexpr double kNvlinkSimpleRampUsPerSqrtByte = 0.00431;

// A send/receive pays hop latencies that NCCL's tuning model does not give (it has no p2p entry). At
// 8 B - 4 KiB (LL), sendrecv and alltoall of two ranks over sockets took NCCL's ring LL base (6.6 us)
// plus 2.10 and 1.95 socket steps (small-{cs,nt}-sockets-{sendrecv,alltoall}-1.txt, step 10.29 us from
// the ring collectives of the same files); host-staged 1.45 and 1.54 steps (step 2.09 us); over NVLink
// no more than the base. A round trip, the receiver's readiness and then the data: two hops for LL.
// With Simple (sizes above the LL threshold) one hop fits better: NVLink sendrecv 1 - 4 MiB and
// host-staged 64 KiB - 2 MiB lie within 15 % of one hop and 20-30 % under two.
inline constexpr int kP2pLLHops = 2;
inline constexpr int kP2pSimpleHops = 1;

}  // namespace commscale::predict
