#include "runtime/cuda/nccl_communicator.hpp"

#include <fmt/format.h>

#include "runtime/cuda/nccl_compat.hpp"

namespace commscale {

std::string nccl_error_text(ncclResult_t result) {
  const char* detail = ncclGetLastError(nullptr);
  if (detail == nullptr || *detail == '\0') return ncclGetErrorString(result);
  return fmt::format("{} ({})", ncclGetErrorString(result), detail);
}

ncclDataType_t nccl_type(DataType type) noexcept {
  switch (type) {
    case DataType::kInt8: return ncclInt8;
    case DataType::kInt32: return ncclInt32;
    case DataType::kFloat16: return ncclFloat16;
    case DataType::kBFloat16: return ncclBfloat16;
    case DataType::kFloat32: return ncclFloat32;
    case DataType::kFloat64: return ncclFloat64;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return ncclUint8;  // moved as bytes; no collective reduces FP8 (dtype.hpp)
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kProd: return ncclProd;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kAvg: return ncclAvg;
  }
  return ncclSum;
}

NcclCommunicator::NcclCommunicator(ncclComm_t comm, MpiComm members, Seconds timeout)
    : comm_(comm), members_(std::move(members)), calls_(group_calls(members_.world_ranks())), timeout_(timeout) {
  comm_.wait_ready(timeout_, fmt::format("the initialisation of an NCCL communicator over ranks {}",
                                         rank_list(calls_->members)));
  NCCL_CHECK(ncclCommUserRank(comm, &rank_));
  NCCL_CHECK(ncclCommCount(comm, &size_));
  NCCL_CHECK(ncclGetVersion(&library_version_));
  queue_.watch(&comm_);
  queue_.track(calls_);
  queue_.set_timeout(timeout_);
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  MpiComm members = members_.split(color, key);  // the same ranks, in the same order
  ncclComm_t child = nullptr;
  ncclConfig_t config = nonblocking_config();
  NCCL_CHECK(ncclCommSplit(comm_.get(), color, key, &child, &config));
  comm_.wait_ready(timeout_, "an NCCL communicator split");
  return std::make_unique<NcclCommunicator>(child, std::move(members), timeout_);
}

void launch_nccl_collective(const CollectiveCall& c, ncclComm_t comm, cudaStream_t stream, int rank, int size,
                            int library_version) {
  const ncclDataType_t type = nccl_type(c.type);
  const ncclRedOp_t op = nccl_op(c.op);
  switch (c.collective) {
    case Collective::kAllReduce: NCCL_CHECK(ncclAllReduce(c.send, c.recv, c.count, type, op, comm, stream)); break;
    case Collective::kAllGather: NCCL_CHECK(ncclAllGather(c.send, c.recv, c.count, type, comm, stream)); break;
    case Collective::kReduceScatter:
      NCCL_CHECK(ncclReduceScatter(c.send, c.recv, c.count, type, op, comm, stream));
      break;
    case Collective::kBroadcast: NCCL_CHECK(ncclBroadcast(c.send, c.recv, c.count, type, c.root, comm, stream)); break;
    case Collective::kReduce: NCCL_CHECK(ncclReduce(c.send, c.recv, c.count, type, op, c.root, comm, stream)); break;
    case Collective::kAllToAll:
      NCCL_CHECK(nccl_alltoall(c.send, c.recv, c.count, type, size_of(c.type), comm, stream, library_version));
      break;
    case Collective::kAllToAllV: {  // as nccl-tests' alltoallv: a grouped send and receive per peer
      const std::uint64_t element = size_of(c.type);
      const std::byte* send = c.send;
      std::byte* recv = c.recv;
      NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < size; ++peer) {
        const std::uint64_t out = c.send_counts[static_cast<std::size_t>(peer)];
        const std::uint64_t in = c.recv_counts[static_cast<std::size_t>(peer)];
        if (out > 0) NCCL_CHECK(ncclSend(send, out, type, peer, comm, stream));
        if (in > 0) NCCL_CHECK(ncclRecv(recv, in, type, peer, comm, stream));
        send += out * element;
        recv += in * element;
      }
      NCCL_CHECK(ncclGroupEnd());
      break;
    }
    case Collective::kSendRecv:
      NCCL_CHECK(ncclGroupStart());
      NCCL_CHECK(ncclSend(c.send, c.count, type, (rank + 1) % size, comm, stream));
      NCCL_CHECK(ncclRecv(c.recv, c.count, type, (rank + size - 1) % size, comm, stream));
      NCCL_CHECK(ncclGroupEnd());
      break;
  }
}

void NcclCommunicator::start(const CollectiveCall& c) {
  launch_nccl_collective(c, comm_.get(), queue_.stream(), rank_, size_, library_version_);
  const std::uint64_t call = ++calls_->started;
  queue_.started(call);
  // A non-blocking communicator may still be enqueueing (ncclInProgress): no other NCCL call before it ends.
  comm_.wait_ready(queue_.timeout(), [&] {
    return fmt::format("enqueueing {} on the group of ranks {} (call {} on it)", name(c.collective),
                       rank_list(calls_->members), call);
  });
}

}  // namespace commscale
