#include "bench/p2p.hpp"

#include "core/error.hpp"

#if defined(COMMSCALE_HAVE_CUDA)

#include <algorithm>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "bench/p2p_transfers.hpp"
#include "kernels/p2p.cuh"

namespace commscale {
namespace {

// Longer than any batch takes to queue; a batch that outlasts it is reported, not mistimed.
constexpr Seconds kSpinTimeout{10.0};

// One direction of a transfer: its queues (the first leads), how one copy is queued, how its
// destination is poisoned before a batch and checked after it.
struct Leg {
  std::vector<QueueRef> queues;
  std::function<void()> enqueue;
  std::function<void()> poison;
  std::function<std::uint64_t()> count_wrong;
};

class P2pRunner {
 public:
  P2pRunner(const P2pOptions& options, const MachineDiscovery& machine);
  [[nodiscard]] P2pReport run();

 private:
  [[nodiscard]] BandwidthResult measure(const std::vector<Leg>& legs);
  [[nodiscard]] Leg peer_leg(int from, int to, bool sm) const;
  [[nodiscard]] Leg staged_leg(int from, int to, int lane) const;
  [[nodiscard]] Leg host_leg(int gpu, bool to_gpu) const;
  void open_peer_paths();
  void prepare_data();
  void load_kernels();
  [[nodiscard]] PairResult measure_pair(int a, int b);
  void measure_both_ways(PairResult& ab, PairResult& ba);
  [[nodiscard]] HostResult measure_host(int g);

  const P2pOptions& o_;
  const MachineDiscovery& m_;
  const Bytes size_;
  SpinFlag flag_;
  PeerAccessSet peer_access_;
  std::vector<std::unique_ptr<GpuSlot>> slots_;
  std::vector<std::vector<std::string>> why_staged_;    // [a][b]; empty where a and b use P2P
  std::vector<std::unique_ptr<PinnedMemory>> staging_;  // one per direction, when a pair is staged
  std::unique_ptr<PinnedMemory> host_src_;
  std::unique_ptr<PinnedMemory> host_dst_;
  ChaseChain chain_;
  std::vector<std::unique_ptr<DeviceMemory>> chains_;  // a copy of chain_ on each GPU
  std::unique_ptr<PinnedMemory> host_chain_;
};

P2pRunner::P2pRunner(const P2pOptions& options, const MachineDiscovery& machine)
    : o_(options), m_(machine), size_(options.size) {
  for (const DiscoveredGpu& g : m_.gpus) {
    const ScopedDevice on(g.device);
    slots_.push_back(std::make_unique<GpuSlot>(g.device, g.sm_count, size_));
  }
  open_peer_paths();
  prepare_data();
  load_kernels();
}

// CUDA loads kernels lazily, at their first launch, and loading may wait for the device to go idle,
// which a device with a held stream (or a stream waiting on one) never does: the batch would hang
// until the spin kernel's timeout. So every kernel queued behind the spin kernel is launched once here.
void P2pRunner::load_kernels() {
  *flag_.release() = 1;
  for (const auto& slot : slots_) {
    const ScopedDevice on(slot->device());
    const QueueRef q = slot->queue(0);
    kernels::launch_spin(flag_.release(), flag_.timed_out(), 0, q.stream);
    kernels::launch_sm_copy(slot->dst(), slot->src(), std::min<std::uint64_t>(size_.count(), 32), 1, q.stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(q.stream));
  }
}

void P2pRunner::open_peer_paths() {
  const std::size_t n = m_.gpus.size();
  why_staged_.assign(n, std::vector<std::string>(n));
  bool any_staged = false;
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      std::string why;
      if (o_.no_p2p) {
        why = "--no-p2p";
      } else if (!m_.peers[a][b].can_access_peer || !m_.peers[b][a].can_access_peer) {
        why = "cudaDeviceCanAccessPeer: no peer access between these GPUs";
      } else {
        why = peer_access_.enable(m_.gpus[a].device, m_.gpus[b].device);
        if (why.empty()) why = peer_access_.enable(m_.gpus[b].device, m_.gpus[a].device);
      }
      why_staged_[a][b] = why_staged_[b][a] = why;
      any_staged = any_staged || !why.empty();
    }
  }
  if (any_staged && o_.copy_engine) {
    for (int lane = 0; lane < 2; ++lane) staging_.push_back(std::make_unique<PinnedMemory>(size_, "staging buffer"));
  }
}

