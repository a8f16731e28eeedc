#include "runtime/mpi_communicator.hpp"

#include <array>
#include <climits>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

namespace commscale {
namespace {

// An alltoallv's per-peer count or displacement, in MPI's int.
int checked_mpi_count(std::uint64_t count) {
  if (count > static_cast<std::uint64_t>(INT_MAX)) {
    throw InputError("-e/--maxbytes",
                     fmt::format("{} elements in an MPI alltoallv is more than MPI's int count", count),
                     "a smaller size or a wider type on the CPU backend");
  }
  return static_cast<int>(count);
}

}  // namespace

MpiCommunicator::MpiCommunicator(MpiComm comm, std::shared_ptr<const MpiTypes> types)
    : comm_(std::move(comm)), types_(std::move(types)), calls_(group_calls(comm_.world_ranks())) {
  queue_.track(calls_);
}

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

// The MPI form of one call: its count and datatype, and where the in-place forms put their data.
struct MpiCommunicator::Call {
  const CollectiveCall& c;
  int count;
  MPI_Datatype type;
  MPI_Op op;
  std::size_t bytes;  // of one rank's chunk
  int rank;
  int size;
  MPI_Comm comm;
};

MpiCommunicator::Started MpiCommunicator::start_reduction(const Call& m) const {
  const CollectiveCall& c = m.c;
  Started s;
  switch (c.collective) {
    case Collective::kAllReduce:
      MPI_CHECK(MPI_Iallreduce(c.send == c.recv ? MPI_IN_PLACE : c.send, c.recv, m.count, m.type, m.op, m.comm,
                               &s.requests[0]));
      s.then = average_step(c, c.recv, c.count);
      break;
    case Collective::kReduce: {
      const void* send = c.send == c.recv && m.rank == c.root ? MPI_IN_PLACE : c.send;
      MPI_CHECK(MPI_Ireduce(send, c.recv, m.count, m.type, m.op, c.root, m.comm, &s.requests[0]));
      if (m.rank == c.root) s.then = average_step(c, c.recv, c.count);
      break;
    }
    default: {  // reduce-scatter: MPI leaves an in-place result at the start of the buffer, NCCL at this rank's chunk
      std::byte* full = const_cast<std::byte*>(c.send);
      const bool in_place = c.recv == full + static_cast<std::size_t>(m.rank) * m.bytes;
      MPI_CHECK(in_place ? MPI_Ireduce_scatter_block(MPI_IN_PLACE, full, m.count, m.type, m.op, m.comm, &s.requests[0])
                         : MPI_Ireduce_scatter_block(c.send, c.recv, m.count, m.type, m.op, m.comm, &s.requests[0]));
      s.then = [in_place, full, recv = c.recv, bytes = m.bytes, average = average_step(c, c.recv, c.count)] {
        if (in_place && bytes > 0) std::memmove(recv, full, bytes);
        if (average) average();
      };
    }
  }
  return s;
}

MpiCommunicator::Started MpiCommunicator::start_movement(const Call& m) const {
  const CollectiveCall& c = m.c;
  Started s;
  switch (c.collective) {
    case Collective::kAllGather: {
      const bool in_place = c.send == c.recv + static_cast<std::size_t>(m.rank) * m.bytes;
      MPI_CHECK(
          in_place ? MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c.recv, m.count, m.type, m.comm, &s.requests[0])
                   : MPI_Iallgather(c.send, m.count, m.type, c.recv, m.count, m.type, m.comm, &s.requests[0]));
      break;
    }
    case Collective::kBroadcast:
      if (m.rank == c.root && c.send != c.recv && m.bytes > 0) std::memcpy(c.recv, c.send, m.bytes);
      MPI_CHECK(MPI_Ibcast(c.recv, m.count, m.type, c.root, m.comm, &s.requests[0]));
      break;
    case Collective::kAllToAll:
      MPI_CHECK(c.send == c.recv
                    ? MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c.recv, m.count, m.type, m.comm, &s.requests[0])
                    : MPI_Ialltoall(c.send, m.count, m.type, c.recv, m.count, m.type, m.comm, &s.requests[0]));
      break;
    case Collective::kAllToAllV: {  // in place, MPI would need symmetric counts: send from a copy, as sendrecv does
      const auto displacements = [](std::span<const std::uint64_t> counts) {
        std::vector<int> displ;
        std::uint64_t at = 0;
        for (const std::uint64_t count : counts) {
          displ.push_back(checked_mpi_count(at));
          at += count;
        }
        (void)checked_mpi_count(at);
        return displ;
      };
      auto counts = std::make_shared<std::array<std::vector<int>, 4>>();
      for (std::uint64_t v : c.send_counts) (*counts)[0].push_back(checked_mpi_count(v));
      for (std::uint64_t v : c.recv_counts) (*counts)[2].push_back(checked_mpi_count(v));
      (*counts)[1] = displacements(c.send_counts);
      (*counts)[3] = displacements(c.recv_counts);
      std::shared_ptr<std::vector<std::byte>> copy;
      const std::size_t send_bytes = static_cast<std::size_t>(
          std::accumulate(c.send_counts.begin(), c.send_counts.end(), std::uint64_t{0}) * size_of(c.type));
      if (c.send == c.recv) copy = std::make_shared<std::vector<std::byte>>(c.send, c.send + send_bytes);
      MPI_CHECK(MPI_Ialltoallv(copy ? copy->data() : c.send, (*counts)[0].data(), (*counts)[1].data(), m.type, c.recv,
                               (*counts)[2].data(), (*counts)[3].data(), m.type, m.comm, &s.requests[0]));
      s.then = [copy, counts] {};  // MPI reads the counts and the copy until the request completes
      break;
    }
    default: {  // sendrecv. MPI may not read and write one buffer at once: in place, send a copy kept until done
      std::shared_ptr<std::vector<std::byte>> copy;
      if (c.send == c.recv) copy = std::make_shared<std::vector<std::byte>>(c.send, c.send + m.bytes);
      s.requests.resize(2, MPI_REQUEST_NULL);
      MPI_CHECK(MPI_Irecv(c.recv, m.count, m.type, (m.rank + m.size - 1) % m.size, 0, m.comm, &s.requests[0]));
      MPI_CHECK(
          MPI_Isend(copy ? copy->data() : c.send, m.count, m.type, (m.rank + 1) % m.size, 0, m.comm, &s.requests[1]));
      s.then = [copy] {};
    }
  }
  return s;
}

