#pragma once

// MPI as the control plane: bootstrap, node discovery, barriers, and gathering results to rank 0.
// Data never moves through here on the GPU backend.

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "runtime/process.hpp"

namespace commscale {

[[nodiscard]] std::string mpi_error_string(int code);

#define MPI_CHECK(expr)                                                                                      \
  do {                                                                                                       \
    const int mpi_check_rc_ = (expr);                                                                        \
    if (mpi_check_rc_ != MPI_SUCCESS)                                                                        \
      ::commscale::throw_library_error("MPI", #expr, ::commscale::mpi_error_string(mpi_check_rc_), __FILE__, \
                                       __LINE__);                                                            \
  } while (0)

// MPI_Init_thread on construction, MPI_Finalize on destruction. Errors on MPI_COMM_WORLD return
// codes (checked by MPI_CHECK) instead of aborting silently.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  [[nodiscard]] static bool active() noexcept;
  // Ends every rank of the job with `code`. Safe to call from an error handler on any one rank.
  [[noreturn]] static void abort(ExitCode code) noexcept;
};

// A communicator of the control plane. Owns (and frees) communicators it creates by splitting.
class MpiComm {
 public:
  static MpiComm world();
  MpiComm(MpiComm&& other) noexcept;
  MpiComm& operator=(MpiComm&& other) noexcept;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;
  ~MpiComm();

  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }

  [[nodiscard]] MpiComm split(int color, int key) const;
  [[nodiscard]] MpiComm split_shared_memory() const;  // the ranks on this node
  void barrier() const;

  // Each rank's values, concatenated in rank order, on `root` (empty elsewhere). Every rank passes
  // the same number of values.
  [[nodiscard]] std::vector<double> gather(std::span<const double> values, int root) const;
  // Every rank's string, in rank order, on every rank.
  [[nodiscard]] std::vector<std::string> allgather(const std::string& value) const;
  [[nodiscard]] std::vector<int> allgather(int value) const;
  [[nodiscard]] std::uint64_t sum(std::uint64_t value) const;
  [[nodiscard]] int max(int value) const;
  [[nodiscard]] int min(int value) const;
  [[nodiscard]] double broadcast(double value, int root) const;
  // This communicator's ranks as ranks of MPI_COMM_WORLD, in its order.
  [[nodiscard]] std::vector<int> world_ranks() const;

 private:
  [[nodiscard]] int allreduce_int(int value, MPI_Op op) const;
  MpiComm(MPI_Comm comm, bool owned);
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
  int rank_ = 0;
  int size_ = 1;
};

// For a problem every rank detected from the same data: rank 0 throws `error` (and prints it), the
// others throw PeerFailure and leave the report to rank 0.
[[noreturn]] void fail_on_all_ranks(const MpiComm& world, const InputError& error);

// Where this rank sits: its host, its index among the ranks of that host, and the node count.
struct NodeInfo {
  std::string host;
  int local_rank = 0;
  int local_size = 1;
  int node_index = 0;
  int node_count = 1;
  std::string local_rank_source;  // OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID or MPI_COMM_TYPE_SHARED
};

// The local rank comes from OMPI_COMM_WORLD_LOCAL_RANK, then SLURM_LOCALID, and is checked against
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the ranks of one node must hold 0..n-1 exactly once.
// Collective over `world`.
[[nodiscard]] NodeInfo discover_node(const MpiComm& world);

}  // namespace commscale
