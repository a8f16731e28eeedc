#pragma once

// Who sends how much to whom in an uneven all-to-all (alltoallv): an n x n matrix whose row i is what
// rank i sends to each rank j (j == i: what it keeps). Read from a file (`bench alltoallv --matrix`,
// format in src/bench/BENCH.md) or made by the routing generator (core/routing.hpp). The cells are
// relative weights or bytes; a sweep scales them so that the mean bytes a rank sends is the row's size.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/collective.hpp"
#include "core/dtype.hpp"
#include "core/units.hpp"

namespace commscale {

struct TrafficMatrix {
  int ranks = 0;
  std::vector<double> cells;  // row-major, ranks x ranks, non-negative
  std::string source;         // "file traffic.txt" or the routing it was generated from, for reports

  [[nodiscard]] double at(int from, int to) const {
    return cells[static_cast<std::size_t>(from) * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(to)];
  }
  [[nodiscard]] double sent_by(int rank) const;      // its row's sum (what it keeps included)
  [[nodiscard]] double received_by(int rank) const;  // its column's sum
  [[nodiscard]] double total() const;
};

// A uniform matrix: every rank sends every rank (itself included) the same, as alltoall does.
[[nodiscard]] TrafficMatrix uniform_traffic(int ranks);

// Reads a matrix file: whitespace-separated numbers, one row a line (as nccl-tests' alltoallv reads
// NCCL_TESTS_ALLTOALLV_MATRIX_FILE; `#` starts a comment), or JSON, either an array of rows or
// {"matrix": [[...], ...]}. Throws InputError naming `flag` and the file when it cannot be read, is not
// square, holds a negative or non-finite value, or sums to zero.
[[nodiscard]] TrafficMatrix read_traffic_matrix(const std::filesystem::path& file, const std::string& flag);

// Throws InputError naming `where` unless the matrix has `ranks` rows.
void check_matrix_ranks(const TrafficMatrix& m, int ranks, const std::string& where);

// Bytes per peer when the mean rank sends `mean_bytes` (what it keeps included): cell x n x mean / total,
// rounded down to whole 16-byte units per peer as nccl-tests aligns each peer's share (so a uniform
// matrix gives alltoall's chunks). Row-major, ranks x ranks.
[[nodiscard]] std::vector<std::uint64_t> peer_bytes(const TrafficMatrix& m, Bytes mean_bytes);

// What the ranks send and receive for one scaling of the matrix (peer_bytes), self excluded where the
// name says "moved": the busiest rank sets an alltoallv's time.
struct TrafficLoad {
  std::uint64_t max_send_bytes = 0;              // largest row sum (the send buffer, self included)
  std::uint64_t max_recv_bytes = 0;              // largest column sum (the receive buffer)
  double mean_recv_bytes = 0.0;                  // mean column sum (= mean row sum)
  [[nodiscard]] double recv_imbalance() const {  // max / mean of the receive bytes (1 when balanced)
    return mean_recv_bytes > 0 ? static_cast<double>(max_recv_bytes) / mean_recv_bytes : 1.0;
  }
};
[[nodiscard]] TrafficLoad traffic_load(const std::vector<std::uint64_t>& peer_bytes, int ranks);

// One rank's alltoallv at a requested size (the mean bytes a rank sends, as alltoall's size). The layout's
// count is the mean per-peer element count, send and receive counts are this rank's, and size and
// algbw_bytes are the busiest rank's larger buffer (what nccl-tests' alltoallv computes algbw from: it
// bounds every rank's buffers); busbw_factor is (n-1)/n. A uniform matrix gives alltoall's layout.
struct AlltoallvLayout {
  CollectiveLayout layout;
  std::vector<std::uint64_t> send_counts;  // elements to each peer
  std::vector<std::uint64_t> recv_counts;  // elements from each peer
  Bytes mean_bytes;                        // the "size" column: what the mean rank sends
  TrafficLoad load;
};
[[nodiscard]] AlltoallvLayout alltoallv_layout(const TrafficMatrix& m, Bytes size, DataType type, int rank);

}  // namespace commscale
