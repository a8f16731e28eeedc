#pragma once

// The control plane's watch over a running job, beside the data path (RELIABILITY.md beside this file):
//
//  - a watchdog thread notices when another rank of this node ends (runtime/peer_watchdog.hpp); the
//    main thread's wait loops call poll_control_plane(), which then throws RankLostError (exit 5);
//  - every communicator counts the collectives it has started (GroupCalls, shared by the communicators
//    of one set of world ranks); when a wait times out, the rank asks the group's other ranks, over a
//    duplicate of MPI_COMM_WORLD and with a deadline of its own, how many they have started and what
//    they are waiting for, so the timeout names the ranks that did not arrive (or did not answer);
//  - a rank that has waited long (60 s by default, --wait-report) says so on stderr, with the same
//    diagnosis of the job, and again each time the wait has doubled (at least every 10 minutes): without
//    -T a stopped rank would otherwise hang the job in silence. Nothing is ended by it.
//
// One per process, made by run_on_all_ranks (cli/command.cpp); without one (unit and MPI tests) the
// functions below do nothing. Wait loops deep in the backends reach it through these functions rather
// than through every constructor: it is process state, like the identity in runtime/process.hpp.

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/mpi.hpp"
#include "runtime/peer_watchdog.hpp"

namespace commscale {

// The collectives this process has started on communicators over one set of world ranks, or the
// transfers it has started in one direction between two ranks of a group (its sends or its receives:
// the k-th send is the peer's k-th receive).
struct GroupCalls {
  std::vector<int> members;  // world ranks, in the communicator's order; sender first for a transfer
  std::uint64_t started = 0;
  std::string key;                          // what the other members are asked about
  std::string unit = "calls on this group";  // what `started` counts, for a diagnosis
};

class ControlPlane {
 public:
  // Collective over `world`: learns which ranks share this node and starts watching them.
  explicit ControlPlane(const MpiComm& world);
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // From the main thread's wait loops, as often as they like: throws RankLostError when a watched
  // rank has ended; now and then answers other ranks' questions.
  void poll();
  // Collective: every rank is done. A barrier (polled), then the watch stops so ranks may exit.
  void finish();
  // An error is being reported: ranks may end from now on.
  void stop_watching() noexcept;

  [[nodiscard]] std::shared_ptr<GroupCalls> group_calls(const std::vector<int>& members);
  [[nodiscard]] std::shared_ptr<GroupCalls> transfer_calls(const std::string& group, int from, int to);
  // Asks the other members of `group` how far they got; `call` is the 1-based number of the call
  // this rank waits for. Says which ranks did not arrive (and what they wait for instead) and which
  // did not answer, for a timeout message.
  [[nodiscard]] std::string diagnose(const GroupCalls& group, std::uint64_t call);

  // Bounds the waits of the control plane (wait_polled, finish): --timeout, but never below
  // kControlWaitFloor, as rank 0 works alone in some (writing results, the GEMM check). 0: none.
  void set_wait_limit(std::chrono::duration<double> timeout) noexcept;
  // Throws TimeoutError naming `what` and what every other rank is doing, once a wait that began at
  // `start` has passed the limit.
  void check_wait(std::chrono::steady_clock::time_point start, const std::string& what);
  // How long a wait goes on before this rank reports it (0: never).
  void set_wait_report(std::chrono::duration<double> after) noexcept { report_after_ = after; }
  // Work went on (an op completed or started): a wait reported from here on is a new one.
  void progressed() noexcept;

  // What the main thread waits for (null: it does not wait); setting it starts a new wait.
  void set_activity(const std::string* what) noexcept;
  [[nodiscard]] const std::string* activity() const noexcept { return activity_; }
  [[nodiscard]] std::size_t watched_ranks() const noexcept { return watchdog_ ? watchdog_->watched() : 0; }

  [[nodiscard]] static ControlPlane* current() noexcept;

