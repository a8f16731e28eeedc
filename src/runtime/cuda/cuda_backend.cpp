// The GPU backend: device memory, fill/check kernels, NCCL communicators bootstrapped over MPI.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "core/size.hpp"
#include "kernels/pattern.cuh"
#include "runtime/cuda/cuda_step_engine.hpp"
#include "runtime/cuda/handles.hpp"
#include "runtime/cuda/nccl_communicator.hpp"
#include "runtime/cuda/device_text.hpp"
#include "runtime/gpu.hpp"

namespace commscale {
namespace {

class CudaBackend final : public Backend {
 public:
  CudaBackend(const MpiComm& world, int device, Seconds timeout)
      : world_(world), device_(select(device)), timeout_(timeout) {
    CUDA_CHECK(cudaMalloc(&wrong_counter_, sizeof(unsigned long long)));
  }
  ~CudaBackend() override { CUDA_CHECK_NOTHROW(cudaFree(wrong_counter_)); }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  [[nodiscard]] std::string kind() const override { return "gpu"; }

  // Collective buffers come from ncclMemAlloc, as nccl-tests allocates them: NCCL can then register
  // them for its zero-copy paths, and measured bandwidths compare like for like.
  [[nodiscard]] std::unique_ptr<Buffer> allocate(Bytes size, const std::string& what) override {
    void* data = nullptr;
    const ncclResult_t rc = ncclMemAlloc(&data, std::max<std::uint64_t>(size.count(), 1));
    if (rc != ncclSuccess) {
      std::size_t free_bytes = 0;
      std::size_t total_bytes = 0;
      CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      throw RuntimeFailure(fmt::format("cannot allocate {} of GPU memory for the {} on device {} ({}): {} ({} of {} free)",
                                       format_size(size), what, device_, process_identity(), nccl_error_text(rc),
                                       format_size(Bytes(free_bytes)), format_size(Bytes(total_bytes))));
    }
    return std::make_unique<DeviceBuffer>(static_cast<std::byte*>(data), size);
  }

  void fill_pattern(Buffer& buffer, std::uint64_t offset, std::uint64_t count, const PatternSpec& spec) override {
    kernels::launch_fill_pattern(buffer.data() + offset * size_of(spec.type), count, spec, stream_.get());
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  void poison(Buffer& buffer, std::uint64_t offset_bytes, Bytes size) override {
    CUDA_CHECK(cudaMemsetAsync(buffer.data() + offset_bytes, kPoisonByte, size.count(), stream_.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  [[nodiscard]] std::uint64_t count_wrong(const Buffer& buffer, std::uint64_t offset, std::uint64_t count,
                                          const PatternSpec& spec) override {
    CUDA_CHECK(cudaMemsetAsync(wrong_counter_, 0, sizeof(unsigned long long), stream_.get()));
    kernels::launch_count_wrong(buffer.data() + offset * size_of(spec.type), count, spec, wrong_counter_,
                                stream_.get());
    CUDA_CHECK(cudaGetLastError());
    unsigned long long wrong = 0;
    CUDA_CHECK(cudaMemcpyAsync(&wrong, wrong_counter_, sizeof(wrong), cudaMemcpyDeviceToHost, stream_.get()));
    CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    return wrong;
  }

  void store_element(Buffer& buffer, std::uint64_t offset, DataType type, double value) override {
    std::array<std::byte, 8> element{};
    store_element_host(element.data(), type, 0, value);
    CUDA_CHECK(cudaMemcpy(buffer.data() + offset * size_of(type), element.data(), size_of(type),
                          cudaMemcpyHostToDevice));
  }

  [[nodiscard]] std::unique_ptr<Communicator> world() override {
    ncclUniqueId id{};
    if (world_.rank() == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world_.get()));
    ncclComm_t comm = nullptr;
    ncclConfig_t config = nonblocking_config();
    NCCL_CHECK(ncclCommInitRankConfig(&comm, world_.size(), id, world_.rank(), &config));
    return std::make_unique<NcclCommunicator>(comm, world_.split(0, world_.rank()), timeout_);
  }

  [[nodiscard]] std::unique_ptr<StepEngine> make_step_engine(const StepEngineConfig& config) override {
    CUDA_CHECK(cudaSetDevice(device_));
    StepEngineConfig with_timeout = config;
    if (with_timeout.timeout.value() == 0) with_timeout.timeout = timeout_;
    return make_cuda_step_engine(with_timeout, world_);
  }

  void describe(RankPlacement& placement, RunContext& context) const override {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    std::array<char, 32> bus{};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device_));
    placement.device = device_;
    placement.gpu_name = prop.name;
    placement.pci_bus_id = bus.data();
    placement.gpu_uuid = gpu_uuid_text(prop.uuid);
    placement.gpu_memory_GiB = Bytes(prop.totalGlobalMem).gib();
    placement.compute_capability = prop.major * 10 + prop.minor;

    int runtime = 0;
    int driver = 0;
    int nccl = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    NCCL_CHECK(ncclGetVersion(&nccl));
    context.backend = kind();
    context.comm_library = fmt::format("NCCL {}.{}.{}", nccl / 10000, (nccl % 10000) / 100, nccl % 100);
    context.cuda_runtime = cuda_version_text(runtime);
    context.cuda_driver = cuda_version_text(driver);
    context.gpu_driver = nvml_driver_version();
  }

 private:
  // Makes `device` current before any member allocates on it.
  static int select(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    return device;
  }

  const MpiComm& world_;
  int device_;
  Seconds timeout_;
  CudaStream stream_;
  unsigned long long* wrong_counter_ = nullptr;
};

}  // namespace

int visible_gpu_count(std::string* why) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    *why = fmt::format("no GPU visible: cudaGetDeviceCount returned {} ({})", cudaGetErrorName(rc),
                       cudaGetErrorString(rc));
    return 0;
  }
  if (count == 0) *why = "no GPU visible: cudaGetDeviceCount found 0 devices";
  return count;
}

std::unique_ptr<Backend> make_gpu_backend(const MpiComm& world, int device, Seconds timeout) {
  return std::make_unique<CudaBackend>(world, device, timeout);
}

}  // namespace commscale
