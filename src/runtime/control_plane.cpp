#include "runtime/control_plane.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "runtime/interrupt.hpp"
#include "runtime/proc_stat.hpp"
#include "runtime/process.hpp"

namespace commscale {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kAskTag = 1;     // payload: the group's key; asks how many calls the rank started on it
constexpr int kAnswerTag = 2;  // payload: "<started> <what the rank waits for>"
constexpr auto kAnswerDeadline = 5s;
constexpr auto kWatchPeriod = 200ms;
constexpr auto kLastResortGrace = 3s;
constexpr auto kControlWaitFloor = 30s;
constexpr auto kLongestReportGap = 600s;  // between two reports of one long wait

ControlPlane* g_current = nullptr;

std::string key_of(const std::vector<int>& members) { return fmt::format("{}", fmt::join(members, ",")); }

GroupCalls collective_calls(const std::vector<int>& members) {
  return GroupCalls{members, 0, key_of(members), "calls on this group"};
}

GroupCalls link_calls(const std::string& group, int from, int to) {
  return GroupCalls{{from, to}, 0, fmt::format("{}:{}>{}", group, from, to),
                    fmt::format("transfers from rank {} to rank {} on group {}", from, to, group)};
}

// "rank 3 (pid 4242 on host n1) ended ..." naming every rank found gone (a rank that noticed the loss
// first may have ended already too).
std::string lost_message(const std::vector<WatchedRank>& gone) {
  std::vector<std::string> names;
  for (const WatchedRank& r : gone) names.push_back(fmt::format("rank {} (pid {} on host {})", r.rank, r.pid, r.host));
  return fmt::format("{} ended while the job was running; the job cannot go on without {}", fmt::join(names, " and "),
                     gone.size() == 1 ? "it" : "them");
}

// The watchdog's last resort when the main thread sits in a call that will not return: report, ask MPI
// to end the job (from this thread, as an MPI_THREAD_FUNNELED program may not, hence a thread of its
// own), and end this rank in any case. A rank that a signal asked to stop is the exception: its peers
// ended because of the same signal, so the signal is the story, and its grace alarm, already set, ends
// this rank and says so (runtime/interrupt.hpp).
void end_this_rank(const std::vector<WatchedRank>& lost) noexcept {
  if (interrupt_signal() != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(kInterruptGraceSeconds + 2));  // the alarm fires first
  }
  try {
    fmt::print(stderr, "commscale: error on {}: {} (noticed by the watchdog while this rank was blocked)\n",
               process_identity(), lost_message(lost));
    std::fflush(stderr);
    std::thread([] { MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::kRankLost)); }).detach();
    std::this_thread::sleep_for(2s);
  } catch (...) {
  }
  std::_Exit(static_cast<int>(ExitCode::kRankLost));
}

// The other ranks of this node that this process can see in /proc (ranks in another pid namespace
// cannot be watched, and are not).
std::vector<WatchedRank> node_peers(const MpiComm& world) {
  const MpiComm node = world.split_shared_memory();
  const int pid = static_cast<int>(::getpid());
  const std::optional<ProcessStatus> me = read_process_status(pid);
  const std::vector<std::string> all =
      node.allgather(fmt::format("{} {} {} {}", world.rank(), pid, me ? me->start_ticks : 0, host_name()));
  std::vector<WatchedRank> peers;
  for (const std::string& text : all) {
    WatchedRank r;
    std::istringstream in(text);
    in >> r.rank >> r.pid >> r.start_ticks >> r.host;
    if (!in || r.rank == world.rank() || r.start_ticks == 0) continue;
    if (process_alive(r.pid, r.start_ticks)) peers.push_back(r);
  }
  return peers;
}

}  // namespace

ControlPlane::ControlPlane(const MpiComm& world) : rank_(world.rank()), size_(world.size()) {
  MPI_CHECK(MPI_Comm_dup(world.get(), &control_));
  MPI_CHECK(MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN));
  watchdog_ = std::make_unique<PeerWatchdog>(node_peers(world), kWatchPeriod, kLastResortGrace, &end_this_rank);
  g_current = this;
}

ControlPlane::~ControlPlane() {
  g_current = nullptr;
  watchdog_.reset();
  if (!MpiSession::active()) return;
  reap_sends();
  // An answer to a rank that is gone may never complete: let MPI finish it, and keep its buffer.
  static auto& kept = *new std::list<Outgoing>;  // reachable to the end, so no leak is reported
  for (Outgoing& o : outgoing_) MPI_Request_free(&o.request);
  kept.splice(kept.end(), outgoing_);
  MPI_Comm_free(&control_);
}

