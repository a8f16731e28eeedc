#if defined(COMMSCALE_HAVE_CUDA)

#include "bench/p2p_transfers.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/error.hpp"
#include "kernels/p2p.cuh"
#include "kernels/pattern.cuh"

namespace commscale {

PatternSpec copy_pattern(int rep, Bytes size) noexcept {
  // A broadcast from rank 0 of one rank: output element j must equal input element j of pattern `rep`.
  return PatternSpec{Collective::kBroadcast, ReduceOp::kSum, DataType::kInt8, 1, 0, 0, rep, size.count(), 0.0};
}

GpuSlot::GpuSlot(int device, int sm_count, Bytes size)
    : device_(device),
      sm_count_(sm_count),
      src_(device, size, "p2p source buffer"),
      dst_(device, size, "p2p destination buffer"),
      scratch_(device, Bytes(2 * sizeof(std::uint64_t)), "p2p counters") {}

unsigned int GpuSlot::copy_blocks() const noexcept {
  // Four blocks of 512 threads per SM fill an SM (2048 threads on Ampere and Hopper).
  return static_cast<unsigned int>(std::max(1, sm_count_) * 4);
}

std::uint64_t* GpuSlot::chase_end() const noexcept { return reinterpret_cast<std::uint64_t*>(scratch_.data()) + 1; }

void GpuSlot::fill(std::byte* data, Bytes size, int rep) {
  const ScopedDevice on(device_);
  kernels::launch_fill_pattern(data, size.count(), copy_pattern(rep, size), streams_[0].get());
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(streams_[0].get()));
}

void GpuSlot::poison(std::byte* data, Bytes size) {
  const ScopedDevice on(device_);
  CUDA_CHECK(cudaMemsetAsync(data, kPoisonByte, size.count(), streams_[0].get()));
  CUDA_CHECK(cudaStreamSynchronize(streams_[0].get()));
}

std::uint64_t GpuSlot::count_wrong(const std::byte* data, Bytes size, int rep) {
  const ScopedDevice on(device_);
  const cudaStream_t s = streams_[0].get();
  auto* counter = reinterpret_cast<unsigned long long*>(scratch_.data());
  CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), s));
  kernels::launch_count_wrong(data, size.count(), copy_pattern(rep, size), counter, s);
  CUDA_CHECK(cudaGetLastError());
  unsigned long long wrong = 0;
  CUDA_CHECK(cudaMemcpyAsync(&wrong, counter, sizeof(wrong), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return wrong;
}

std::uint64_t GpuSlot::count_wrong_host(const std::byte* host, Bytes size, int rep) {
  {
    const ScopedDevice on(device_);
    CUDA_CHECK(cudaMemcpyAsync(dst(), host, size.count(), cudaMemcpyHostToDevice, streams_[0].get()));
    CUDA_CHECK(cudaStreamSynchronize(streams_[0].get()));
  }
  return count_wrong(dst(), size, rep);
}

StagedCopy::StagedCopy(QueueRef from, QueueRef to, const PinnedMemory& staging)
    : from_(from), to_(to), staging_(staging) {
  for (int k = 0; k < kStagedChunks; ++k) {
    {
      const ScopedDevice on(from.device);
      written_.emplace_back();
    }
    const ScopedDevice on(to.device);
    read_.emplace_back();
  }
}

void StagedCopy::enqueue(std::byte* dst, const std::byte* src, Bytes size) {
  if (size > staging_.size()) throw RuntimeFailure("staged copy larger than its staging memory");
  const std::uint64_t total = size.count();
  const std::uint64_t chunk = std::max<std::uint64_t>(1, (total + kStagedChunks - 1) / kStagedChunks);
  std::byte* host = staging_.data();
  for (std::size_t k = 0; k * chunk < total; ++k) {
    const std::uint64_t at = k * chunk;
    const std::uint64_t length = std::min(chunk, total - at);
    {
      const ScopedDevice on(from_.device);
      CUDA_CHECK(cudaStreamWaitEvent(from_.stream, read_[k].get(), 0));  // the previous copy's chunk k is down
      CUDA_CHECK(cudaMemcpyAsync(host + at, src + at, length, cudaMemcpyDeviceToHost, from_.stream));
      CUDA_CHECK(cudaEventRecord(written_[k].get(), from_.stream));
    }
    const ScopedDevice on(to_.device);
    CUDA_CHECK(cudaStreamWaitEvent(to_.stream, written_[k].get(), 0));
    CUDA_CHECK(cudaMemcpyAsync(dst + at, host + at, length, cudaMemcpyHostToDevice, to_.stream));
    CUDA_CHECK(cudaEventRecord(read_[k].get(), to_.stream));
  }
}

ChaseChain::ChaseChain() : words_(kChainNodes * kChainStride / sizeof(std::uint64_t), 0) {
  // Sattolo's algorithm: a uniformly random permutation that is one cycle through every node.
  std::vector<std::uint64_t> next(kChainNodes);
  std::iota(next.begin(), next.end(), 0);
  std::mt19937_64 random(0x9E3779B97F4A7C15ull);
  for (std::uint64_t i = kChainNodes - 1; i > 0; --i) {
    std::uniform_int_distribution<std::uint64_t> pick(0, i - 1);
    std::swap(next[i], next[pick(random)]);
  }
  constexpr std::uint64_t kWordsPerNode = kChainStride / sizeof(std::uint64_t);
  for (std::uint64_t node = 0; node < kChainNodes; ++node) words_[node * kWordsPerNode] = next[node] * kWordsPerNode;
}

std::uint64_t ChaseChain::end_after(std::uint32_t accesses) const noexcept {
  std::uint64_t at = 0;
  for (std::uint32_t n = 0; n < accesses; ++n) at = words_[at];
  return at;
}

LatencyResult measure_latency(GpuSlot& reader, const std::uint64_t* chain_copy, const ChaseChain& chain,
                              const P2pOptions& options) {
  const ScopedDevice on(reader.device());
  const QueueRef q = reader.queue(0);
  const CudaEvent start;
  const CudaEvent stop;
  const auto accesses = static_cast<std::uint32_t>(options.latency_accesses);
  const std::uint64_t expected = chain.end_after(accesses);
  LatencyResult result;
  result.measured = true;
  for (int i = 0; i < options.warmup + options.iters; ++i) {
    CUDA_CHECK(cudaMemsetAsync(reader.chase_end(), 0xFF, sizeof(std::uint64_t), q.stream));
    CUDA_CHECK(cudaEventRecord(start.get(), q.stream));
    kernels::launch_pointer_chase(chain_copy, 0, accesses, reader.chase_end(), q.stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop.get(), q.stream));
    std::uint64_t end = 0;
    CUDA_CHECK(cudaMemcpyAsync(&end, reader.chase_end(), sizeof(end), cudaMemcpyDeviceToHost, q.stream));
    CUDA_CHECK(cudaStreamSynchronize(q.stream));
    if (end != expected) result.wrong_bytes += sizeof(end);
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    if (i >= options.warmup) result.samples_ns.push_back(static_cast<double>(ms) * 1e6 / accesses);
  }
  result.stats = summarize(result.samples_ns);
  return result;
}

}  // namespace commscale

#endif
