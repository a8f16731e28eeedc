#pragma once

// The CPU backend's data path: MPI non-blocking collectives on host memory, with the semantics of
// the NCCL calls they stand in for (in place where NCCL is in place, averages divided afterwards).

#include <memory>
#include <vector>

#include "runtime/backend.hpp"
#include "runtime/host_queue.hpp"
#include "runtime/mpi.hpp"
#include "runtime/mpi_types.hpp"

namespace commscale {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MpiComm comm, std::shared_ptr<const MpiTypes> types);

  [[nodiscard]] int rank() const noexcept override { return comm_.rank(); }
  [[nodiscard]] int size() const noexcept override { return comm_.size(); }
  [[nodiscard]] Queue& queue() noexcept override { return queue_; }
  void start(const CollectiveCall& call) override;
  // MPI_IN_PLACE and a staged send copy make every in-place form well defined.
  [[nodiscard]] bool in_place_defined(Collective) const noexcept override { return true; }
  [[nodiscard]] std::unique_ptr<Communicator> split(int color, int key) override;

  // The requests of a started call, and what to run once they complete.
  struct Started {
    std::vector<MPI_Request> requests = std::vector<MPI_Request>(1, MPI_REQUEST_NULL);
    std::function<void()> then;
    std::uint64_t call = 0;  // a collective's number on this group (control_plane.hpp); 0 for transfers
  };
  // Starts a call without queueing it: the caller completes the requests (the CPU step engine, which
  // runs several streams of operations at once).
  [[nodiscard]] Started begin(const CollectiveCall& call);
  // The collectives started on this group (shared by every communicator over the same world ranks).
  [[nodiscard]] const GroupCalls& calls() const noexcept { return *calls_; }
  // One direction of a point-to-point transfer, to or from `peer` (a rank of this communicator).
  [[nodiscard]] Started begin_send(const std::byte* data, std::uint64_t count, DataType type, int peer, int tag);
  [[nodiscard]] Started begin_recv(std::byte* data, std::uint64_t count, DataType type, int peer, int tag);

 private:
  struct Call;
  [[nodiscard]] Started start_reduction(const Call& call) const;  // all_reduce, reduce, reduce_scatter
  [[nodiscard]] Started start_movement(const Call& call) const;   // all_gather, broadcast, alltoall, sendrecv

  // Runs after the requests complete: the division of an average over `count` elements at `data`.
  std::function<void()> average_step(const CollectiveCall& call, std::byte* data, std::uint64_t count) const;

  MpiComm comm_;
  std::shared_ptr<const MpiTypes> types_;
  std::shared_ptr<GroupCalls> calls_;
  HostQueue queue_;
};

}  // namespace commscale
