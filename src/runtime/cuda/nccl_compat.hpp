#pragma once

// Differences between NCCL versions, in one place. We need 2.18 (ncclCommSplit, ncclCommInitRankConfig);
// newer calls are used when both the headers and the loaded library have them.

#include <nccl.h>

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "commscale needs NCCL 2.18 or newer (ncclCommSplit)"
#endif

namespace commscale {

// ncclAlltoAll appeared in 2.28; before it (or with an older library loaded) all-to-all is a group of
// ncclSend/ncclRecv, as nccl-tests does it.
inline ncclResult_t nccl_alltoall(const void* send, void* recv, size_t count, ncclDataType_t type, size_t element_bytes,
                                  ncclComm_t comm, cudaStream_t stream, int runtime_version) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  if (runtime_version >= NCCL_VERSION(2, 28, 0)) return ncclAlltoAll(send, recv, count, type, comm, stream);
#else
  (void)runtime_version;
#endif
  int nranks = 0;
  ncclResult_t rc = ncclCommCount(comm, &nranks);
  if (rc != ncclSuccess) return rc;
  const size_t chunk = count * element_bytes;
  rc = ncclGroupStart();
  for (int peer = 0; peer < nranks && rc == ncclSuccess; ++peer) {
    rc = ncclSend(static_cast<const char*>(send) + peer * chunk, count, type, peer, comm, stream);
    if (rc == ncclSuccess) rc = ncclRecv(static_cast<char*>(recv) + peer * chunk, count, type, peer, comm, stream);
  }
  const ncclResult_t end = ncclGroupEnd();
  return rc != ncclSuccess ? rc : end;
}

}  // namespace commscale