void P2pRunner::prepare_data() {
  for (std::size_t g = 0; g < slots_.size(); ++g) slots_[g]->fill(slots_[g]->src(), size_, static_cast<int>(g));
  if (o_.host) {
    host_src_ = std::make_unique<PinnedMemory>(size_, "host source buffer");
    host_dst_ = std::make_unique<PinnedMemory>(size_, "host destination buffer");
    GpuSlot& first = *slots_.front();
    first.fill(first.dst(), size_, kHostPatternRep);
    const ScopedDevice on(first.device());
    CUDA_CHECK(cudaMemcpy(host_src_->data(), first.dst(), size_.count(), cudaMemcpyDeviceToHost));
  }
  if (!o_.latency) return;
  for (const auto& slot : slots_) {
    chains_.push_back(std::make_unique<DeviceMemory>(slot->device(), chain_.size(), "pointer-chase chain"));
    const ScopedDevice on(slot->device());
    CUDA_CHECK(cudaMemcpy(chains_.back()->data(), chain_.data(), chain_.size().count(), cudaMemcpyHostToDevice));
  }
  if (o_.host) {
    host_chain_ = std::make_unique<PinnedMemory>(chain_.size(), "pointer-chase chain");
    std::memcpy(host_chain_->data(), chain_.data(), chain_.size().count());
  }
}

BandwidthResult P2pRunner::measure(const std::vector<Leg>& legs) {
  std::vector<QueueRef> queues;
  for (const Leg& leg : legs) queues.insert(queues.end(), leg.queues.begin(), leg.queues.end());
  BatchTimer timer(queues, flag_, kSpinTimeout);
  BandwidthResult r;
  r.measured = true;
  r.bytes_per_copy = size_ * legs.size();
  for (int batch = 0; batch < o_.warmup + o_.iters; ++batch) {
    for (const Leg& leg : legs) leg.poison();
    const Seconds time = timer.run([&] {
      for (int c = 0; c < o_.copies; ++c) {
        for (const Leg& leg : legs) leg.enqueue();
      }
    });
    if (o_.inject_corruption && batch == 0) legs.front().poison();  // testing: the check must see it
    for (const Leg& leg : legs) r.wrong_bytes += leg.count_wrong();  // in order: see host_leg
    if (batch >= o_.warmup) r.samples_us.push_back(to_us(time) / o_.copies);
  }
  r.stats = summarize(r.samples_us);
  r.bw = bandwidth(r.bytes_per_copy, microseconds(r.stats.median));
  return r;
}

// A copy into GPU `to` from GPU `from`'s memory, run by `to`: its copy engine or its SMs pull the data.
Leg P2pRunner::peer_leg(int from, int to, bool sm) const {
  GpuSlot& src = *slots_[static_cast<std::size_t>(from)];
  GpuSlot& dst = *slots_[static_cast<std::size_t>(to)];
  const QueueRef q = dst.queue(0);
  const Bytes size = size_;
  Leg leg;
  leg.queues = {q};
  leg.enqueue = [&src, &dst, q, size, sm] {
    const ScopedDevice on(dst.device());
    if (sm) {
      kernels::launch_sm_copy(dst.dst(), src.src(), size.count(), dst.copy_blocks(), q.stream);
      CUDA_CHECK(cudaGetLastError());
    } else {
      CUDA_CHECK(cudaMemcpyPeerAsync(dst.dst(), dst.device(), src.src(), src.device(), size.count(), q.stream));
    }
  };
  leg.poison = [&dst, size] { dst.poison(dst.dst(), size); };
  leg.count_wrong = [&dst, size, from] { return dst.count_wrong(dst.dst(), size, from); };
  return leg;
}

// GPU `from` -> pinned host memory -> GPU `to`. Lane 0 or 1 picks the streams and the staging memory,
// so that both directions of a bidirectional measurement run side by side.
Leg P2pRunner::staged_leg(int from, int to, int lane) const {
  GpuSlot& src = *slots_[static_cast<std::size_t>(from)];
  GpuSlot& dst = *slots_[static_cast<std::size_t>(to)];
  const auto copy =
      std::make_shared<StagedCopy>(src.queue(lane), dst.queue(lane), *staging_[static_cast<std::size_t>(lane)]);
  const Bytes size = size_;
  Leg leg;
  leg.queues = {dst.queue(lane), src.queue(lane)};
  leg.enqueue = [copy, &src, &dst, size] { copy->enqueue(dst.dst(), src.src(), size); };
  leg.poison = [&dst, size] { dst.poison(dst.dst(), size); };
  leg.count_wrong = [&dst, size, from] { return dst.count_wrong(dst.dst(), size, from); };
  return leg;
}

// Host -> GPU on the GPU's stream 0, or GPU -> host on its stream 1. The GPU -> host check copies the
// host buffer into the GPU's dst(), so in a bidirectional batch the host -> GPU leg is checked first.
Leg P2pRunner::host_leg(int gpu, bool to_gpu) const {
  GpuSlot& slot = *slots_[static_cast<std::size_t>(gpu)];
  PinnedMemory& host_src = *host_src_;
  PinnedMemory& host_dst = *host_dst_;
  const Bytes size = size_;
  const QueueRef q = slot.queue(to_gpu ? 0 : 1);
  Leg leg;
  leg.queues = {q};
  if (to_gpu) {
    leg.enqueue = [&slot, &host_src, q, size] {
      const ScopedDevice on(slot.device());
      CUDA_CHECK(cudaMemcpyAsync(slot.dst(), host_src.data(), size.count(), cudaMemcpyHostToDevice, q.stream));
    };
    leg.poison = [&slot, size] { slot.poison(slot.dst(), size); };
    leg.count_wrong = [&slot, size] { return slot.count_wrong(slot.dst(), size, kHostPatternRep); };
  } else {
    leg.enqueue = [&slot, &host_dst, q, size] {
      const ScopedDevice on(slot.device());
      CUDA_CHECK(cudaMemcpyAsync(host_dst.data(), slot.src(), size.count(), cudaMemcpyDeviceToHost, q.stream));
    };
    leg.poison = [&host_dst, size] { std::memset(host_dst.data(), kPoisonByte, size.count()); };
    leg.count_wrong = [&slot, &host_dst, size, gpu] { return slot.count_wrong_host(host_dst.data(), size, gpu); };
  }
  return leg;
}

