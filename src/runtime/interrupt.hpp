#pragma once

// SIGINT and SIGTERM (Ctrl-C, a launcher passing on a kill, a scheduler's time limit) end a run of the
// ranks cleanly rather than at once (RELIABILITY.md, "Signals"). The handler only records the signal, which
// is all it can safely do; the run's waits and loops call throw_if_interrupted() (poll_control_plane()
// does), unwind from there and leave every result line already written whole; run_on_all_ranks then
// says in one line what was kept and exits with 128 + the signal.
//
// A rank that does not get back to a wait within kInterruptGraceSeconds (it is inside a call that does
// not return) is ended by an alarm with that exit code, and says so.

#include <string>

#include "core/error.hpp"

namespace commscale {

inline constexpr unsigned kInterruptGraceSeconds = 3;
// The exit code of a run a signal stopped is this plus the signal's number (core/error.hpp).
inline constexpr int kInterruptedBase = 128;

class InterruptedError : public Error {
 public:
  InterruptedError(int signal, const std::string& message)
      : Error(static_cast<ExitCode>(kInterruptedBase + signal), message), signal_(signal) {}
  [[nodiscard]] int signal() const noexcept { return signal_; }

 private:
  int signal_;
};

// Installs the handlers for SIGINT and SIGTERM (and the grace alarm's, whose message names this
// process by `world_rank`, pid and host). Once per process, once MPI has started.
void install_interrupt_handlers(int world_rank);

// The signal that asked the run to stop, or 0. Cheap: one atomic load.
[[nodiscard]] int interrupt_signal() noexcept;
// Throws InterruptedError once a signal has arrived.
void throw_if_interrupted();

// Who sent the signal. `launcher`: the launcher that started this process (its parent, or an mpirun,
// orted or slurmstepd above it), which passes a kill on to every rank, or ends the job so after
// another rank's error; otherwise a user or a terminal sent it to this process alone.
struct InterruptSource {
  int pid = 0;       // 0: the kernel (a terminal's Ctrl-C)
  std::string name;  // the sender's command name, where /proc shows it
  bool launcher = false;
};
[[nodiscard]] InterruptSource interrupt_source();
// The interruption, or an error, has been reported: a grace alarm that still fires (the process is
// ending, and a call such as MPI_Abort did not return) ends the process quietly.
void interrupt_reported() noexcept;

// "SIGTERM", "SIGINT", or "signal N".
[[nodiscard]] std::string signal_name(int signal);

}  // namespace commscale