MpiCommunicator::Started MpiCommunicator::begin(const CollectiveCall& call) {
  const bool chunks = per_rank_chunks(traits(call.collective).shape) && call.collective != Collective::kAllToAllV;
  const std::uint64_t elements = call.count * (chunks ? static_cast<std::uint64_t>(size()) : 1);
  if (elements > static_cast<std::uint64_t>(INT_MAX)) {
    throw InputError("-e/--maxbytes", fmt::format("{} elements per MPI call is more than MPI's int count", elements),
                     "a smaller size or a wider type on the CPU backend");
  }
  const Call m{call,
               static_cast<int>(call.count),
               types_->datatype(call.type),
               types_->op(call.type, call.op),
               call.count * size_of(call.type),
               rank(),
               size(),
               comm_.get()};
  Started s = takes_reduce_op(call.collective) ? start_reduction(m) : start_movement(m);
  s.call = ++calls_->started;
  return s;
}

void MpiCommunicator::start(const CollectiveCall& call) {
  Started s = begin(call);
  queue_.push(fmt::format("{} of {} {} elements on the group of ranks {} (call {} on it)", name(call.collective),
                          call.count, name(call.type), rank_list(calls_->members), s.call),
              std::move(s.requests), std::move(s.then), s.call);
}

namespace {

int checked_count(std::uint64_t count) {
  if (count > static_cast<std::uint64_t>(INT_MAX)) {
    throw RuntimeFailure(fmt::format("{} elements in one MPI transfer is more than MPI's int count", count));
  }
  return static_cast<int>(count);
}

}  // namespace

MpiCommunicator::Started MpiCommunicator::begin_send(const std::byte* data, std::uint64_t count, DataType type,
                                                     int peer, int tag) {
  Started s;
  MPI_CHECK(MPI_Isend(data, checked_count(count), types_->datatype(type), peer, tag, comm_.get(), &s.requests[0]));
  return s;
}

MpiCommunicator::Started MpiCommunicator::begin_recv(std::byte* data, std::uint64_t count, DataType type, int peer,
                                                     int tag) {
  Started s;
  MPI_CHECK(MPI_Irecv(data, checked_count(count), types_->datatype(type), peer, tag, comm_.get(), &s.requests[0]));
  return s;
}

}  // namespace commscale
