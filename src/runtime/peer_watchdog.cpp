#include "runtime/peer_watchdog.hpp"

#include "runtime/proc_stat.hpp"

namespace commscale {

PeerWatchdog::PeerWatchdog(std::vector<WatchedRank> peers, std::chrono::milliseconds period,
                           std::chrono::milliseconds grace, LastResort last_resort)
    : peers_(std::move(peers)), period_(period), grace_(grace), last_resort_(std::move(last_resort)) {
  if (!peers_.empty()) thread_ = std::thread([this] { watch(); });
}

PeerWatchdog::~PeerWatchdog() {
  disarm();
  if (thread_.joinable()) thread_.join();
}

std::optional<WatchedRank> PeerWatchdog::lost() const noexcept {
  const int index = lost_.load(std::memory_order_acquire);
  if (index < 0) return std::nullopt;
  return peers_[static_cast<std::size_t>(index)];
}

std::optional<WatchedRank> PeerWatchdog::peer(int rank) const {
  for (const WatchedRank& p : peers_) {
    if (p.rank == rank) return p;
  }
  return std::nullopt;
}

std::vector<WatchedRank> PeerWatchdog::gone_now() const {
  std::vector<WatchedRank> gone;
  for (const WatchedRank& peer : peers_) {
    if (!process_alive(peer.pid, peer.start_ticks)) gone.push_back(peer);
  }
  return gone;
}

void PeerWatchdog::disarm() noexcept {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
  }
  wake_.notify_all();
}

bool PeerWatchdog::sleep_for(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mutex_);
  return !wake_.wait_for(lock, d, [this] { return !armed_; });
}

void PeerWatchdog::watch() {
  while (sleep_for(period_)) {
    for (std::size_t i = 0; i < peers_.size(); ++i) {
      if (process_alive(peers_[i].pid, peers_[i].start_ticks)) continue;
      lost_.store(static_cast<int>(i), std::memory_order_release);
      // Give the main thread the chance to report it from where it waits.
      if (!sleep_for(grace_) || acknowledged_.load()) return;
      if (last_resort_) last_resort_(gone_now());
      return;
    }
  }
}

}  // namespace commscale