PairResult P2pRunner::measure_pair(int a, int b) {
  PairResult r;
  r.src = a;
  r.dst = b;
  r.why_staged = why_staged_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
  r.path = r.why_staged.empty() ? PeerPath::kP2p : PeerPath::kStaged;
  const bool direct = r.path == PeerPath::kP2p;
  if (o_.copy_engine) r.ce_uni = measure({direct ? peer_leg(a, b, false) : staged_leg(a, b, 0)});
  if (o_.sm && direct) r.sm_uni = measure({peer_leg(a, b, true)});
  if (o_.latency && direct) {
    const auto* chain = reinterpret_cast<const std::uint64_t*>(chains_[static_cast<std::size_t>(a)]->data());
    r.latency = measure_latency(*slots_[static_cast<std::size_t>(b)], chain, chain_, o_);
  }
  return r;
}

void P2pRunner::measure_both_ways(PairResult& ab, PairResult& ba) {
  const int a = ab.src;
  const int b = ab.dst;
  if (o_.copy_engine) {
    ab.ce_bi = ab.path == PeerPath::kP2p ? measure({peer_leg(a, b, false), peer_leg(b, a, false)})
                                         : measure({staged_leg(a, b, 0), staged_leg(b, a, 1)});
  }
  if (o_.sm && ab.path == PeerPath::kP2p) ab.sm_bi = measure({peer_leg(a, b, true), peer_leg(b, a, true)});
  ba.ce_bi = ab.ce_bi;
  ba.sm_bi = ab.sm_bi;
}

HostResult P2pRunner::measure_host(int g) {
  HostResult r;
  r.gpu = g;
  if (o_.copy_engine) {
    r.h2d = measure({host_leg(g, true)});
    r.d2h = measure({host_leg(g, false)});
    r.bidir = measure({host_leg(g, true), host_leg(g, false)});
  }
  if (o_.latency) {
    r.latency = measure_latency(*slots_[static_cast<std::size_t>(g)],
                                reinterpret_cast<const std::uint64_t*>(host_chain_->data()), chain_, o_);
  }
  return r;
}

P2pReport P2pRunner::run() {
  P2pReport report;
  report.options = o_;
  for (const DiscoveredGpu& g : m_.gpus) report.gpus.push_back({g.device, g.name, g.pci_bus_id});
  report.timing = fmt::format(
      "bandwidth: CUDA events around a batch of {} copies of {} bytes, queued behind a spin kernel that holds the "
      "stream until all are queued; sample = batch time / {}; {} samples after {} warm-up batches. latency: CUDA "
      "events around one chase of {} dependent uncached 8-byte loads; sample = time / {}",
      o_.copies, size_.count(), o_.copies, o_.iters, o_.warmup, o_.latency_accesses, o_.latency_accesses);
  if (o_.host) {
    for (int g = 0; g < static_cast<int>(slots_.size()); ++g) report.hosts.push_back(measure_host(g));
  }
  const int n = static_cast<int>(slots_.size());
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b) report.pairs.push_back(measure_pair(a, b));
    }
  }
  for (PairResult& ab : report.pairs) {
    if (ab.src > ab.dst) continue;
    for (PairResult& ba : report.pairs) {
      if (ba.src == ab.dst && ba.dst == ab.src) measure_both_ways(ab, ba);
    }
  }
  for (const PairResult& p : report.pairs) {
    if (p.path == PeerPath::kStaged && p.src < p.dst) {
      report.notes.push_back(
          fmt::format("GPU{} <-> GPU{}: staged through pinned host memory ({}); SM copies and "
                      "latency need P2P and were not measured",
                      p.src, p.dst, p.why_staged));
    }
  }
  return report;
}

}  // namespace

P2pReport run_p2p(const P2pOptions& options, const MachineDiscovery& machine) {
  if (machine.gpus.empty()) throw RuntimeFailure("p2p needs at least one GPU");
  P2pRunner runner(options, machine);
  return runner.run();
}

}  // namespace commscale

#else

namespace commscale {

P2pReport run_p2p(const P2pOptions&, const MachineDiscovery&) {
  throw RuntimeFailure("this commscale was built without the GPU backend: p2p needs CUDA");
}

}  // namespace commscale

#endif
