#include "runtime/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "runtime/proc_stat.hpp"
#include "runtime/process.hpp"

namespace commscale {
namespace {

// Only lock-free atomics may be touched from a signal handler.
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<int> g_signal{0};
std::atomic<int> g_sender{0};  // si_pid of the first signal; 0 from the kernel (a terminal's Ctrl-C)
std::atomic<int> g_reported{0};
// The grace alarm's message, made when the handlers are installed (a handler may not format or allocate).
std::array<char, 512> g_alarm_message{};
std::size_t g_alarm_message_size = 0;

// A repeated signal (a launcher and a wrapper both passing one on, Ctrl-C pressed twice) changes
// nothing: the grace alarm ends a rank that has not stopped by then.
void on_interrupt(int signal, siginfo_t* info, void*) {
  int none = 0;
  if (!g_signal.compare_exchange_strong(none, signal)) return;
  g_sender.store(info != nullptr ? static_cast<int>(info->si_pid) : 0);
  ::alarm(kInterruptGraceSeconds);
}

void on_alarm(int) {
  const int signal = g_signal.load();
  if (signal == 0) {  // not ours: what SIGALRM does by default
    ::signal(SIGALRM, SIG_DFL);
    ::raise(SIGALRM);
    return;
  }
  if (g_reported.load() == 0) {
    const ssize_t written = ::write(STDERR_FILENO, g_alarm_message.data(), g_alarm_message_size);
    (void)written;
  }
  ::_exit(kInterruptedBase + signal);
}

void install(int signal, void (*handler)(int, siginfo_t*, void*)) {
  struct sigaction action {};
  action.sa_sigaction = handler;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (::sigaction(signal, &action, nullptr) != 0) {
    throw RuntimeFailure(fmt::format("sigaction({}) failed: {}", signal_name(signal), std::strerror(errno)));
  }
}

// Launchers that pass a kill on to every process they started.
bool is_launcher(std::string_view name) {
  constexpr std::array<std::string_view, 8> kLaunchers = {"mpirun", "mpiexec", "orterun", "orted",
                                                          "prterun", "prted", "slurmstepd", "srun"};
  for (std::string_view launcher : kLaunchers) {
    if (name == launcher) return true;
  }
  return false;
}

}  // namespace

void install_interrupt_handlers(int world_rank) {
  // The rank is named: in a job's merged stderr, which rank was stuck is the first question.
  const auto end = fmt::format_to_n(g_alarm_message.data(), g_alarm_message.size() - 1,
                                    "commscale: interrupted, and rank {} (pid {} on host {}) did not get back to a "
                                    "wait within {} s to stop cleanly (it was inside a call that had not returned): "
                                    "ending it\n",
                                    world_rank, ::getpid(), host_name(), kInterruptGraceSeconds);
  g_alarm_message_size = end.size < g_alarm_message.size() ? end.size : g_alarm_message.size() - 1;
  install(SIGINT, &on_interrupt);
  install(SIGTERM, &on_interrupt);
  struct sigaction action {};
  action.sa_handler = &on_alarm;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGALRM, &action, nullptr);
}

int interrupt_signal() noexcept { return g_signal.load(std::memory_order_relaxed); }

void throw_if_interrupted() {
  const int signal = interrupt_signal();
  if (signal != 0) throw InterruptedError(signal, fmt::format("interrupted by {}", signal_name(signal)));
}

InterruptSource interrupt_source() {
  InterruptSource source;
  source.pid = g_sender.load();
  if (source.pid <= 0) return source;
  if (const std::optional<ProcessStatus> sender = read_process_status(source.pid)) source.name = sender->name;
  // The parent passes it on (a wrapper script), or a launcher above it does.
  int pid = static_cast<int>(::getppid());
  source.launcher = source.pid == pid;
  for (int depth = 0; depth < 32 && pid > 1 && !source.launcher; ++depth) {
    const std::optional<ProcessStatus> status = read_process_status(pid);
    if (!status) break;
    source.launcher = pid == source.pid && is_launcher(status->name);
    pid = status->ppid;
  }
  return source;
}

void interrupt_reported() noexcept { g_reported.store(1); }

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return fmt::format("signal {}", signal);
  }
}

}  // namespace commscale