 private:
  struct Outgoing {
    std::string data;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  struct Answer {
    long long started = -1;
    std::string activity;
  };
  void answer_questions();
  void send(std::string data, int to, int tag);
  void reap_sends();
  // Sends `key` (a group's key; "" for the whole job) as a question of a new round to `to`.
  void ask(const std::string& key, int to);
  // The answers of the latest round; an answer to an earlier one, come after its deadline, is dropped.
  [[nodiscard]] std::map<int, Answer> collect_answers(std::size_t expected);
  // Says on stderr how long this rank has waited, for what, and what the others do, once the wait has
  // gone on for report_after_ (and again each time it has doubled).
  void report_long_wait();
  [[nodiscard]] std::shared_ptr<GroupCalls> calls_for(GroupCalls fresh);
  // "rank 3", and what /proc says of it when it is on this node and stopped.
  [[nodiscard]] std::string silent_rank(int rank) const;
  // "; rank 3 (pid 42 on host n1) is stopped (...)" for this node's stopped ranks not in `named`.
  [[nodiscard]] std::string stopped_peers(const std::vector<int>& named) const;
  // What every other rank of the job says it is doing, for a control-plane wait that timed out.
  [[nodiscard]] std::string diagnose_job();

  int rank_ = 0;
  int size_ = 1;
  std::chrono::duration<double> timeout_{0.0};  // --timeout as given (0: none), for the wait reports
  std::chrono::duration<double> wait_limit_{0.0};
  std::chrono::duration<double> report_after_{60.0};
  std::chrono::steady_clock::time_point waiting_since_{};
  std::chrono::duration<double> next_report_{0.0};  // since waiting_since_
  unsigned round_ = 0;                              // of questions asked
  MPI_Comm control_ = MPI_COMM_NULL;
  std::unique_ptr<PeerWatchdog> watchdog_;
  bool watching_ = true;
  std::map<std::string, std::shared_ptr<GroupCalls>> groups_;  // by key
  std::list<Outgoing> outgoing_;
  const std::string* activity_ = nullptr;
  unsigned polls_ = 0;
  std::chrono::steady_clock::time_point last_answer_{};
};

// The functions the backends call; no-ops without a control plane. poll_control_plane() also throws
// InterruptedError once SIGINT or SIGTERM has arrived (runtime/interrupt.hpp).
void poll_control_plane();
// A counter shared by every communicator over `members` (a fresh one without a control plane).
[[nodiscard]] std::shared_ptr<GroupCalls> group_calls(const std::vector<int>& members);
// The counter of transfers from world rank `from` to `to` on the group named `group` (the sender
// counts its sends, the receiver its receives), for the diagnosis of a transfer that timed out.
[[nodiscard]] std::shared_ptr<GroupCalls> transfer_calls(const std::string& group, int from, int to);
// ControlPlane::set_wait_limit, where there is a control plane.
void set_control_plane_wait_limit(std::chrono::duration<double> timeout) noexcept;
// ControlPlane::set_wait_report, where there is a control plane.
void set_control_plane_wait_report(std::chrono::duration<double> after) noexcept;
// ControlPlane::progressed, where there is a control plane: for a wait loop whose WaitingFor spans work
// (a step's), each time something completes or starts.
void note_progress() noexcept;
// The diagnosis of a timed-out call, or "" without a control plane.
[[nodiscard]] std::string diagnose_group(const GroupCalls& group, std::uint64_t call);

// What the main thread waits for while in scope, for other ranks that ask ("a barrier of 4 ranks").
// `what` must outlive the scope.
class WaitingFor {
 public:
  explicit WaitingFor(const std::string& what) noexcept;
  ~WaitingFor();
  WaitingFor(const WaitingFor&) = delete;
  WaitingFor& operator=(const WaitingFor&) = delete;

 private:
  const std::string* previous_ = nullptr;
};

// Completes `requests` (MPI requests of the control plane), polling the control plane meanwhile, so a
// rank blocked here still notices a lost rank and answers questions. Bounded by the wait limit
// (ControlPlane::set_wait_limit): a rank stopped between steps must not leave the others here forever.
void wait_polled(std::vector<MPI_Request>& requests, const std::string& what);
void wait_polled(MPI_Request& request, const std::string& what);

// "0, 1, 2" or "0-7" for a contiguous range.
[[nodiscard]] std::string rank_list(const std::vector<int>& ranks);

}  // namespace commscale
