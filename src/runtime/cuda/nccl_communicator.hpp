#pragma once

// The GPU backend's data path: an NCCL communicator and the stream its collectives run on.

#include <memory>

#include "runtime/backend.hpp"
#include "runtime/cuda/cuda_queue.hpp"
#include "runtime/mpi.hpp"

namespace commscale {

class NcclCommunicator final : public Communicator {
 public:
  // Takes a communicator whose non-blocking initialisation (or split) has started, and waits for it
  // within `timeout` (0: none). `members` is an MPI communicator over the same ranks in the same order:
  // it names them in timeout messages and makes the splits' mirrors.
  NcclCommunicator(ncclComm_t comm, MpiComm members, Seconds timeout);

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] Queue& queue() noexcept override { return queue_; }
  void start(const CollectiveCall& call) override;
  [[nodiscard]] bool in_place_defined(Collective c) const noexcept override { return traits(c).nccl_in_place; }
  [[nodiscard]] std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  NcclComm comm_;
  MpiComm members_;
  std::shared_ptr<GroupCalls> calls_;
  Seconds timeout_;
  CudaQueue queue_;
  int rank_ = 0;
  int size_ = 1;
  int library_version_ = 0;
};

[[nodiscard]] ncclDataType_t nccl_type(DataType type) noexcept;
[[nodiscard]] ncclRedOp_t nccl_op(ReduceOp op) noexcept;

// Enqueues one collective on `stream` (sendrecv: the ring exchange of `bench`). `rank` and `size` are
// the caller's place in `comm`; `library_version` is ncclGetVersion's (for version shims).
void launch_nccl_collective(const CollectiveCall& call, ncclComm_t comm, cudaStream_t stream, int rank, int size,
                            int library_version);

}  // namespace commscale