ControlPlane* ControlPlane::current() noexcept { return g_current; }

void ControlPlane::poll() {
  if (watching_ && watchdog_) {
    if (const std::optional<WatchedRank> lost = watchdog_->lost()) {
      watchdog_->acknowledge();
      watching_ = false;
      std::vector<WatchedRank> gone = watchdog_->gone_now();
      if (gone.empty()) gone.push_back(*lost);
      throw RankLostError(lost_message(gone));
    }
  }
  if ((++polls_ & 0x3F) != 0) return;
  const auto now = Clock::now();
  if (now - last_answer_ < 5ms) return;
  last_answer_ = now;
  answer_questions();
  report_long_wait();
}

void ControlPlane::finish() {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_CHECK(MPI_Ibarrier(control_, &request));
  const auto start = Clock::now();
  const std::string what = "the end of the run on every rank";
  const WaitingFor waiting(what);
  std::optional<Clock::time_point> lost_at;
  for (int polls = 0;; ++polls) {
    int done = 0;
    MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) break;
    throw_if_interrupted();
    check_wait(start, what);
    // A rank that passed the barrier may end before this one sees the barrier complete: only a rank
    // still missing after a while is lost.
    if (!lost_at && watchdog_ && watchdog_->lost()) lost_at = Clock::now();
    if (lost_at && Clock::now() - *lost_at > 2s) poll();
    if (!lost_at) {
      answer_questions();
      report_long_wait();
    }
    if (polls > 1000) std::this_thread::yield();
  }
  stop_watching();
}

void ControlPlane::stop_watching() noexcept {
  watching_ = false;
  if (watchdog_) watchdog_->disarm();
}

std::shared_ptr<GroupCalls> ControlPlane::calls_for(GroupCalls fresh) {
  std::shared_ptr<GroupCalls>& calls = groups_[fresh.key];
  if (!calls) calls = std::make_shared<GroupCalls>(std::move(fresh));
  return calls;
}

std::shared_ptr<GroupCalls> ControlPlane::group_calls(const std::vector<int>& members) {
  return calls_for(collective_calls(members));
}

std::shared_ptr<GroupCalls> ControlPlane::transfer_calls(const std::string& group, int from, int to) {
  return calls_for(link_calls(group, from, to));
}

void ControlPlane::set_activity(const std::string* what) noexcept {
  activity_ = what;
  progressed();
}

void ControlPlane::progressed() noexcept {
  waiting_since_ = Clock::now();
  next_report_ = report_after_;
}

void ControlPlane::report_long_wait() {
  if (activity_ == nullptr || report_after_.count() <= 0) return;
  const std::chrono::duration<double> waited = Clock::now() - waiting_since_;
  if (waited < next_report_) return;
  next_report_ = std::min<std::chrono::duration<double>>(waited * 2, waited + kLongestReportGap);
  const std::string what = *activity_;
  const std::string others = diagnose_job();  // asks every rank, at most kAnswerDeadline
  const std::string bound = timeout_.count() > 0
                                ? fmt::format("-T/--timeout ends the job after {} s", timeout_.count())
                                : "no -T/--timeout was given, so nothing ends the wait (-T SECONDS would end the job "
                                  "after that long, naming the ranks behind)";
  fmt::print(stderr, "commscale: still waiting on {}: {:.0f} s for {}{}{}; {}\n", process_identity(), waited.count(),
             what, others.empty() ? "" : "; ", others, bound);
  std::fflush(stderr);
}

void ControlPlane::ask(const std::string& key, int to) { send(fmt::format("{} {}", round_, key), to, kAskTag); }

void ControlPlane::send(std::string data, int to, int tag) {
  Outgoing& o = outgoing_.emplace_back(Outgoing{std::move(data), MPI_REQUEST_NULL});
  MPI_CHECK(MPI_Isend(o.data.data(), static_cast<int>(o.data.size()), MPI_CHAR, to, tag, control_, &o.request));
}

void ControlPlane::reap_sends() {
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    int done = 0;
    MPI_CHECK(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE));
    it = done ? outgoing_.erase(it) : std::next(it);
  }
}

