#pragma once

// A thread that watches the other ranks of this node and notices when one ends while the job runs
// (killed with SIGKILL, crashed, out of memory). It uses no MPI: it reads /proc every `period`.
//
// What happens then is the owner's: the main thread sees lost() in its wait loops and reports the
// lost rank itself; if it does not within `grace` (it is inside a blocking call that will never
// return), the thread calls `last_resort` once. Ranks on other nodes are not watched: the launcher,
// their own node's watchdogs or --timeout end them (RELIABILITY.md, "A dead rank").

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace commscale {

struct WatchedRank {
  int rank = 0;
  int pid = 0;
  std::uint64_t start_ticks = 0;
  std::string host;
};

class PeerWatchdog {
 public:
  using LastResort = std::function<void(const std::vector<WatchedRank>& lost)>;

  PeerWatchdog(std::vector<WatchedRank> peers, std::chrono::milliseconds period, std::chrono::milliseconds grace,
               LastResort last_resort);
  ~PeerWatchdog();
  PeerWatchdog(const PeerWatchdog&) = delete;
  PeerWatchdog& operator=(const PeerWatchdog&) = delete;

  // The first rank found gone, if any (cheap: one atomic load).
  [[nodiscard]] std::optional<WatchedRank> lost() const noexcept;
  // Every watched rank that is gone now, by rank: when one rank dies, others that noticed it end too,
  // and a report should name them all rather than whichever was seen first.
  [[nodiscard]] std::vector<WatchedRank> gone_now() const;
  // The watched rank `rank`, if it is one.
  [[nodiscard]] std::optional<WatchedRank> peer(int rank) const;
  // The main thread reports the loss itself: no last resort.
  void acknowledge() noexcept { acknowledged_.store(true); }
  // Ranks may now end (the job is over, or an error is being reported): stop watching.
  void disarm() noexcept;
  [[nodiscard]] std::size_t watched() const noexcept { return peers_.size(); }
  [[nodiscard]] const std::vector<WatchedRank>& peers() const noexcept { return peers_; }

 private:
  void watch();
  // Waits `d` or until disarmed; false when disarmed.
  bool sleep_for(std::chrono::milliseconds d);

  std::vector<WatchedRank> peers_;
  std::chrono::milliseconds period_;
  std::chrono::milliseconds grace_;
  LastResort last_resort_;
  std::atomic<int> lost_{-1};  // index into peers_
  std::atomic<bool> acknowledged_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool armed_ = true;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace commscale
