#pragma once

// How far below the link graph's network figure NCCL's collectives run between nodes, by message size.
//
// Peak: the link graph already prices a rail at min(NCCL's PCIe figure, the NIC's rate): 24 GB/s per
// HDR NIC of an HGX A100 (PCIe gen4 24 < 25) and 48 GB/s per NDR NIC of an HGX H100 (gen5 48 < 50),
// which is NCCL's maintainers' rule of thumb, ~24 GB/s per 200 Gb/s NIC (S, NVIDIA/nccl issues), and
// NVIDIA's 46-48 GB/s per NDR NIC (S, NVIDIA's networking guidance). No further peak factor is applied.
//
// Size ramp: NCCL hands each chunk it sends between nodes to the network proxy, which costs the
// network's post overhead (tuning.cc getNetOverhead: 1 us, x 3 with Simple; nccl_tables.hpp) that
// the wire does not hide while a node's share of the message is small. A node moves about bytes / N
// of an N-node collective over its rails at rate R (the group's bus bandwidth between nodes), so
//   efficiency = (bytes / N) / (bytes / N + overhead x R),
// the fraction of the rate reached: half at bytes / N = overhead x R (576 KB for Simple at 192 GB/s,
// 8 HDR rails). Tag D (NCCL's constant times the link graph's rate); its form, one overhead per node
// share, is this model's assumption (U): published multi-node nccl-tests curves (~180-190 GB/s per 8 x
// HDR node at 1-8 GiB, 2-64 nodes, from memory, U) are what a cluster `bench` should check it against.
// NCCL's own estimate, which picks the algorithm, does not have this term.

#include "core/units.hpp"
#include "predict/nccl_tables.hpp"

namespace commscale::predict {

[[nodiscard]] inline double network_size_efficiency(Bytes bytes, int nodes, NcclProto p, double rail_GBps) {
  if (nodes <= 1) return 1.0;
  const double per_node = static_cast<double>(bytes.count()) / nodes;
  const double half_bytes = net_overhead_us(p) * rail_GBps * 1e3;  // us x GB/s = 1e3 bytes
  return per_node / (per_node + half_bytes);
}

}  // namespace commscale::predict
