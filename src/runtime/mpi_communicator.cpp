#include "runtime/mpi_communicator.hpp"

#include <climits>
#include <cstring>

#include <fmt/format.h>

namespace commscale {

MpiCommunicator::MpiCommunicator(MpiComm comm, std::shared_ptr<const MpiTypes> types)
    : comm_(std::move(comm)), types_(std::move(types)) {}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  return std::make_unique<MpiCommunicator>(comm_.split(color, key), types_);
}

std::function<void()> MpiCommunicator::average_step(const CollectiveCall& call, std::byte* data,
                                                    std::uint64_t count) const {
  if (call.op != ReduceOp::kAvg) return {};
  const int n = size();
  const DataType type = call.type;
  return [data, count, n, type] {
    for (std::uint64_t i = 0; i < count; ++i) {
      const double sum = load_element_host(data, type, i);
      const double avg = is_floating(type) ? sum / n : static_cast<double>(static_cast<std::int64_t>(sum) / n);
      store_element_host(data, type, i, avg);
    }
  };
}

void MpiCommunicator::start(const CollectiveCall& call) {
  const std::uint64_t chunk = call.collective == Collective::kAllGather || call.collective == Collective::kAllToAll ||
                                      call.collective == Collective::kReduceScatter
                                  ? call.count * static_cast<std::uint64_t>(size())
                                  : call.count;
  if (chunk > static_cast<std::uint64_t>(INT_MAX)) {
    throw InputError("-e/--maxbytes", fmt::format("{} elements per MPI call is more than MPI's int count", chunk),
                     "a smaller size or a wider type on the CPU backend");
  }
  const int count = static_cast<int>(call.count);
  const MPI_Datatype dt = types_->datatype(call.type);
  const MPI_Op op = types_->op(call.type, call.op);
  const std::size_t bytes = call.count * size_of(call.type);
  const int me = rank();
  const int n = size();
  MPI_Comm comm = comm_.get();
  std::vector<MPI_Request> requests(1, MPI_REQUEST_NULL);
  std::function<void()> then;
  const std::string what =
      fmt::format("{} of {} {} elements on a group of {} ranks", name(call.collective), call.count, name(call.type), n);

  switch (call.collective) {
    case Collective::kAllReduce: {
      const void* send = call.send == call.recv ? MPI_IN_PLACE : call.send;
      MPI_CHECK(MPI_Iallreduce(send, call.recv, count, dt, op, comm, &requests[0]));
      then = average_step(call, call.recv, call.count);
      break;
    }
    case Collective::kAllGather: {
      const bool in_place = call.send == call.recv + static_cast<std::size_t>(me) * bytes;
      MPI_CHECK(in_place ? MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, call.recv, count, dt, comm, &requests[0])
                         : MPI_Iallgather(call.send, count, dt, call.recv, count, dt, comm, &requests[0]));
      break;
    }
    case Collective::kReduceScatter: {
      // MPI leaves an in-place result at the start of the buffer; NCCL at this rank's chunk.
      std::byte* full = const_cast<std::byte*>(call.send);
      const bool in_place = call.recv == full + static_cast<std::size_t>(me) * bytes;
      MPI_CHECK(in_place ? MPI_Ireduce_scatter_block(MPI_IN_PLACE, full, count, dt, op, comm, &requests[0])
                         : MPI_Ireduce_scatter_block(call.send, call.recv, count, dt, op, comm, &requests[0]));
      std::function<void()> average = average_step(call, call.recv, call.count);
      then = [in_place, full, recv = call.recv, bytes, average] {
        if (in_place && bytes > 0) std::memmove(recv, full, bytes);
        if (average) average();
      };
      break;
    }
    case Collective::kBroadcast:
      if (me == call.root && call.send != call.recv && bytes > 0) std::memcpy(call.recv, call.send, bytes);
      MPI_CHECK(MPI_Ibcast(call.recv, count, dt, call.root, comm, &requests[0]));
      break;
    case Collective::kReduce: {
      const void* send = call.send == call.recv && me == call.root ? MPI_IN_PLACE : call.send;
      MPI_CHECK(MPI_Ireduce(send, call.recv, count, dt, op, call.root, comm, &requests[0]));
      if (me == call.root) then = average_step(call, call.recv, call.count);
      break;
    }
    case Collective::kAllToAll:
      MPI_CHECK(call.send == call.recv
                    ? MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, call.recv, count, dt, comm, &requests[0])
                    : MPI_Ialltoall(call.send, count, dt, call.recv, count, dt, comm, &requests[0]));
      break;
    case Collective::kSendRecv: {
      // MPI may not read and write one buffer at once: in place, send a copy that lives until completion.
      std::shared_ptr<std::vector<std::byte>> copy;
      if (call.send == call.recv) copy = std::make_shared<std::vector<std::byte>>(call.send, call.send + bytes);
      requests.resize(2, MPI_REQUEST_NULL);
      MPI_CHECK(MPI_Irecv(call.recv, count, dt, (me + n - 1) % n, 0, comm, &requests[0]));
      MPI_CHECK(MPI_Isend(copy ? copy->data() : call.send, count, dt, (me + 1) % n, 0, comm, &requests[1]));
      then = [copy] {};
      break;
    }
  }
  queue_.push(what, std::move(requests), std::move(then));
}

}  // namespace commscale