void ControlPlane::answer_questions() {
  for (;;) {
    int asked = 0;
    MPI_Status status;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, kAskTag, control_, &asked, &status));
    if (!asked) break;
    int length = 0;
    MPI_CHECK(MPI_Get_count(&status, MPI_CHAR, &length));
    std::string question(static_cast<std::size_t>(length), '\0');
    MPI_CHECK(MPI_Recv(question.data(), length, MPI_CHAR, status.MPI_SOURCE, kAskTag, control_, MPI_STATUS_IGNORE));
    // "<round> <key>": the answer carries the round back, so the asker can tell it from a late one.
    const std::size_t space = question.find(' ');
    const std::string round = question.substr(0, space);
    const std::string key = space == std::string::npos ? "" : question.substr(space + 1);
    const auto known = groups_.find(key);
    const long long started = known == groups_.end() ? -1 : static_cast<long long>(known->second->started);
    const std::string doing = activity_ != nullptr ? "waiting for " + *activity_ : "running, not waiting";
    send(fmt::format("{} {} {}", round, started, doing), status.MPI_SOURCE, kAnswerTag);
  }
  reap_sends();
}

std::map<int, ControlPlane::Answer> ControlPlane::collect_answers(std::size_t expected) {
  std::map<int, Answer> answers;
  const auto end = Clock::now() + kAnswerDeadline;
  while (answers.size() < expected && Clock::now() < end) {
    int arrived = 0;
    MPI_Status status;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, kAnswerTag, control_, &arrived, &status));
    if (!arrived) {
      answer_questions();  // two ranks may be asking each other
      std::this_thread::sleep_for(1ms);
      continue;
    }
    int length = 0;
    MPI_CHECK(MPI_Get_count(&status, MPI_CHAR, &length));
    std::string text(static_cast<std::size_t>(length), '\0');
    MPI_CHECK(MPI_Recv(text.data(), length, MPI_CHAR, status.MPI_SOURCE, kAnswerTag, control_, MPI_STATUS_IGNORE));
    // "<round> <started> <activity>"
    char* end = nullptr;
    if (std::strtoul(text.c_str(), &end, 10) != round_) continue;  // to an earlier round, after its deadline
    const std::string answer = *end == ' ' ? std::string(end + 1) : std::string();
    Answer& a = answers[status.MPI_SOURCE];
    const std::size_t space = answer.find(' ');
    a.started = std::strtoll(answer.c_str(), nullptr, 10);
    a.activity = space == std::string::npos ? "" : answer.substr(space + 1);
  }
  return answers;
}

std::string ControlPlane::diagnose(const GroupCalls& group, std::uint64_t call) {
  ++round_;
  std::size_t asked = 0;
  for (int member : group.members) {
    if (member == rank_) continue;
    ask(group.key, member);
    ++asked;
  }
  const std::map<int, Answer> answers = collect_answers(asked);
  std::vector<std::string> behind;
  std::vector<std::string> silent;
  std::vector<int> named;
  for (int member : group.members) {
    if (member == rank_) continue;
    const auto it = answers.find(member);
    if (it == answers.end()) {
      silent.push_back(silent_rank(member));
      named.push_back(member);
    } else if (it->second.started < static_cast<long long>(call)) {
      behind.push_back(fmt::format("rank {} (has started {} {}; {})", member, std::max(0LL, it->second.started),
                                   group.unit, it->second.activity));
    }
  }
  std::string text;
  if (!behind.empty()) text = fmt::format("did not arrive: {}", fmt::join(behind, "; "));
  if (!silent.empty()) {
    text += fmt::format("{}did not answer within {} s (ended, or blocked outside commscale's waits): {}",
                        text.empty() ? "" : "; ", std::chrono::seconds(kAnswerDeadline).count(),
                        fmt::join(silent, ", "));
  }
  if (text.empty()) {
    text = fmt::format("every rank of the group ({}) had started call {}", rank_list(group.members), call);
  }
  return text + stopped_peers(named);
}

void ControlPlane::set_wait_limit(std::chrono::duration<double> timeout) noexcept {
  timeout_ = timeout;
  wait_limit_ = timeout.count() > 0 ? std::max<std::chrono::duration<double>>(timeout, kControlWaitFloor) : timeout;
}

void ControlPlane::check_wait(Clock::time_point start, const std::string& what) {
  if (wait_limit_.count() <= 0 || Clock::now() - start <= wait_limit_) return;
  throw TimeoutError(fmt::format("{} did not complete within {} s on {}; {}", what, wait_limit_.count(),
                                 process_identity(), diagnose_job()));
}

