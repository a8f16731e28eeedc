#pragma once

// RAII owners for CUDA handles. Destruction never throws; failures there are reported and ignored.

#include <cuda_runtime_api.h>

#include <utility>

#include "runtime/backend.hpp"
#include "runtime/cuda/checks.hpp"

namespace commscale {

class CudaStream {
 public:
  CudaStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (stream_ != nullptr) CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent() { CUDA_CHECK(cudaEventCreate(&event_)); }
  ~CudaEvent() {
    if (event_ != nullptr) CUDA_CHECK_NOTHROW(cudaEventDestroy(event_));
  }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Device memory from ncclMemAlloc.
class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(std::byte* data, Bytes size) : Buffer(data, size) {}
  ~DeviceBuffer() override { NCCL_CHECK_NOTHROW(ncclMemFree(data())); }
};

// A captured and instantiated CUDA graph, replayed on the stream it was captured from.
class CudaGraph final : public Graph {
 public:
  CudaGraph(cudaGraph_t graph, cudaStream_t stream) : graph_(graph), stream_(stream) {
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~CudaGraph() override {
    if (exec_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
    CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  void launch() override { CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaGraph_t graph_;
  cudaGraphExec_t exec_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace commscale
