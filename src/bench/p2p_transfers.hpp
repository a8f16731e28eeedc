#pragma once

// The pieces `commscale p2p` measures with (CUDA builds only): each GPU's buffers, streams and
// checks; the staged copy through pinned host memory; the pointer-chase chain. Method: P2P.md.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "bench/p2p_batch.hpp"
#include "bench/p2p_result.hpp"
#include "core/pattern.hpp"

namespace commscale {

// The data every p2p copy moves: int8 pattern elements (values 1..8, so every byte is checked) of
// pattern `rep`. Each source has its own rep, so data that arrives from the wrong source is wrong.
[[nodiscard]] PatternSpec copy_pattern(int rep, Bytes size) noexcept;
inline constexpr int kHostPatternRep = 255;  // GPUs use their index in the report

// One GPU's share of the measurement. Construct with the GPU current: its streams are created there.
class GpuSlot {
 public:
  GpuSlot(int device, int sm_count, Bytes size);
  GpuSlot(const GpuSlot&) = delete;
  GpuSlot& operator=(const GpuSlot&) = delete;

  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] unsigned int copy_blocks() const noexcept;  // for the SM copy kernel
  [[nodiscard]] QueueRef queue(int k) const noexcept { return {device_, streams_[static_cast<std::size_t>(k)].get()}; }
  [[nodiscard]] std::byte* src() const noexcept { return src_.data(); }  // holds this GPU's pattern
  [[nodiscard]] std::byte* dst() const noexcept { return dst_.data(); }  // where copies to this GPU land
  [[nodiscard]] std::uint64_t* chase_end() const noexcept;

  // Fills `data` (this GPU's memory) with pattern `rep`; overwrites `data` with the poison byte. Both wait.
  void fill(std::byte* data, Bytes size, int rep);
  void poison(std::byte* data, Bytes size);
  // Bytes of `data` that differ from pattern `rep`: device memory of this GPU, or pinned host memory
  // (copied into dst() and checked there).
  [[nodiscard]] std::uint64_t count_wrong(const std::byte* data, Bytes size, int rep);
  [[nodiscard]] std::uint64_t count_wrong_host(const std::byte* host, Bytes size, int rep);

 private:
  int device_;
  int sm_count_;
  DeviceMemory src_;
  DeviceMemory dst_;
  DeviceMemory scratch_;  // the wrong-byte counter, then the end of a pointer chase
  std::array<CudaStream, 2> streams_;
};

// Device -> pinned host -> device in kStagedChunks pipelined chunks: chunk k goes down to the
// destination while chunk k + 1 comes up from the source. Events order the two streams and keep a
// chunk of the staging memory from being overwritten before the destination has read it.
inline constexpr int kStagedChunks = 8;
class StagedCopy {
 public:
  StagedCopy(QueueRef from, QueueRef to, const PinnedMemory& staging);
  void enqueue(std::byte* dst, const std::byte* src, Bytes size);

 private:
  QueueRef from_;
  QueueRef to_;
  const PinnedMemory& staging_;
  std::vector<SyncEvent> written_;  // chunk k is in host memory (source device)
  std::vector<SyncEvent> read_;     // chunk k has reached the destination (destination device)
};

// The chain of the pointer chase: kChainNodes nodes of one 8-byte word, kChainStride bytes apart, in
// a single random cycle (Sattolo's algorithm, fixed seed) so consecutive loads are never near each other.
inline constexpr std::uint64_t kChainNodes = 4096;
inline constexpr std::uint64_t kChainStride = 512;
class ChaseChain {
 public:
  ChaseChain();
  [[nodiscard]] Bytes size() const noexcept { return Bytes(words_.size() * sizeof(std::uint64_t)); }
  [[nodiscard]] const std::uint64_t* data() const noexcept { return words_.data(); }
  // The word a chase from word 0 ends at after `accesses` loads.
  [[nodiscard]] std::uint64_t end_after(std::uint32_t accesses) const noexcept;

 private:
  std::vector<std::uint64_t> words_;
};

// Times options.iters chases of options.latency_accesses loads by `reader` through `chain_copy` (a
// copy of `chain` in any memory the reader can address), after options.warmup untimed ones.
[[nodiscard]] LatencyResult measure_latency(GpuSlot& reader, const std::uint64_t* chain_copy, const ChaseChain& chain,
                                            const P2pOptions& options);

}  // namespace commscale