std::string ControlPlane::diagnose_job() {
  ++round_;
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) ask("", r);
  }
  const std::map<int, Answer> answers = collect_answers(static_cast<std::size_t>(size_ - 1));
  std::map<std::string, std::vector<int>> doing;
  std::vector<std::string> silent;
  std::vector<int> named;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const auto it = answers.find(r);
    if (it != answers.end()) {
      doing[it->second.activity].push_back(r);
      continue;
    }
    silent.push_back(silent_rank(r));
    named.push_back(r);
  }
  std::vector<std::string> parts;
  for (const auto& [activity, ranks] : doing) {
    parts.push_back(fmt::format("rank{} {}: {}", ranks.size() == 1 ? "" : "s", rank_list(ranks), activity));
  }
  if (!silent.empty()) {
    parts.push_back(fmt::format("did not answer within {} s (ended, or blocked outside commscale's waits): {}",
                                std::chrono::seconds(kAnswerDeadline).count(), fmt::join(silent, ", ")));
  }
  return fmt::format("{}{}", fmt::join(parts, "; "), stopped_peers(named));
}

std::string ControlPlane::stopped_peers(const std::vector<int>& named) const {
  if (!watchdog_) return "";
  std::string text;
  for (const WatchedRank& peer : watchdog_->peers()) {
    if (std::find(named.begin(), named.end(), peer.rank) != named.end()) continue;
    const std::optional<ProcessStatus> status = read_process_status(peer.pid);
    if (!status || status->start_ticks != peer.start_ticks || (status->state != 'T' && status->state != 't')) continue;
    text += fmt::format("; rank {} (pid {} on host {}) is stopped (SIGSTOP, or a debugger)", peer.rank, peer.pid,
                        peer.host);
  }
  return text;
}

std::string ControlPlane::silent_rank(int rank) const {
  const std::optional<WatchedRank> peer = watchdog_ ? watchdog_->peer(rank) : std::nullopt;
  if (!peer) return fmt::format("rank {}", rank);
  const std::optional<ProcessStatus> status = read_process_status(peer->pid);
  if (!status || status->start_ticks != peer->start_ticks) {
    return fmt::format("rank {} (pid {} on host {} has ended)", rank, peer->pid, peer->host);
  }
  if (status->state == 'T' || status->state == 't') {
    return fmt::format("rank {} (pid {} on host {} is stopped: SIGSTOP, or a debugger)", rank, peer->pid, peer->host);
  }
  return fmt::format("rank {}", rank);
}

void poll_control_plane() {
  throw_if_interrupted();
  if (g_current != nullptr) g_current->poll();
}

std::shared_ptr<GroupCalls> group_calls(const std::vector<int>& members) {
  if (g_current != nullptr) return g_current->group_calls(members);
  return std::make_shared<GroupCalls>(collective_calls(members));
}

std::shared_ptr<GroupCalls> transfer_calls(const std::string& group, int from, int to) {
  if (g_current != nullptr) return g_current->transfer_calls(group, from, to);
  return std::make_shared<GroupCalls>(link_calls(group, from, to));
}

std::string diagnose_group(const GroupCalls& group, std::uint64_t call) {
  return g_current != nullptr ? g_current->diagnose(group, call) : std::string();
}

WaitingFor::WaitingFor(const std::string& what) noexcept {
  if (g_current == nullptr) return;
  previous_ = g_current->activity();
  g_current->set_activity(&what);
}

WaitingFor::~WaitingFor() {
  if (g_current != nullptr) g_current->set_activity(previous_);
}

void set_control_plane_wait_limit(std::chrono::duration<double> timeout) noexcept {
  if (g_current != nullptr) g_current->set_wait_limit(timeout);
}

void set_control_plane_wait_report(std::chrono::duration<double> after) noexcept {
  if (g_current != nullptr) g_current->set_wait_report(after);
}

void note_progress() noexcept {
  if (g_current != nullptr) g_current->progressed();
}

void wait_polled(std::vector<MPI_Request>& requests, const std::string& what) {
  const WaitingFor waiting(what);
  const auto start = Clock::now();
  for (int polls = 0;; ++polls) {
    int done = 0;
    MPI_CHECK(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE));
    if (done) return;
    poll_control_plane();
    if (g_current != nullptr && (polls & 0xFF) == 0) g_current->check_wait(start, what);
    if (polls > 1000) std::this_thread::yield();
  }
}

void wait_polled(MPI_Request& request, const std::string& what) {
  std::vector<MPI_Request> requests{request};
  wait_polled(requests, what);
  request = requests[0];
}

std::string rank_list(const std::vector<int>& ranks) {
  if (ranks.size() > 2) {
    bool contiguous = true;
    for (std::size_t i = 1; i < ranks.size(); ++i) contiguous = contiguous && ranks[i] == ranks[i - 1] + 1;
    if (contiguous) return fmt::format("{}-{}", ranks.front(), ranks.back());
  }
  return fmt::format("{}", fmt::join(ranks, ", "));
}

}  // namespace commscale
